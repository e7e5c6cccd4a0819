/**
 * The operator API (docs/operations.md "The operator API"): every operator action on a deployed stage — resend,
 * repair, replay, lifting a suppression, export, erasure, and proposing, approving or rejecting one — is a request to
 * this API, done by the operator function with its own role and audited with the caller AWS verified. API Gateway
 * (REST) authorizes every route with IAM: a request is SigV4-signed by the operator's own credentials, and the
 * function reads who signed it from the request context, never from the request (functions/operator-api/).
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  LambdaRestApi,
  LogGroupLogDestination,
  MethodLoggingLevel,
} from 'aws-cdk-lib/aws-apigateway';
import { AnyPrincipal, Effect, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnPermission } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Bucket, CfnBucket } from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import type { OperatorEnvironment } from '../functions/contracts/environment.ts';
import { TABLE_SCHEMA } from '../functions/contracts/table-schema.ts';
import { formatApprovalKinds } from '../functions/domain/approval.ts';
import { formatChannelPolicies } from '../functions/domain/delivery-policy.ts';
import { IDENTITY_CENTER_ROLE_PREFIX } from '../functions/domain/identity.ts';
import { evidenceIndexEnvironment, grantIndexReads } from './evidence-index-table.ts';
import { grantSpoolReads } from './evidence-spool-table.ts';
import type { FunctionPartProps } from './function-parts.ts';
import { LOG_RETENTION, logsKeyOf } from './logs-key.ts';
import { NotifierFunction } from './notifier-function.ts';

export interface OperatorApi {
  readonly fn: NotifierFunction;
  readonly api: LambdaRestApi;
}

export function createOperatorApi(
  p: FunctionPartProps,
  ingest: NotifierFunction,
  failedBatches: Bucket,
  /** A stage in two regions: its settings, whose `regionCommandPrincipals` alone may run the region commands. */
  regions?: { readonly regionCommandPrincipals?: readonly string[] | undefined },
): OperatorApi {
  const { stack, settings: s, table } = p;
  const environment: OperatorEnvironment = {
    TABLE_NAME: table.tableName,
    ...evidenceIndexEnvironment(p.evidenceIndexTable),
    INBOX_RETENTION_DAYS: String(s.inboxRetentionDays),
    ...p.evidence.environment,
    INGEST_FUNCTION_NAME: ingest.functionName,
    FAILED_BATCHES_BUCKET: failedBatches.bucketName,
    APPROVAL_REQUIRED_FOR: formatApprovalKinds(s.approvalRequiredFor),
    PROPOSAL_HOURS: String(s.proposalHours),
    ...(s.identityCenterUserNameIsEmail ? { IDENTITY_CENTER_USER_NAME_IS_EMAIL: 'true' as const } : {}),
    AUDIT_SEAL_KEY_ARN: p.evidence.auditSealKey.keyArn,
    CHANNEL_POLICIES: formatChannelPolicies(s.deliveryPolicy),
  };
  const fn = new NotifierFunction(stack, 'Operator', {
    entry: 'operator-api/index.ts',
    description:
      'notifier: the operator actions, each previewed, approved where set and audited with the verified caller',
    metricNamespace: p.metricNamespace,
    // A replay of a parked batch waits for ingest (up to its own two minutes); API Gateway answers after 29 s at most.
    timeout: Duration.minutes(3),
    environment,
  });
  // Reads of any event, customer or proposal; the actions' conditional writes (resend, erasure, suppression lift,
  // a proposal's decision); the byUser index for a customer's events, the incidents index for the quarantined and
  // refused lists. No Scan: nothing an operator does reads the whole table.
  fn.useTable(table, [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
  ]);
  fn.useTable(table, ['dynamodb:Query'], { index: TABLE_SCHEMA.userIndex.indexName });
  fn.useTable(table, ['dynamodb:Query'], { index: TABLE_SCHEMA.incidentIndex.indexName });
  p.evidence.grantOperator(fn);
  // A customer's or an event's evidence (export, evidence, erasure's report of what is kept): the index, read only.
  grantIndexReads(fn, p.evidenceIndexTable);
  grantSpoolReads(fn, p.evidenceSpoolTable);
  // Replays and repairs go through ingest, as the MSK mapping would deliver them.
  fn.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [ingest.functionArn] }));
  // The parked batches a replay reads (their objects are the mapping's, under the stack's key when one is set).
  fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [failedBatches.bucketArn] }));
  fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [failedBatches.arnForObjects('*')] }));
  const api = restApi(stack, p.prefix, fn, regions?.regionCommandPrincipals);
  // The construct's own output: the stack names its outputs itself (OperatorApiUrl, lib/stack-outputs.ts).
  api.node.tryRemoveChild('Endpoint');
  acknowledge(fn, api, failedBatches);
  return { fn, api };
}

function restApi(
  stack: Stack,
  prefix: string,
  fn: NotifierFunction,
  regionCommandPrincipals: readonly string[] | undefined,
): LambdaRestApi {
  const accessLogs = new LogGroup(stack, 'OperatorApiAccessLogs', {
    retention: LOG_RETENTION,
    encryptionKey: logsKeyOf(stack),
    removalPolicy: RemovalPolicy.RETAIN,
  });
  return new LambdaRestApi(stack, 'OperatorApi', {
    restApiName: `${prefix}-operator`,
    description: 'notifier operator actions: IAM authorization on every route',
    handler: fn,
    proxy: true,
    // Every route, the root's included: a request AWS did not authenticate never reaches the function.
    defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
    policy: impostorsRefused(stack, regionCommandPrincipals),
    endpointTypes: [EndpointType.REGIONAL],
    // Execution logging needs an account-wide API Gateway role; the access log below names every caller.
    cloudWatchRole: false,
    deployOptions: {
      stageName: 'ops',
      tracingEnabled: true,
      loggingLevel: MethodLoggingLevel.OFF,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: AccessLogFormat.jsonWithStandardFields({
        caller: true,
        httpMethod: true,
        ip: true,
        protocol: true,
        requestTime: true,
        resourcePath: true,
        responseLength: true,
        status: true,
        user: true,
      }),
      throttlingRateLimit: 20,
      throttlingBurstLimit: 40,
    },
  });
}

/**
 * Four eyes takes an IAM Identity Center role session's name as its person (domain/identity.ts personOfIamArn): AWS
 * sets it to the user's name, and creates those roles under its reserved path. A role someone named like one,
 * anywhere else, could be assumed with any session name: refused here, before the function runs. Nothing else is
 * granted by this policy: the callers' own IAM policies allow the API (same account).
 */
function impostorsRefused(stack: Stack, regionCommandPrincipals: readonly string[] | undefined): PolicyDocument {
  const roles = (pattern: string) => `arn:${stack.partition}:iam::*:role/${pattern}`;
  return new PolicyDocument({
    statements: [
      // The region commands (promote, demote — the kill switch for every send —, reconcile): only the roles the
      // settings name, whatever a caller's own IAM policy allows (lib/regions-settings.ts regionCommandPrincipals).
      ...(regionCommandPrincipals === undefined
        ? []
        : [
            new PolicyStatement({
              sid: 'RegionCommandsOnlyByTheirRoles',
              effect: Effect.DENY,
              principals: [new AnyPrincipal()],
              actions: ['execute-api:Invoke'],
              resources: ['execute-api:/*/POST/regions/*'],
              conditions: { ArnNotLike: { 'aws:PrincipalArn': [...regionCommandPrincipals] } },
            }),
          ]),
      new PolicyStatement({
        sid: 'NoImpostorIdentityCenterRoles',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['execute-api:Invoke'],
        resources: ['execute-api:/*'],
        conditions: {
          ArnLike: { 'aws:PrincipalArn': roles(`*${IDENTITY_CENTER_ROLE_PREFIX}*`) },
          ArnNotLike: { 'aws:PrincipalArn': roles('aws-reserved/sso.amazonaws.com/*') },
        },
      }),
    ],
  });
}

/** The three cdk-nag compliance packs name the same check with their own prefix. */
const inEveryPack = (rule: string) => ['PCI.DSS.321', 'NIST.800.53.R5', 'HIPAA.Security'].map((p) => `${p}-${rule}`);

function acknowledge(fn: NotifierFunction, api: LambdaRestApi, failedBatches: Bucket): void {
  const stage = api.deploymentStage;
  const ack = (on: IConstruct, id: string, reason: string) => Validations.of(on).acknowledge({ id, reason });
  ack(
    api,
    'AwsSolutions-APIG2',
    'The function validates every request body against its action (functions/operator/requests.ts) and refuses it as INVALID with what is wrong.',
  );
  const iamOnly =
    'IAM authorization on every route: an unsigned request is refused by API Gateway before anything runs; the callers are the bank’s operators, signing with their own IAM principals.';
  for (const id of ['AwsSolutions-APIG3', 'AwsSolutions-COG4', ...inEveryPack('APIGWAssociatedWithWAF')]) {
    ack(api, id, iamOnly);
    ack(stage, id, iamOnly);
  }
  const noExecutionLog =
    "Execution logging needs the account's API Gateway CloudWatch role (account-wide); the access log names every caller and status, and the function logs every request with its verified caller.";
  for (const id of [
    'AwsSolutions-APIG6',
    ...inEveryPack('APIGWExecutionLoggingEnabled'),
    'cdk-validator-cfnguard::api_gw_v1_execution_logging_enabled_check',
  ]) {
    ack(stage, id, noExecutionLog);
  }
  // API Gateway's permissions to invoke the function: the service principal, only from this API's own ARN (a
  // Fn::Join the guard rule cannot read as a local reference).
  for (const c of api.node.findAll()) {
    if (c instanceof CfnPermission) {
      ack(
        c,
        'cdk-validator-cfnguard::lambda_function_public_access_prohibited_check',
        'apigateway.amazonaws.com, with the SourceArn of this API (execute-api:/<api id>/…): no other API, account or principal may invoke the function this way.',
      );
    }
  }
  for (const id of inEveryPack('APIGWCacheEnabledAndEncrypted')) {
    ack(
      stage,
      id,
      'No cache: every answer is a decision on the current state, and caching one would serve a stale refusal or outcome.',
    );
  }
  for (const id of inEveryPack('APIGWSSLEnabled')) {
    ack(
      stage,
      id,
      'The integration is a Lambda function, not an HTTP backend: there is no backend a client certificate would authenticate API Gateway to.',
    );
  }
  ack(
    fn,
    'Serverless-LambdaDLQ',
    'Invoked synchronously by API Gateway; the operator sees the answer: nothing to dead-letter.',
  );
  ack(
    fn.role as IConstruct,
    'AwsSolutions-IAM5[Resource::*]',
    'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing): no resource-level permissions.',
  );
  const batchesId = Stack.of(fn).getLogicalId(failedBatches.node.defaultChild as CfnBucket);
  ack(
    fn.role as IConstruct,
    `AwsSolutions-IAM5[Resource::<${batchesId}.Arn>/*]`,
    'Parked batches are keyed by the time the mapping gave up on them: a replay reads the ones it lists, nothing else (GetObject only).',
  );
}
