/**
 * The support console in AWS (docs/console.md): a PRIVATE API Gateway REST API — reachable only through the bank's
 * own VPC endpoints for execute-api, its resource policy refusing every other source — serving the page and its API
 * from two functions, behind a Cognito user pool federated to the bank's identity provider over SAML.
 *
 * - Every API route (functions/contracts/console-routes.ts API_ROUTES) has API Gateway's Cognito authorizer: it checks
 *   the ID token's signature, issuer and expiry before the function runs, and hands the function the token's claims;
 *   the function maps the provider's groups to console roles and allows each route to the roles that may.
 * - The page routes (PAGE_ROUTES) serve the same static files to everyone, before sign-in: no data, no secret. Their
 *   function may read nothing (its role writes its own logs alone).
 * - The API function reads the table and writes what the operations write (a resend, a proposal); it reads evidence
 *   as the evidence-reader role (the one role the evidence key lets decrypt), and writes its audit records as its own
 *   role (the bucket lets no role a person assumes write them).
 * - Why Cognito and not IAM: a browser cannot sign requests with IAM without credentials handed to it; Cognito gives
 *   the page a short-lived token from the bank's own sign-in (the bank's provider stays the source of who is who and
 *   in which group — mapped again at every sign-in), and API Gateway checks that token natively.
 */
import { writeFileSync } from 'node:fs';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  CognitoUserPoolsAuthorizer,
  EndpointType,
  Integration,
  IntegrationType,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestValidator,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import {
  ClientAttributes,
  FeaturePlan,
  Mfa,
  OAuthScope,
  ProviderAttribute,
  StringAttribute,
  UserPool,
  UserPoolClient,
  UserPoolClientIdentityProvider,
  UserPoolIdentityProviderSaml,
  UserPoolIdentityProviderSamlMetadata,
} from 'aws-cdk-lib/aws-cognito';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import {
  AnyPrincipal,
  Effect,
  PolicyDocument,
  PolicyStatement,
  type Role,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ConsoleEnvironment, ConsolePageEnvironment } from '../functions/contracts/console-environment.ts';
import { API_ROUTES, CLAIMS, PAGE_ROUTES } from '../functions/contracts/console-routes.ts';
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { consolePageFiles } from './bundling.ts';
import type { ConsoleSettings } from './console-settings.ts';
import { evidenceIndexEnvironment, grantIndexReads } from './evidence-index-table.ts';
import { grantSpoolReads } from './evidence-spool-table.ts';
import type { EvidenceStore } from './evidence-store.ts';
import { LOG_RETENTION, logsKeyOf } from './logs-key.ts';
import { controlTower, packs } from './nag-acknowledgements.ts';
import { NotifierFunction } from './notifier-function.ts';

/** The API's one stage: its name is the first segment of every URL (https://<api>.execute-api…/console/console). */
export const CONSOLE_STAGE = 'console';
/** The custom attribute the provider's groups are mapped to, as the console reads it (CLAIMS.groups). */
const GROUPS_ATTRIBUTE = CLAIMS.groups.replace(/^custom:/, '');

export interface SupportConsoleProps {
  readonly prefix: string;
  readonly metricNamespace: string;
  readonly settings: ConsoleSettings;
  readonly table: ITable;
  /** The evidence index's own table: read only (lib/evidence-index-table.ts). */
  readonly evidenceIndexTable: ITable;
  /** The evidence spool's own table: a minute's records before the sweeper rolls them (shown meanwhile). */
  readonly evidenceSpoolTable: ITable;
  readonly evidence: EvidenceStore;
  /** Four eyes as the operator API has it: the console proposes and approves through the same operations. */
  readonly approval: Pick<
    ConsoleEnvironment,
    'APPROVAL_REQUIRED_FOR' | 'PROPOSAL_HOURS' | 'INBOX_RETENTION_DAYS' | 'IDENTITY_CENTER_USER_NAME_IS_EMAIL'
  >;
}

export class SupportConsole extends Construct {
  readonly api: RestApi;
  readonly apiFunction: NotifierFunction;
  readonly pageFunction: NotifierFunction;
  readonly userPool: UserPool;
  /** The page's address, as staff open it through the bank's network. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: SupportConsoleProps) {
    super(scope, id);
    const { settings: s, prefix } = props;
    const stack = Stack.of(this);
    this.api = this.privateApi(prefix, s.vpcEndpointIds);
    // From the API's id and the literal stage name: the stage's own URL would make the page function wait for the
    // deployment, which waits for the page function's method.
    this.url = `https://${this.api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${CONSOLE_STAGE}/console`;
    const signIn = this.signIn(prefix, s);
    this.userPool = signIn.pool;

    this.pageFunction = new NotifierFunction(this, 'PageFunction', {
      entry: 'console-page/index.ts',
      description: `${prefix} support console: the page (static files, no data)`,
      metricNamespace: props.metricNamespace,
      memorySize: 256,
      timeout: Duration.seconds(5),
      environment: { CONSOLE_SIGN_IN: JSON.stringify(signIn.config) } satisfies ConsolePageEnvironment,
      afterBundling: pageFiles,
    });
    this.apiFunction = new NotifierFunction(this, 'ApiFunction', {
      entry: 'console/index.ts',
      description: `${prefix} support console: look-ups, reveal, proposals and approvals (the operations)`,
      metricNamespace: props.metricNamespace,
      timeout: Duration.seconds(29),
      environment: {
        TABLE_NAME: props.table.tableName,
        ...evidenceIndexEnvironment(props.evidenceIndexTable),
        ...props.evidence.environment,
        ...props.approval,
        CONSOLE_GROUPS: JSON.stringify(s.groups),
        EVIDENCE_READER_ROLE_ARN: props.evidence.readerRole.roleArn,
        AUDIT_SEAL_KEY_ARN: props.evidence.auditSealKey.keyArn,
      } satisfies ConsoleEnvironment,
    });
    this.grantApi(props);
    this.routes(signIn.pool);
    this.acknowledge();
  }

  /** What the rule sets report of a private, authorized, throttled console, and why it stands. */
  private acknowledge(): void {
    const stage = this.api.deploymentStage;
    const onStage: [string[], string][] = [
      [
        ['AwsSolutions-APIG3', ...packs('APIGWAssociatedWithWAF')],
        "A private API: API Gateway's resource policy refuses every request that does not come through the bank's own VPC endpoints, every data route needs a signed-in person's token, and the stage throttles at 20 requests a second.",
      ],
      [
        [
          'AwsSolutions-APIG6',
          ...packs('APIGWExecutionLoggingEnabled'),
          controlTower('api_gw_v1_execution_logging_enabled_check'),
        ],
        'Execution logs would record request and answer bodies: customer ids, reasons, contact points shown in full. The access log records who called which route with what status, and the function logs who asked for what; every action is in the audit log.',
      ],
      [
        packs('APIGWCacheEnabledAndEncrypted'),
        'Every answer is for one signed-in person and must be current (a proposal just approved, a notice just resent): answers are marked no-store, and no stage cache holds customer data.',
      ],
      [
        packs('APIGWSSLEnabled'),
        'The client certificate authenticates API Gateway to an HTTP backend; this API has none: every route is a Lambda proxy integration that API Gateway invokes with its own IAM permission.',
      ],
    ];
    for (const [ids, reason] of onStage) for (const id of ids) Validations.of(stage).acknowledge({ id, reason });
    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG8',
      reason:
        "Threat protection guards the pool's own password sign-ins, and this pool has none: every person signs in at the bank's identity provider (SAML), whose own risk checks and MFA apply; the pool only issues the tokens.",
    });
    for (const fn of [this.apiFunction, this.pageFunction]) {
      Validations.of(fn.role as Role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'X-Ray PutTraceSegments and PutTelemetryRecords, which have no resource-level permissions.',
      });
      Validations.of(fn).acknowledge({
        id: 'Serverless-LambdaDLQ',
        reason:
          'Invoked synchronously by API Gateway for a person at the page, who sees every failure as it happens: nothing to dead-letter.',
      });
    }
  }

  private privateApi(prefix: string, endpoints: readonly string[]): RestApi {
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: LOG_RETENTION,
      encryptionKey: logsKeyOf(this),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const source = { 'aws:SourceVpce': [...endpoints] };
    return new RestApi(this, 'Api', {
      restApiName: `${prefix}-console`,
      description: 'notifier support console (private: the bank network only)',
      endpointConfiguration: { types: [EndpointType.PRIVATE] },
      // Only requests through the bank's VPC endpoints: everything else is refused before any authorizer runs.
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            principals: [new AnyPrincipal()],
            actions: ['execute-api:Invoke'],
            resources: ['execute-api:/*'],
            conditions: { StringEquals: source },
          }),
          new PolicyStatement({
            effect: Effect.DENY,
            principals: [new AnyPrincipal()],
            actions: ['execute-api:Invoke'],
            resources: ['execute-api:/*'],
            conditions: { StringNotEquals: source },
          }),
        ],
      }),
      cloudWatchRole: false,
      deployOptions: {
        stageName: CONSOLE_STAGE,
        tracingEnabled: true,
        metricsEnabled: true,
        // Execution logs would hold request bodies (customer ids, reasons): access logs name who and what instead.
        loggingLevel: MethodLoggingLevel.OFF,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        // A support desk, not a batch job: a runaway script is stopped here.
        throttlingRateLimit: 20,
        throttlingBurstLimit: 40,
      },
    });
  }

  /** The user pool (tokens only: no password, no self sign-up), the bank's SAML provider, the page's app client. */
  private signIn(prefix: string, s: ConsoleSettings) {
    const stack = Stack.of(this);
    const pool = new UserPool(this, 'Users', {
      userPoolName: `${prefix}-console`,
      selfSignUpEnabled: false,
      featurePlan: FeaturePlan.ESSENTIALS,
      // Nobody signs in with a password here; were a user ever made by hand, these hold.
      passwordPolicy: {
        minLength: 14,
        requireDigits: true,
        requireLowercase: true,
        requireUppercase: true,
        requireSymbols: true,
      },
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      customAttributes: { [GROUPS_ATTRIBUTE]: new StringAttribute({ mutable: true, maxLen: 2048 }) },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const provider = new UserPoolIdentityProviderSaml(this, 'Bank', {
      userPool: pool,
      name: s.saml.name,
      metadata: UserPoolIdentityProviderSamlMetadata.url(s.saml.metadataUrl),
      // Mapped again at every sign-in: who is in which group is the bank's provider's to say, never this pool's.
      attributeMapping: {
        email: ProviderAttribute.other(s.saml.emailAttribute),
        fullname: ProviderAttribute.other(s.saml.nameAttribute),
        custom: { [CLAIMS.groups]: ProviderAttribute.other(s.saml.groupsAttribute) },
      },
    });
    const domain = pool.addDomain('SignIn', { cognitoDomain: { domainPrefix: s.signInDomainPrefix } });
    const client = new UserPoolClient(this, 'PageClient', {
      userPool: pool,
      userPoolClientName: `${prefix}-console-page`,
      // A page cannot keep a secret: the authorization code flow with PKCE.
      generateSecret: false,
      authFlows: {},
      oAuth: {
        flows: { authorizationCodeGrant: true },
        // No aws.cognito.signin.user.admin: a person's token cannot change their own attributes (their groups).
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL, OAuthScope.PROFILE],
        callbackUrls: [this.url],
        logoutUrls: [this.url],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.custom(provider.providerName)],
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.minutes(s.sessionMinutes),
      accessTokenValidity: Duration.minutes(s.sessionMinutes),
      refreshTokenValidity: Duration.minutes(Math.max(60, s.sessionMinutes)),
      enableTokenRevocation: true,
      writeAttributes: new ClientAttributes()
        .withStandardAttributes({ email: true, fullname: true })
        .withCustomAttributes(GROUPS_ATTRIBUTE),
    });
    client.node.addDependency(provider);
    const base = `https://${s.signInDomainPrefix}.auth.${stack.region}.amazoncognito.com`;
    const config = {
      kind: 'cognito',
      authorizeUrl: `${base}/oauth2/authorize`,
      tokenUrl: `${base}/oauth2/token`,
      logoutUrl: `${base}/logout`,
      clientId: client.userPoolClientId,
      identityProvider: provider.providerName,
    };
    domain.node.addDependency(pool);
    return { pool, config };
  }

  /**
   * Least privilege: the table actions the operations use, evidence read through the evidence-reader role alone, audit
   * records written (and sealed) as the function's own role.
   */
  private grantApi(props: SupportConsoleProps): void {
    const fn = this.apiFunction;
    // Reads: an event (Query by its key), a customer's preferences (GetItem), a proposal. Writes: a resend's
    // UpdateItem and its earlier send's record (PutItem), a proposal (PutItem) and its decision (UpdateItem).
    fn.useTable(props.table, ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    fn.useTable(props.table, ['dynamodb:Query'], { index: TABLE_SCHEMA.userIndex.indexName });
    grantIndexReads(fn, props.evidenceIndexTable);
    grantSpoolReads(fn, props.evidenceSpoolTable);
    const reader = props.evidence.readerRole as Role;
    props.evidence.grantConsole(fn);
    fn.addToRolePolicy(new PolicyStatement({ actions: ['sts:AssumeRole'], resources: [reader.roleArn] }));
    reader.assumeRolePolicy?.addStatements(
      new PolicyStatement({
        actions: ['sts:AssumeRole'],
        principals: [fn.role as Role],
      }),
    );
  }

  /**
   * A Lambda proxy integration, with one permission for the whole API (API Gateway of this account, this API's ARN)
   * instead of CDK's two per method.
   */
  private proxyTo(fn: NotifierFunction): Integration {
    const stack = Stack.of(this);
    fn.addPermission('InvokedByTheConsoleApi', {
      principal: new ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: this.api.arnForExecuteApi(),
      sourceAccount: stack.account,
    });
    return new Integration({
      type: IntegrationType.AWS_PROXY,
      integrationHttpMethod: 'POST',
      uri: `arn:${stack.partition}:apigateway:${stack.region}:lambda:path/2015-03-31/functions/${fn.functionArn}/invocations`,
    });
  }

  private routes(pool: UserPool): void {
    const authorizer = new CognitoUserPoolsAuthorizer(this, 'Authorizer', {
      cognitoUserPools: [pool],
      identitySource: 'method.request.header.Authorization',
      resultsCacheTtl: Duration.minutes(5),
    });
    const validator = new RequestValidator(this, 'Validator', {
      restApi: this.api,
      validateRequestBody: true,
      validateRequestParameters: true,
    });
    const page = this.proxyTo(this.pageFunction);
    const api = this.proxyTo(this.apiFunction);
    for (const r of PAGE_ROUTES) {
      const method = this.api.root.resourceForPath(r.resource).addMethod(r.method, page, {
        authorizationType: AuthorizationType.NONE,
        requestValidator: validator,
      });
      Validations.of(method).acknowledge(
        {
          id: 'AwsSolutions-APIG4',
          reason:
            'The page itself: the same static files for everyone (no data, no secret), which a browser must load before it can sign in; reachable only through the bank VPC endpoints (the API resource policy), served by a function that may read nothing.',
        },
        {
          id: 'AwsSolutions-COG4',
          reason:
            'The page itself, before sign-in: no data, no secret; every API route has the Cognito user pool authorizer.',
        },
      );
    }
    for (const r of API_ROUTES) {
      this.api.root.resourceForPath(r.resource).addMethod(r.method, api, {
        authorizationType: AuthorizationType.COGNITO,
        authorizer,
        requestValidator: validator,
      });
    }
  }
}

/**
 * The page's files beside the page function's bundle: app.ts and what it imports compiled for browsers by the
 * esbuild the project installs, the others copied as they are (lib/bundling.ts CONSOLE_PAGE_BUNDLE).
 */
function pageFiles(outputDir: string): void {
  for (const [name, text] of consolePageFiles()) writeFileSync(`${outputDir}/${name}`, text);
}
