/**
 * The evidence store's key and the two roles its policy names (docs/evidence-and-privacy.md "Who may do what"):
 * - Always a key of its own, never the bank's table key: whoever administers the data key must not thereby read
 *   seven years of what customers received, and the evidence key must outlive any change to the table's.
 * - Administration without use: the account (through IAM) may manage the key but not decrypt with it. Writers may
 *   only encrypt, through S3 (kms:GenerateDataKey, kms:ViaService). Decrypt is for the evidence-reader role alone,
 *   through S3 (and for S3's replication role when replication is on, which only copies).
 * - Nobody but the break-glass role may schedule the key's deletion, disable it or stop its rotation; nobody but the
 *   break-glass role and a CloudFormation deploy of this stack may change its policy. Deleting or disabling this key
 *   would make every locked object unreadable: Object Lock guards bytes, not the key that opens them.
 * - Grants only for AWS services (kms:GrantIsForAWSResource): a grant cannot hand Decrypt to a person.
 * Every use of the break-glass role and every change to the key is reported (lib/protection-watch.ts).
 */
import { DefaultStackSynthesizer, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AccountRootPrincipal,
  AnyPrincipal,
  ArnPrincipal,
  Effect,
  PolicyDocument,
  PolicyStatement,
  Role,
} from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { assumableBy } from './named-principals.ts';

/** What the account's administrators may do with the key: manage it, never use it. */
export const KEY_ADMINISTRATION_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListAliases',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RevokeGrant',
  'kms:RetireGrant',
  'kms:RotateKeyOnDemand',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
  // Allowed here and denied below to all but the break-glass role: the Deny is what an auditor reads.
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:ScheduleKeyDeletion',
] as const;
/** What would make every locked object unreadable, or the key quietly weaker: the break-glass role's alone. */
export const KEY_DESTRUCTION_ACTIONS = ['kms:ScheduleKeyDeletion', 'kms:DisableKey', 'kms:DisableKeyRotation'] as const;

/**
 * The role CloudFormation deploys this stack with (the CDK bootstrap's execution role), when the stack uses the
 * default synthesizer: a policy change through a reviewed deploy of this stack is allowed; by anyone else, denied.
 */
export function deployRoleArn(stack: Stack): string | undefined {
  const synthesizer = stack.synthesizer;
  if (!(synthesizer instanceof DefaultStackSynthesizer)) return undefined;
  // The synthesizer writes the partition as CloudFormation's placeholder, for Fn::Sub; a condition needs the value.
  const placeholder = ['$', '{AWS::Partition}'].join('');
  return synthesizer.cloudFormationExecutionRoleArn.replace(placeholder, stack.partition);
}

/**
 * A resource's policy changes only by break glass or a CloudFormation deploy of this stack (its execution role): an
 * administrator cannot lift a guard or grant themselves a use. Without a known deploy role (a synthesizer other than
 * the default) `deployer` is undefined, and only break glass may: the caller decides whether that is acceptable.
 */
export const onlyBreakGlassOrDeployChangesThePolicy = (
  actions: readonly string[],
  breakGlass: readonly string[],
  deployer: string | undefined,
) =>
  new PolicyStatement({
    sid: 'OnlyBreakGlassOrThisStacksDeployChangesThePolicy',
    effect: Effect.DENY,
    principals: [new AnyPrincipal()],
    actions: [...actions],
    resources: ['*'],
    conditions: {
      ArnNotEquals: { 'aws:PrincipalArn': deployer === undefined ? [...breakGlass] : [...breakGlass, deployer] },
    },
  });

/** The statement Control Tower's CT.KMS.PR.3 asks of every key: grants only for AWS services. */
export const grantsOnlyForAwsServices = () =>
  new PolicyStatement({
    sid: 'GrantsOnlyForAwsServices',
    effect: Effect.DENY,
    principals: [new AnyPrincipal()],
    actions: ['kms:CreateGrant'],
    resources: ['*'],
    conditions: { BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' } },
  });

/** Nobody but the break-glass role may schedule a key's deletion, disable it or stop its rotation. */
export const onlyBreakGlassDisablesOrDeletes = (breakGlass: string[]) =>
  new PolicyStatement({
    sid: 'OnlyBreakGlassDisablesOrDeletes',
    effect: Effect.DENY,
    principals: [new AnyPrincipal()],
    actions: [...KEY_DESTRUCTION_ACTIONS],
    resources: ['*'],
    conditions: { ArnNotEquals: { 'aws:PrincipalArn': breakGlass } },
  });

/** The account administers a key through IAM, and never uses it: no Decrypt, no GenerateDataKey, no grant. */
export const administrationWithoutUse = () =>
  new PolicyStatement({
    sid: 'AdministrationWithoutUse',
    principals: [new AccountRootPrincipal()],
    actions: [...KEY_ADMINISTRATION_ACTIONS],
    resources: ['*'],
  });

/** Who may assume the two roles (settings `evidenceReaders`, `breakGlassPrincipals`); absent: the account. */
export interface EvidenceRoleAssumers {
  readonly readers?: readonly string[] | undefined;
  readonly breakGlass?: readonly string[] | undefined;
}

export interface EvidenceKeys {
  readonly key: Key;
  /** Decrypts evidence through S3: the role `ops evidence`, `customer`, `export` and `audit` read with. */
  readonly readerRole: Role;
  /** May destroy or disable the key and change any protection: every use of it is reported to the operators. */
  readonly breakGlassRole: Role;
}

/** The key and its two roles, created in `scope` (the evidence store: `Key` keeps the logical id it always had). */
export function createEvidenceKey(scope: Construct, prefix: string, who: EvidenceRoleAssumers = {}): EvidenceKeys {
  const stack = Stack.of(scope);
  const viaS3 = { StringEquals: { 'kms:ViaService': `s3.${stack.region}.amazonaws.com` } };
  // Assumable by the roles the settings name (lib/named-principals.ts); every assumption is reported.
  const readerRole = new Role(scope, 'ReaderRole', {
    assumedBy: assumableBy(who.readers, false),
    description: `${prefix}: reads the evidence store (the only role that may decrypt it); for those who answer disputes`,
    maxSessionDuration: Duration.hours(1),
  });
  // A source identity names the person behind a shared role in CloudTrail, on every call of the session.
  const breakGlassRole = new Role(scope, 'BreakGlassRole', {
    assumedBy: assumableBy(who.breakGlass, true),
    description: `${prefix}: break glass only. May disable or delete the evidence key and change the evidence protections; every use is reported`,
    maxSessionDuration: Duration.hours(1),
  });
  const breakGlass = [breakGlassRole.roleArn];
  const deployer = deployRoleArn(stack);
  const key = new Key(scope, 'Key', {
    description: `${prefix} evidence store: the exact messages sent and what the providers reported`,
    enableKeyRotation: true,
    // Deleting the key would make every object unreadable: the evidence outlives any stack change.
    removalPolicy: RemovalPolicy.RETAIN,
    policy: new PolicyDocument({
      statements: [
        administrationWithoutUse(),
        new PolicyStatement({
          sid: 'WritersEncryptThroughS3',
          principals: [new AccountRootPrincipal()],
          actions: ['kms:GenerateDataKey'],
          resources: ['*'],
          conditions: viaS3,
        }),
        new PolicyStatement({
          sid: 'ReaderDecryptsThroughS3',
          principals: [new ArnPrincipal(readerRole.roleArn)],
          actions: ['kms:Decrypt'],
          resources: ['*'],
          conditions: viaS3,
        }),
        onlyBreakGlassDisablesOrDeletes(breakGlass),
        onlyBreakGlassOrDeployChangesThePolicy(['kms:PutKeyPolicy'], breakGlass, deployer),
        grantsOnlyForAwsServices(),
      ],
    }),
  });
  return { key, readerRole, breakGlassRole };
}
