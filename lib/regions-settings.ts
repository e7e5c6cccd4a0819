/**
 * The settings of a stage in two regions (docs/regions.md "The stack for two regions"), checked at synth: a broken rule
 * fails the synth by name. One settings file describes both regions; what is regional (the cluster, the push
 * applications, the key, the network) is given again under `recovery`, in the recovery region; what is shared (topic,
 * consumer group, sender, peak, brand) has one value for both.
 */
import { z } from 'zod';
import { EXAMPLE_STAGE } from './deploy-problems.ts';
import { ARN_KMS_KEY, ARN_MSK_CLUSTER, ARN_PLATFORM_APPLICATION, SettingsError } from './settings.ts';

const region = z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region name');
const ARN_REPLICATOR = /^arn:aws[a-z-]*:kafka:([a-z0-9-]+):(\d{12}):replicator\/[A-Za-z0-9-]+\/[A-Za-z0-9-]+$/;

export const regionsSettingsSchema = z.object({
  regions: z.object({ primary: region, recovery: region, active: region }),
  recovery: z.object({
    mskClusterArn: z.string().regex(ARN_MSK_CLUSTER, 'must be an MSK cluster ARN'),
    pushPlatformApplicationArns: z.array(z.string().regex(ARN_PLATFORM_APPLICATION)).default([]),
    kmsKeyArn: z.string().regex(ARN_KMS_KEY, 'must be a KMS key ARN').optional(),
    mskSubnetIds: z.array(z.string().regex(/^subnet-[0-9a-f]{8,17}$/)).optional(),
    mskSecurityGroupIds: z.array(z.string().regex(/^sg-[0-9a-f]{8,17}$/)).optional(),
    mskVpcId: z
      .string()
      .regex(/^vpc-[0-9a-f]{8,17}$/)
      .optional(),
    mskRouteTableIds: z.array(z.string().regex(/^rtb-[0-9a-f]{8,17}$/)).optional(),
  }),
  mskReplicatorArns: z.array(z.string().regex(ARN_REPLICATOR, 'must be MSK Replicator ARNs')).default([]),
  /**
   * The IAM roles that may run the region commands (promote, demote, reconcile: POST /regions/* on each region's
   * operator API). Every other caller of the API is denied them by its resource policy (lib/operator-api.ts), whatever
   * its own IAM policy allows: a support operator who may resend cannot stop every send. Wildcards as IAM's ArnLike.
   */
  regionCommandPrincipals: z
    .array(z.string().regex(/^arn:aws[a-z-]*:iam::(\d{12}|\*):role\/[\w+=,.@/*-]+$/, 'must be an IAM role ARN'))
    .optional(),
  /** Channels a failover may send a second copy on, with its note: email at most, none by default. */
  failoverSecondCopy: z.array(z.literal('EMAIL', { error: 'only EMAIL may get a second copy' })).default([]),
  failoverLookupMinutes: z
    .number()
    .int()
    .min(10)
    .max(24 * 60)
    .default(60),
  failoverClockSkewSeconds: z.number().int().min(0).max(600).default(60),
  /**
   * The recovery replica's guard (lib/regional.ts guardReplica). Off only for the deploy that creates the replica:
   * CloudFormation cannot create a replica and put its resource policy in one stack update outside the stack's region
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/rbac-considerations.html).
   */
  replicaGuard: z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean()).default(true),
  /**
   * How the stage's global table comes to be: `create`, a new table. Required outside the example stage, because a
   * stage deployed in one region has an `AWS::DynamoDB::Table` that the two-region template does not have: deploying
   * over it would create a second, empty table and move every function to it (docs/deploy.md "Two regions").
   */
  globalTable: z
    .literal('create', { error: 'only "create" is built: a new global table (docs/deploy.md "Two regions")' })
    .optional(),
});
export type RegionsSettings = z.infer<typeof regionsSettingsSchema>;

/** What the primary's own settings say, for the rules that tie the two regions together. */
export interface PrimarySide {
  readonly stage: string;
  readonly mskClusterArn: string;
  readonly kmsKeyArn?: string | undefined;
  readonly pushPlatformApplicationArns?: readonly string[];
}

/** The two-region settings, or undefined for a stage in one region (no `regions` key); every broken rule named. */
export function parseRegionsSettings(
  read: (key: string) => unknown,
  primary: PrimarySide,
): RegionsSettings | undefined {
  if (read('regions') === undefined) return undefined;
  const keys = Object.keys(regionsSettingsSchema.shape);
  const parsed = regionsSettingsSchema.safeParse(Object.fromEntries(keys.map((k) => [k, read(k)])));
  if (!parsed.success) {
    throw new SettingsError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const problems = regionsProblems(parsed.data, primary);
  if (problems.length > 0) throw new SettingsError(problems);
  return parsed.data;
}

export function regionsProblems(s: RegionsSettings, primary: PrimarySide): string[] {
  const problems: string[] = [];
  const problem = (key: string, message: string) => problems.push(`${key}: ${message}`);
  if (primary.stage !== EXAMPLE_STAGE && s.globalTable === undefined) {
    problem(
      'globalTable',
      'say "create" if this stage has never been deployed in one region; a stage deployed in one region keeps its table, and a deploy of these settings would create a second, empty one (docs/deploy.md "Two regions": move it first)',
    );
  }
  if (s.regionCommandPrincipals === undefined || s.regionCommandPrincipals.length === 0) {
    problem(
      'regionCommandPrincipals',
      "name the IAM role ARNs that may promote, demote and reconcile (POST /regions/* on the operator API): without them any caller allowed the API — a support operator's resend role — could demote a region and stop every send",
    );
  }
  const { primary: p, recovery: r, active } = s.regions;
  const [, partition, clusterRegion, account] = ARN_MSK_CLUSTER.exec(primary.mskClusterArn) ?? [];
  const [, recoveryPartition, recoveryClusterRegion, recoveryAccount] =
    ARN_MSK_CLUSTER.exec(s.recovery.mskClusterArn) ?? [];
  if (p === r) problem('regions', 'the primary and the recovery region must differ');
  if (active !== p && active !== r) problem('regions.active', `must be ${p} or ${r}`);
  if (clusterRegion !== p) problem('regions.primary', `must be the region of mskClusterArn (${clusterRegion})`);
  if (recoveryClusterRegion !== r) problem('recovery.mskClusterArn', `must be in the recovery region ${r}`);
  if (recoveryPartition !== partition || recoveryAccount !== account) {
    problem('recovery.mskClusterArn', `must be in the primary's partition and account (${partition}, ${account})`);
  }
  if ((primary.kmsKeyArn === undefined) !== (s.recovery.kmsKeyArn === undefined)) {
    problem('recovery.kmsKeyArn', 'a customer key for both regions or for neither');
  }
  const inRegion = (arn: string, pattern: RegExp, want: string) => pattern.exec(arn)?.[1] === want;
  if (s.recovery.kmsKeyArn !== undefined && !inRegion(s.recovery.kmsKeyArn, ARN_KMS_KEY, r)) {
    problem('recovery.kmsKeyArn', `must be in ${r}`);
  }
  for (const arn of s.recovery.pushPlatformApplicationArns) {
    if (!inRegion(arn, ARN_PLATFORM_APPLICATION, r))
      problem('recovery.pushPlatformApplicationArns', `${arn} is not in ${r}`);
  }
  for (const arn of s.mskReplicatorArns) {
    const where = ARN_REPLICATOR.exec(arn)?.[1];
    if (where !== p && where !== r) problem('mskReplicatorArns', `${arn} is in neither region`);
  }
  return problems;
}

/**
 * Settings that name a resource of the primary's region and have no recovery-region counterpart under `recovery` yet:
 * refused in a stage with two regions rather than deployed to the recovery region pointing at the primary's.
 */
const PRIMARY_ONLY = ['kafkaScramSecretArn', 'kafkaScramKmsKeyArn', 'schemaRegistry', 'vpc', 'console'] as const;

/** The recovery region's settings as the primary's are read: the regional keys from `recovery`, the rest shared. */
export function recoveryReader(read: (key: string) => unknown, s: RegionsSettings): (key: string) => unknown {
  const problems = PRIMARY_ONLY.filter((k) => read(k) !== undefined).map(
    (k) => `${k}: not yet supported in a stage with two regions (the recovery region would use the primary's)`,
  );
  if (problems.length > 0) throw new SettingsError(problems);
  const r = s.recovery;
  const regional: Record<string, unknown> = {
    mskClusterArn: r.mskClusterArn,
    pushPlatformApplicationArns: r.pushPlatformApplicationArns.length === 0 ? undefined : r.pushPlatformApplicationArns,
    kmsKeyArn: r.kmsKeyArn,
    mskSubnetIds: r.mskSubnetIds,
    mskSecurityGroupIds: r.mskSecurityGroupIds,
    mskVpcId: r.mskVpcId,
    mskRouteTableIds: r.mskRouteTableIds,
    // The table's backup is the primary's: the replica is the same table (and has point-in-time recovery).
    backup: undefined,
  };
  return (key) => (key in regional ? regional[key] : read(key));
}
