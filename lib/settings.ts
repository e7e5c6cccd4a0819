/**
 * Deployment settings, validated at synth with a message naming each bad or missing key. They come from CDK context
 * (`-c key=value`) over an optional JSON file (`-c settingsFile=path`). cdk.json holds no value for a required key,
 * so a deploy without them fails at synth instead of deploying against a placeholder; the offline synth and the infra
 * tests read examples/settings.example.json.
 */

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  DEFAULT_SEND_RATES,
  DISPATCH_ENVIRONMENT,
  EVIDENCE_ENVIRONMENT,
  INGEST_ENVIRONMENT,
  OPERATOR_ENVIRONMENT,
} from '../functions/contracts/environment.ts';
import type { IntKey } from '../functions/contracts/environment-keys.ts';
import { APPROVAL_KINDS, DEFAULT_APPROVAL_REQUIRED } from '../functions/domain/approval.ts';
import { BRAND_ENV_MAX_BYTES, brandEnvBytes, brandSchema } from '../functions/domain/brand.ts';
import { DEFAULT_CHANNEL_POLICIES, DELIVERY_POLICIES } from '../functions/domain/delivery-policy.ts';
import { EVIDENCE_LOCK_MODES } from '../functions/domain/evidence.ts';
import { MAX_PEAK_NOTIFICATIONS_PER_SECOND } from '../functions/domain/sweep-index.ts';
import { consoleSettingsSchema } from './console-settings.ts';
import { deployProblems } from './deploy-problems.ts';
import { dispatchCapacityProblems, dispatchCapacityShape } from './settings-dispatch.ts';
import {
  backupSchema,
  eventBusArnSchema,
  evidenceReplicationSchema,
  networkSchema,
  protectionProblems,
  rolePatternSchema,
} from './settings-protection.ts';
import { smokeContact, smokeContactsProblem } from './settings-smoke.ts';
import { DEFAULT_TRACING, TRACING_MODES } from './tracing.ts';

export const ARN_MSK_CLUSTER =
  /^arn:(aws[a-z-]*):kafka:([a-z0-9-]+):(\d{12}):cluster\/([A-Za-z0-9-]+)\/([A-Za-z0-9-]+)$/;
const ARN_SECRET = /^arn:aws[a-z-]*:secretsmanager:([a-z0-9-]+):(\d{12}):secret:AmazonMSK_[A-Za-z0-9/_+=.@-]+$/;
export const ARN_KMS_KEY = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):(\d{12}):key\/[A-Za-z0-9-]+$/;
/** An SNS platform application: arn:aws:sns:<region>:<account>:app/<platform>/<name>. */
export const ARN_PLATFORM_APPLICATION =
  /^arn:aws[a-z-]*:sns:([a-z0-9-]+):(\d{12}):app\/(ADM|APNS|APNS_SANDBOX|BAIDU|GCM|MACOS|MACOS_SANDBOX|MPNS|WNS)\/([A-Za-z0-9_.-]{1,256})$/;
/** A Glue schema registry: arn:aws:glue:<region>:<account>:registry/<name>. */
export const ARN_GLUE_REGISTRY = /^arn:(aws[a-z-]*):glue:([a-z0-9-]+):(\d{12}):registry\/([A-Za-z0-9_$#.-]{1,255})$/;
/** Any Secrets Manager secret (the registry's credentials need not follow MSK's AmazonMSK_ naming). */
const ARN_ANY_SECRET = /^arn:aws[a-z-]*:secretsmanager:([a-z0-9-]+):(\d{12}):secret:[A-Za-z0-9/_+=.@-]+$/;
const DAY_SECONDS = 86_400;

/** The stage whose settings may keep the placeholders of examples/settings.example.json (the offline synth). */
export { EXAMPLE_STAGE } from './deploy-problems.ts';

const policy = z.enum(DELIVERY_POLICIES).default('AT_MOST_ONCE');
/** Context given on the command line arrives as a string: accept "100" for 100 and JSON for objects and lists. */
const num = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);
/** A setting the stack passes as that environment variable: the variable's bounds and default. */
const asKey = (key: IntKey) => num(key.min, key.max, key.default);
const json = <T extends z.core.SomeType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && /^\s*[[{]/.test(v) ? JSON.parse(v) : v), schema);
/** A list given as a JSON array or as "a,b,c". */
const list = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (v) =>
      typeof v === 'string' && !v.trim().startsWith('[')
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : typeof v === 'string'
          ? JSON.parse(v)
          : v,
    z.array(item).min(1),
  );
/** A point in time as ISO 8601 or Unix seconds; the mapping takes Unix seconds. */
const instant = z.preprocess((v) => {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return v;
  if (/^\d+$/.test(v)) return Number(v);
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? v : Math.floor(ms / 1000);
}, z.number({ error: 'must be an ISO 8601 time or Unix seconds' }).int().positive());

export const settingsSchema = z
  .object({
    /** Names the stack and every physical name, so two stages coexist in one account. */
    stage: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,19}$/, 'must be 1-20 lowercase letters, digits or hyphens, starting with a letter'),
    mskClusterArn: z
      .string()
      .regex(ARN_MSK_CLUSTER, 'must be an MSK cluster ARN (arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>)'),
    topic: z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'must be a Kafka topic name'),
    consumerGroupId: z.string().regex(/^[a-zA-Z0-9-/*:_+=.@]{1,200}$/, 'must be a Kafka consumer group id'),
    /** Required: where a new consumer group starts is a decision (docs/deploy.md "Starting position"), never a default. */
    startingPosition: z.enum(['TRIM_HORIZON', 'LATEST', 'AT_TIMESTAMP']),
    startingPositionTimestamp: instant.optional(),
    batchSize: num(1, 10_000, 100),
    batchingWindowSeconds: num(0, 300, 1),
    /** Absent: IAM auth (the default and the recommendation). Present: SASL/SCRAM with this secret. */
    kafkaScramSecretArn: z
      .string()
      .regex(ARN_SECRET, 'must be a Secrets Manager ARN whose name starts with AmazonMSK_')
      .optional(),
    /** The customer-managed key the SCRAM secret is encrypted with (MSK rejects secrets on the default key). */
    kafkaScramKmsKeyArn: z.string().regex(ARN_KMS_KEY, 'must be a KMS key ARN (arn:aws:kms:...:key/<id>)').optional(),
    kafkaMaxPollers: num(1, 200, 4),
    /** Given with mskRouteTableIds: the stack adds the S3 gateway endpoint the on-failure destination needs. */
    mskVpcId: z
      .string()
      .regex(/^vpc-[0-9a-f]{8,17}$/, 'must be a VPC id (vpc-...)')
      .optional(),
    mskRouteTableIds: list(z.string().regex(/^rtb-[0-9a-f]{8,17}$/, 'must be route table ids (rtb-...)')).optional(),
    /** Optional customer-managed key for the table, the dispatch on-failure queue and the failed-batch bucket. */
    kmsKeyArn: z.string().regex(ARN_KMS_KEY, 'must be a KMS key ARN (arn:aws:kms:...:key/<id>)').optional(),
    senderEmail: z.email('must be the verified SES identity to send from'),
    sesConfigurationSet: z.string().min(1).optional(),
    /** Who is paged: every alarm mails it. Required outside the example stage (deployProblems). */
    alarmEmail: z.email().optional(),
    /**
     * Encrypt the alarm topic with a key this stack creates, whose key policy lets CloudWatch use it (a key the stack
     * does not own could not name CloudWatch, and every alarm would fail to publish). Default on.
     */
    encryptAlarmTopic: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(true),
    /**
     * The account's monthly SMS spend quota in USD (`aws sns get-sms-attributes`, MonthlySpendLimit; $1 in a new
     * account). Required: SNS stops sending SMS within minutes of reaching it, so the SmsSpend alarm fires at 80%.
     */
    smsMonthlySpendLimitUsd: z.coerce.number().positive().max(1_000_000),
    /**
     * Set the account's SMS delivery status logging (SNS SetSMSAttributes: the role and a 100% success sampling
     * rate) from this stack. Off when another stage or team in the account and region already manages it: the
     * stack still subscribes to the delivery status log groups.
     */
    manageSmsDeliveryStatus: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(true),
    /** SNS platform applications whose endpoints producers use: their delivery status is logged and recorded. */
    pushPlatformApplicationArns: list(
      z
        .string()
        .regex(
          ARN_PLATFORM_APPLICATION,
          'must be SNS platform application ARNs (arn:aws:sns:...:app/<platform>/<name>)',
        ),
    ).optional(),
    /**
     * Subnets and security groups from which the cluster's brokers are reached: the stack deploys the smoke
     * producer there (tools/ops/smoke.ts sends its record through MSK). Both or neither.
     */
    mskSubnetIds: list(z.string().regex(/^subnet-[0-9a-f]{8,17}$/, 'must be subnet ids (subnet-...)')).optional(),
    mskSecurityGroupIds: list(
      z.string().regex(/^sg-[0-9a-f]{8,17}$/, 'must be security group ids (sg-...)'),
    ).optional(),
    /** Beside the SES mailbox simulator, who the smoke producer may send to (lib/settings-smoke.ts). */
    smokeContacts: list(smokeContact)
      .superRefine((cs, ctx) => {
        const problem = smokeContactsProblem(cs);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    /**
     * Where producers register the schemas of Avro or Protobuf records (docs/event.md "Avro and Protobuf"): ingest
     * reads each record's writer schema from it. Absent: JSON records only (a registry-framed one is quarantined).
     */
    schemaRegistry: json(
      z.discriminatedUnion('kind', [
        z.object({
          kind: z.literal('glue'),
          registryArn: z
            .string()
            .regex(ARN_GLUE_REGISTRY, 'must be a Glue registry ARN (arn:aws:glue:...:registry/<name>)'),
        }),
        z.object({
          kind: z.literal('confluent'),
          // Basic auth over plain HTTP would hand the credentials to anyone on the path. Credentials in the URL would
          // sit in plain text in ingest's environment (and the template): they belong in the secret. A query string or
          // fragment is no part of a registry's address. The message never repeats the URL.
          url: z
            .url({ protocol: /^https$/, error: 'must be the https URL of the Confluent schema registry' })
            .refine(
              (u) => !URL.canParse(u) || (new URL(u).username === '' && new URL(u).password === ''),
              "must not carry credentials (https://user:password@…): they would be plain text in ingest's environment; put them in the secret basicAuthSecretArn names",
            )
            .refine(
              (u) => !URL.canParse(u) || (new URL(u).search === '' && new URL(u).hash === ''),
              "must have no query string or fragment: only the registry's https address",
            ),
          /** Basic auth: a secret whose value is JSON {"username": …, "password": …} (a Confluent Cloud API key). */
          basicAuthSecretArn: z.string().regex(ARN_ANY_SECRET, 'must be a Secrets Manager secret ARN').optional(),
          /** The customer-managed key that secret is encrypted with, if not the account's default. */
          basicAuthKmsKeyArn: z
            .string()
            .regex(ARN_KMS_KEY, 'must be a KMS key ARN (arn:aws:kms:...:key/<id>)')
            .optional(),
        }),
      ]),
    ).optional(),
    inboxRetentionDays: asKey(INGEST_ENVIRONMENT.INBOX_RETENTION_DAYS),
    /**
     * How long the evidence of a send (the exact message, the provider's answer and reports) is kept, in days: years,
     * not the table's days (docs/evidence-and-privacy.md). Default seven years. One value for every notice type.
     */
    evidenceRetentionDays: asKey(EVIDENCE_ENVIRONMENT.EVIDENCE_RETENTION_DAYS),
    /** Object Lock mode of the evidence store: GOVERNANCE (default) or COMPLIANCE (WORM; irreversible: read the doc). */
    evidenceLockMode: z.enum(EVIDENCE_LOCK_MODES).default(EVIDENCE_ENVIRONMENT.EVIDENCE_LOCK_MODE.default),
    /**
     * Who may assume the evidence-reader role (decrypt seven years of what customers received): IAM role ARNs, a name
     * ending in * at most. Required outside the example stage (deployProblems); absent, the role trusts the account.
     */
    evidenceReaders: list(rolePatternSchema).optional(),
    /** Who may assume the break-glass role, always with a source identity naming the person (lib/named-principals.ts). */
    breakGlassPrincipals: list(rolePatternSchema).optional(),
    /** Another account's EventBridge bus every protection report is also sent to (lib/protection-watch.ts). */
    securityEventBusArn: eventBusArnSchema.optional(),
    /** Replicate every evidence object to a log-archive account's bucket, under its lock and key (settings-protection.ts). */
    evidenceReplication: json(evidenceReplicationSchema).optional(),
    /** AWS Backup of the table: a locked vault here, a copy in another account (settings-protection.ts). */
    backup: json(backupSchema).optional(),
    /** The functions in a VPC of the stack's own, with no route to the internet (settings-protection.ts). */
    vpc: json(networkSchema).optional(),
    /** Events older than this are recorded in the inbox and counted (EventsTooOld), never sent. */
    maxEventAgeSeconds: num(60, 3650 * DAY_SECONDS, INGEST_ENVIRONMENT.MAX_EVENT_AGE_SECONDS.default),
    /**
     * Which kinds of operator action one identity proposes and another approves (four eyes, functions/domain/approval.ts):
     * by default what sends content or a contact point an operator supplied, lifts a suppression, or erases a customer.
     */
    approvalRequiredFor: list(z.enum(APPROVAL_KINDS)).default([...DEFAULT_APPROVAL_REQUIRED]),
    /** How long a proposal waits for its approval, in hours. */
    proposalHours: asKey(OPERATOR_ENVIRONMENT.PROPOSAL_HOURS),
    /**
     * The bank states that its Identity Center user name IS the directory e-mail its console identity provider asserts
     * (one attribute): only then may a console person approve an Identity Center user's proposal, or the other way.
     */
    identityCenterUserNameIsEmail: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(false),
    /** Alarm when ingest is invoked not once for this long (a stuck mapping looks like silence); 0 turns it off. */
    ingestIdleAlarmMinutes: num(0, 1440, 60),
    deliveryPolicy: json(
      z.object({ EMAIL: policy, PUSH: policy, SMS: policy }).default({ ...DEFAULT_CHANNEL_POLICIES }),
    ),
    /**
     * Required: the bank's identity on every message (functions/domain/brand.ts, the schema dispatch checks again at
     * cold start). It reaches dispatch as one environment variable, so its JSON is bounded (Lambda's 4 KB for all).
     */
    brand: json(brandSchema),
    ...dispatchCapacityShape,
    /**
     * X-Ray subsegments for every AWS call (DynamoDB, SES, SNS, S3) besides the invocation's own segment, which Lambda
     * always records (active tracing). Off by default: it loads the X-Ray SDK (in maintenance mode since February
     * 2026, end of support February 2027) into every function — about 120 KB and its cold-start time, and an async
     * hook on every promise the function makes (docs/measurements.md).
     */
    traceAwsCalls: z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean()).default(false),
    /**
     * Lambda active tracing on every function: "active" or "off" (default; lib/tracing.ts says why). Off, X-Ray
     * records nothing of the functions and costs nothing; an investigation turns it on with a deploy.
     */
    tracing: z.enum(TRACING_MODES).default(DEFAULT_TRACING),
    /**
     * Sends per second per channel, all dispatch invocations together (a token bucket they share): set them to the
     * account's quotas (SES MaxSendRate from `aws ses get-send-quota`; the SNS SMS and push rates of the account and
     * region). Sending above a quota is not lost (throttled sends wait and retry), only slower and noisier.
     */
    sendRatePerSecond: json(
      z
        .object({
          EMAIL: asKey(DISPATCH_ENVIRONMENT.SEND_RATE_EMAIL),
          PUSH: asKey(DISPATCH_ENVIRONMENT.SEND_RATE_PUSH),
          SMS: asKey(DISPATCH_ENVIRONMENT.SEND_RATE_SMS),
        })
        .default({ ...DEFAULT_SEND_RATES }),
    ),
    /** A notification not sent within this many hours of its creation ends FAILED: EXPIRED (alarmed), never late. */
    notificationMaxAgeHours: num(1, 720, DISPATCH_ENVIRONMENT.MAX_AGE_SECONDS.default / 3600),
    /**
     * The peak notifications per second (all channels) the stack is built for: it sizes the sweep index's shards so
     * the average index key takes at most half of DynamoDB's 1,000 writes per second per key, and the hottest, with
     * the hash's unevenness, under 700 (docs/scaling.md). Raising it
     * later is a plain deploy; lowering it too (the sweeper keeps visiting the shards an earlier deploy used).
     */
    peakNotificationsPerSecond: z.coerce
      .number()
      .int()
      .min(1)
      .max(
        MAX_PEAK_NOTIFICATIONS_PER_SECOND,
        `must be at most ${MAX_PEAK_NOTIFICATIONS_PER_SECOND}: beyond that the sweep index needs more than 256 shards per state and channel (README "Scaling")`,
      )
      .default(1_000),
    console: consoleSettingsSchema.optional(),
  })
  .superRefine((s, ctx) => {
    const problem = (key: string, message: string) => ctx.addIssue({ code: 'custom', path: [key], message });
    if (s.startingPosition === 'AT_TIMESTAMP' && s.startingPositionTimestamp === undefined) {
      problem('startingPositionTimestamp', 'is required when startingPosition is AT_TIMESTAMP');
    }
    if (s.startingPosition !== 'AT_TIMESTAMP' && s.startingPositionTimestamp !== undefined) {
      problem('startingPositionTimestamp', 'is only used with startingPosition AT_TIMESTAMP');
    }
    if (s.kafkaScramSecretArn !== undefined && s.kafkaScramKmsKeyArn === undefined) {
      problem(
        'kafkaScramKmsKeyArn',
        'is required with kafkaScramSecretArn: MSK only accepts secrets on a customer key',
      );
    }
    if (s.kafkaScramSecretArn === undefined && s.kafkaScramKmsKeyArn !== undefined) {
      problem('kafkaScramKmsKeyArn', 'is only used with kafkaScramSecretArn');
    }
    if ((s.mskVpcId === undefined) !== (s.mskRouteTableIds === undefined)) {
      problem(s.mskVpcId === undefined ? 'mskVpcId' : 'mskRouteTableIds', 'mskVpcId and mskRouteTableIds go together');
    }
    if (s.mskSubnetIds !== undefined && s.kafkaScramSecretArn !== undefined) {
      problem(
        'mskSubnetIds',
        'deploys the smoke producer, which authenticates with IAM: with SASL/SCRAM leave it out and run npm run smoke -- --direct',
      );
    }
    if ((s.mskSubnetIds === undefined) !== (s.mskSecurityGroupIds === undefined)) {
      problem(
        s.mskSubnetIds === undefined ? 'mskSubnetIds' : 'mskSecurityGroupIds',
        'mskSubnetIds and mskSecurityGroupIds go together',
      );
    }
    // Dedupe lasts as long as the inbox item: an event replayed after it expired must be too old to send.
    if (s.maxEventAgeSeconds >= s.inboxRetentionDays * DAY_SECONDS) {
      problem(
        'maxEventAgeSeconds',
        `must be shorter than inboxRetentionDays (${s.inboxRetentionDays * DAY_SECONDS} s)`,
      );
    }
    if (brandEnvBytes(s.brand) > BRAND_ENV_MAX_BYTES) {
      problem(
        'brand',
        `is ${brandEnvBytes(s.brand)} bytes as JSON; at most ${BRAND_ENV_MAX_BYTES} fit beside the function's other settings in Lambda's 4 KB of environment`,
      );
    }
    dispatchCapacityProblems(s, problem);
    if (s.traceAwsCalls && s.tracing === 'off') {
      problem('traceAwsCalls', 'adds subsegments to traces: it needs tracing "active"');
    }
    // A notification must expire (FAILED: EXPIRED, alarmed) before its item does (TTL): never vanish while PENDING.
    if (s.notificationMaxAgeHours * 3600 >= s.inboxRetentionDays * DAY_SECONDS) {
      problem('notificationMaxAgeHours', `must be shorter than inboxRetentionDays (${s.inboxRetentionDays * 24} h)`);
    }
    const cluster = ARN_MSK_CLUSTER.exec(s.mskClusterArn);
    if (cluster === null) return;
    const [, , region, account] = cluster;
    for (const [key, pattern] of [
      ['kafkaScramSecretArn', ARN_SECRET],
      ['kafkaScramKmsKeyArn', ARN_KMS_KEY],
      ['kmsKeyArn', ARN_KMS_KEY],
    ] as const) {
      const match = pattern.exec(s[key] ?? '');
      if (match !== null && (match[1] !== region || match[2] !== account)) {
        problem(key, `must be in the cluster's account and region (${account}, ${region})`);
      }
    }
    // Ingest asks the registry in its own region and account (Glue has no cross-account registry access).
    const registry = s.schemaRegistry;
    for (const [key, arn, pattern] of [
      ['schemaRegistry.registryArn', registry?.kind === 'glue' ? registry.registryArn : undefined, ARN_GLUE_REGISTRY],
      [
        'schemaRegistry.basicAuthSecretArn',
        registry?.kind === 'confluent' ? registry.basicAuthSecretArn : undefined,
        ARN_ANY_SECRET,
      ],
      [
        'schemaRegistry.basicAuthKmsKeyArn',
        registry?.kind === 'confluent' ? registry.basicAuthKmsKeyArn : undefined,
        ARN_KMS_KEY,
      ],
    ] as const) {
      const match = pattern.exec(arn ?? '');
      if (match === null) continue;
      const [r, a] = pattern === ARN_GLUE_REGISTRY ? [match[2], match[3]] : [match[1], match[2]];
      if (r !== region || a !== account)
        problem(key, `must be in the cluster's account and region (${account}, ${region})`);
    }
    if (
      registry?.kind === 'confluent' &&
      registry.basicAuthKmsKeyArn !== undefined &&
      registry.basicAuthSecretArn === undefined
    ) {
      problem('schemaRegistry.basicAuthKmsKeyArn', 'is only used with schemaRegistry.basicAuthSecretArn');
    }
    for (const [key, message] of protectionProblems(s, account as string, region as string)) problem(key, message);
    // SNS publishes only within its region, and delivery status is logged in the application's own region.
    const apps = s.pushPlatformApplicationArns ?? [];
    if (new Set(apps).size !== apps.length) {
      problem('pushPlatformApplicationArns', 'names an application twice: each is configured once');
    }
    for (const arn of apps) {
      const match = ARN_PLATFORM_APPLICATION.exec(arn);
      if (match !== null && (match[1] !== region || match[2] !== account)) {
        problem(
          'pushPlatformApplicationArns',
          `${arn} must be in the cluster's account and region (${account}, ${region})`,
        );
      }
    }
  });
export type Settings = z.infer<typeof settingsSchema>;

export class SettingsError extends Error {
  override name = 'SettingsError';
  constructor(readonly problems: readonly string[]) {
    super(`notifier settings: ${problems.join('; ')}`);
  }
}
export function parseSettings(read: (key: string) => unknown, now: number = Date.now()): Settings {
  const raw = Object.fromEntries(Object.keys(settingsSchema.shape).map((key) => [key, read(key)]));
  const result = settingsSchema.safeParse(raw);
  if (result.success) {
    const problems = deployProblems(result.data, now);
    if (problems.length > 0) throw new SettingsError(problems);
    return result.data;
  }
  const problems = result.error.issues.map((issue) => {
    const key = issue.path.join('.');
    if (issue.code === 'custom') return `context key "${key}" ${issue.message}`;
    // A nested key (brand.name.ja) is required as much as a top-level one.
    let value: unknown = raw;
    for (const step of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[step as PropertyKey];
    return value === undefined
      ? `context key "${key}" is required (cdk deploy -c ${key}=... or a settingsFile)`
      : `context key "${key}" is invalid: ${issue.message}`;
  });
  throw new SettingsError(problems);
}

/**
 * Settings from CDK context over the JSON file named by the `settingsFile` context key (if any): a key given with
 * `-c` wins over the file.
 */
export function settingsFromContext(tryGetContext: (key: string) => unknown): Settings {
  return parseSettings(settingsReader(tryGetContext));
}

/** One key of the settings as given: CDK context over the settings file's value. */
export function settingsReader(tryGetContext: (key: string) => unknown): (key: string) => unknown {
  const file = tryGetContext('settingsFile');
  let fromFile: Record<string, unknown> = {};
  if (file !== undefined) {
    try {
      fromFile = JSON.parse(readFileSync(String(file), 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new SettingsError([`settingsFile "${file}" cannot be read: ${(error as Error).message}`]);
    }
  }
  return (key) => tryGetContext(key) ?? fromFile[key];
}

/** The account and region the stack must be deployed to: the cluster's, since the mapping cannot cross regions. */
export function clusterEnvironment(clusterArn: string): { account: string; region: string } {
  const match = ARN_MSK_CLUSTER.exec(clusterArn);
  if (match === null) throw new SettingsError([`"${clusterArn}" is not an MSK cluster ARN`]);
  return { region: match[2] as string, account: match[3] as string };
}

/** The stack's name and the prefix of every fixed physical name (alarms, dashboard): one per stage. */
export const stackNameOf = (stage: string) => `notifier-${stage}`;
/** EMF namespace per stage: two stages in one account must not set off each other's alarms. */

/** The ARNs IAM authorizes Kafka data-plane actions on, derived from the cluster ARN. */
export function kafkaResourceArns(clusterArn: string, topic: string, group: string) {
  const [, prefix = '', name = '', uuid = ''] =
    /^(arn:[^:]+:kafka:[^:]+:\d{12}):cluster\/([^/]+)\/(.+)$/.exec(clusterArn) ?? [];
  return {
    cluster: clusterArn,
    topic: `${prefix}:topic/${name}/${uuid}/${topic}`,
    group: `${prefix}:group/${name}/${uuid}/${group}`,
  };
}
