/**
 * Each function's environment: the contract between the stack, which sets it (lib/), and the function, which parses
 * it once at cold start (functions/commons/config.ts). Every variable is written once, here, with its bounds and its
 * default (environment-keys.ts says how they are read); the stack, the local run (tools/local/pipeline.ts) and the
 * chaos world build each function's environment as the type below, so a renamed or missing variable fails to compile.
 *
 * A default serves a run without the stack; where the stack has a setting for the same fact (lib/settings.ts), the
 * setting's default is this one. The dispatch timing's own defaults are in dispatch-timing.ts, the sweep index's in
 * domain/sweep-index.ts, the channels' delivery policies in domain/delivery-policy.ts.
 */
import { DEFAULT_PROPOSAL_HOURS, MAX_PROPOSAL_HOURS } from '../domain/approval.ts';
import type { Channel } from '../domain/channels.ts';
import { EVIDENCE_LOCK_MODES } from '../domain/evidence.ts';
import { NOTICE_TIMINGS } from '../domain/send-moment.ts';
import { DEFAULT_SWEEP_PLACEMENT, MAX_SWEEP_SHARDS } from '../domain/sweep-index.ts';
import { DISPATCH_TIMING } from './dispatch-timing.ts';
import {
  DEPLOYED,
  type EnvironmentOf,
  type EnvSpec,
  int,
  oneOf,
  optionalText,
  type RunEnvironmentOf,
  text,
} from './environment-keys.ts';

/** Set by Lambda itself: read, never built. */
const BY_LAMBDA = { byLambda: true } as const;

const DAY = 86_400;

/** The one table, for every function that reads or writes it. */
const TABLE = { TABLE_NAME: text('nonEmpty') } as const satisfies EnvSpec;

/**
 * The evidence index's own table (docs/table.md "The evidence index"): dispatch and the sweeper write it, the operator
 * function and the console read it. The main table (TABLE_NAME) is read too, for the items kept there before the index
 * had a table of its own.
 */
export const EVIDENCE_INDEX = { EVIDENCE_INDEX_TABLE_NAME: text('nonEmpty') } as const satisfies EnvSpec;

/** Where a (re-)PENDING notification goes in the sweep index (domain/sweep-index.ts SweepPlacement). */
const PLACEMENT = {
  PENDING_THRESHOLD_SECONDS: int(1, DAY, DISPATCH_TIMING.pendingThresholdSeconds, DEPLOYED),
  /** The stack sizes it from its peak (sweepShardsFor). */
  SWEEP_SHARDS: int(1, MAX_SWEEP_SHARDS, DEFAULT_SWEEP_PLACEMENT.sweepShards, DEPLOYED),
} as const satisfies EnvSpec;

/**
 * Sends per second each channel may use, all dispatch invocations together (the account's quotas: SES MaxSendRate,
 * SNS SMS and push rates). EMAIL 14: a common starting SES production rate — set your account's own (`aws ses
 * get-send-quota`); SMS 20: SNS's default transactional SMS rate in most regions; PUSH 100: far below SNS's Publish
 * quota (the platform services are the real limit).
 */
const sendRate = (fallback: number) => int(1, 100_000, fallback, DEPLOYED);
/** Each channel's send-rate variable: a new channel is a compile error until it has one. */
export const SEND_RATE_KEYS = {
  EMAIL: 'SEND_RATE_EMAIL',
  PUSH: 'SEND_RATE_PUSH',
  SMS: 'SEND_RATE_SMS',
} as const satisfies Record<Channel, string>;

/** What dispatch and the sweeper both judge a send by. */
const SENDING = {
  SEND_RATE_EMAIL: sendRate(14),
  SEND_RATE_PUSH: sendRate(100),
  SEND_RATE_SMS: sendRate(20),
  /** Past this age since createdAt a notification ends FAILED: EXPIRED instead of being sent late. */
  MAX_AGE_SECONDS: int(60, 30 * DAY, 24 * 3600, DEPLOYED),
  /** Sends that may have reached the provider before a notification ends FAILED: RETRIES_EXHAUSTED. */
  MAX_SEND_ATTEMPTS: int(1, 20, 5, DEPLOYED),
  /** "EMAIL=AT_MOST_ONCE,SMS=AT_LEAST_ONCE"; channels not named keep AT_MOST_ONCE (domain/delivery-policy.ts). */
  CHANNEL_POLICIES: optionalText(undefined, DEPLOYED),
  DEADLINE_MARGIN_MS: int(0, 60_000, DISPATCH_TIMING.deadlineMarginMs, DEPLOYED),
} as const satisfies EnvSpec;

/**
 * Where the evidence of every send goes (docs/evidence-and-privacy.md): EVIDENCE_BUCKET (the stack's Object Lock
 * bucket) or, for the local run, EVIDENCE_DIR (a folder); not both. Neither: the function keeps no evidence (the stack
 * always sets the bucket; an infra test pins it).
 */
export const EVIDENCE_ENVIRONMENT = {
  EVIDENCE_BUCKET: optionalText({ pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, must: 'an S3 bucket name' }, DEPLOYED),
  EVIDENCE_DIR: optionalText('nonEmpty'),
  EVIDENCE_LOCK_MODE: oneOf(EVIDENCE_LOCK_MODES, 'GOVERNANCE', DEPLOYED),
  /**
   * How long the evidence of a send is kept, in days: seven years by default, the longest common banking
   * record-keeping period (not the table's days). One value for every notice type.
   */
  EVIDENCE_RETENTION_DAYS: int(1, 36_500, 2_557, DEPLOYED),
  /** The longest an evidence write may hold the record after its send; past it the record waits as a gap. */
  EVIDENCE_TIMEOUT_MS: int(100, 30_000, DISPATCH_TIMING.evidenceTimeoutMs),
  /**
   * An invocation handed fewer records than this puts them in the evidence spool, rolled into one object a minute by
   * the sweeper (domain/evidence-spool.ts); 0 (the default) writes every invocation's batch itself.
   */
  EVIDENCE_SPOOL_BELOW: int(0, 10_000, 0),
  /**
   * The spool's own table (regional, outside AWS Backup, items expiring by TTL: lib/evidence-spool-table.ts); absent,
   * the main table. The main table's spool is still read and rolled: items an earlier version put there.
   */
  EVIDENCE_SPOOL_TABLE_NAME: optionalText('nonEmpty'),
} as const satisfies EnvSpec;

/** How long the inbox, notifications and quarantine records are kept (their TTL). */
const RETENTION = { INBOX_RETENTION_DAYS: int(1, 3650, 35, DEPLOYED) } as const satisfies EnvSpec;

export const INGEST_ENVIRONMENT = {
  ...TABLE,
  ...PLACEMENT,
  ...RETENTION,
  INGEST_CONCURRENCY: int(1, 256, 16, DEPLOYED),
  MAX_EVENT_BYTES: int(256, 1_000_000, 65_536),
  TRANSACTION_ATTEMPTS: int(1, 10, 4),
  /** An event older than this when ingested is recorded but not sent (a day-old "transfer complete" misleads); 0: off. */
  MAX_EVENT_AGE_SECONDS: int(0, 36_500 * DAY, DAY, DEPLOYED),
  /** Where Avro and Protobuf writers' schemas are read (unset: none): confluent with its URL, or glue. */
  SCHEMA_REGISTRY_KIND: optionalText<'confluent' | 'glue'>(),
  SCHEMA_REGISTRY_URL: optionalText(),
  /** Basic auth for a Confluent registry: a secret whose value is JSON {"username", "password"}. */
  SCHEMA_REGISTRY_SECRET_ARN: optionalText(),
  /**
   * The KMS HMAC key a secret field's MAC is computed with (the stack's own key; stores/secret-mac.ts). Unset: an
   * event with a secret field (a one-time code) is quarantined rather than hashed with the secret in the clear.
   */
  SECRET_MAC_KEY_ID: optionalText('nonEmpty', DEPLOYED),
  /** The local run's stand-in for it: a file holding an HMAC key as hex (never a deployed stage's). */
  SECRET_MAC_KEY_FILE: optionalText('nonEmpty'),
} as const satisfies EnvSpec;

/** What a send's message is rendered and its request built with: dispatch's, and the sweeper's rebuild of evidence. */
const RENDERING = {
  SENDER_EMAIL: text('email'),
  /** The bank's identity, JSON (domain/brand.ts): checked at cold start by the schema the synth used. */
  BRAND: text(),
  /** Every email goes through the configuration set whose events reach the feedback function. */
  SES_CONFIGURATION_SET: optionalText('nonEmpty', DEPLOYED),
} as const satisfies EnvSpec;

export const DISPATCH_ENVIRONMENT = {
  ...TABLE,
  ...EVIDENCE_INDEX,
  ...PLACEMENT,
  ...SENDING,
  ...EVIDENCE_ENVIRONMENT,
  ...RENDERING,
  /**
   * Our account (the stack passes it) and region (Lambda sets it): a push endpoint outside them is refused by our own
   * IAM for that endpoint alone. Without the account, such a refusal holds the channel (the cautious reading).
   */
  ACCOUNT_ID: optionalText({ pattern: /^\d{12}$/, must: 'an AWS account id: 12 digits' }, DEPLOYED),
  AWS_REGION: optionalText('nonEmpty', BY_LAMBDA),
  /**
   * The platform applications the stack lets dispatch publish to (comma-separated; empty: none): an endpoint of any
   * other is refused by our own IAM for that endpoint alone. Unset (a run without the stack): not judged.
   */
  PUSH_APPLICATION_ARNS: optionalText(undefined, DEPLOYED),
  // The timing's defaults are the stack's (dispatch-timing.ts), so a function run without them behaves as deployed.
  LEASE_SECONDS: int(10, 3600, DISPATCH_TIMING.leaseSeconds, DEPLOYED),
  SEND_TIMEOUT_MS: int(100, 60_000, DISPATCH_TIMING.sendTimeoutMs, DEPLOYED),
  CONNECT_TIMEOUT_MS: int(50, 60_000, DISPATCH_TIMING.connectTimeoutMs, DEPLOYED),
  DISPATCH_CONCURRENCY: int(1, 100, DISPATCH_TIMING.concurrency, DEPLOYED),
  /** First step of the growing backoff after a deferral; it doubles up to RETRY_MAX_MS. */
  RETRY_BASE_MS: int(1, 60_000, 1_000),
  RETRY_MAX_MS: int(1, 3_600_000, 300_000),
  /** A retry due within this is waited for in the invocation; a later one is left to the sweeper. */
  NEAR_RETRY_MS: int(0, 60_000, 2_000),
  /** The longest one record waits for a send token before it is deferred (also bounded by the deadline). */
  MAX_PACING_WAIT_MS: int(0, 60_000, 10_000),
  /** How long an account-level failure holds the channel (the circuit breaker). */
  BREAKER_HOLD_SECONDS: int(1, 3_600, 60),
  /**
   * ENFORCED (the stack's, always): a notice's validity and send window are judged by the clock. REPLAY: a local replay
   * of a file of dated events (its dates long past, the wall clock any hour) judges neither — as a file's events are
   * not aged at ingest (MAX_EVENT_AGE_SECONDS 0). Supersede and the flood guard hold in both (docs/dispatch.md).
   */
  NOTICE_TIMING: oneOf(NOTICE_TIMINGS, 'ENFORCED', DEPLOYED),
} as const satisfies EnvSpec;

export const SWEEPER_ENVIRONMENT = {
  ...TABLE,
  ...EVIDENCE_INDEX,
  ...PLACEMENT,
  ...SENDING,
  ...EVIDENCE_ENVIRONMENT,
  /**
   * What dispatch renders and sends with, so the sweeper can rebuild the evidence of an invocation that died before
   * its batch was written (functions/sweeper/recover-evidence.ts): dispatch's own values.
   */
  ...RENDERING,
  /** Items one run may examine; the run also stops at its deadline. */
  SWEEP_LIMIT: int(1, 100_000, 10_000),
  SWEEP_PAGE_SIZE: int(1, 1_000, 100),
  SWEEP_CONCURRENCY: int(1, 64, 16),
  /** The schedule's period: a run re-drives at most a channel's rate × this many PENDING items. */
  SWEEP_INTERVAL_SECONDS: int(1, 3_600, DISPATCH_TIMING.sweeperIntervalSeconds, DEPLOYED),
} as const satisfies EnvSpec;

export const FEEDBACK_ENVIRONMENT = { ...TABLE, ...EVIDENCE_ENVIRONMENT } as const satisfies EnvSpec;

/**
 * The smoke producer (functions/smoke/): the topic it writes the smoke event to, the cluster's IAM bootstrap brokers
 * (the stack reads them at deploy: kafka GetBootstrapBrokers), and the region its IAM token is signed for.
 */
export const SMOKE_ENVIRONMENT = {
  TOPIC: text('nonEmpty'),
  BOOTSTRAP_BROKERS: text({ pattern: /^[^\s,]+(,[^\s,]+)*$/, must: 'must be host:port,host:port' }),
  AWS_REGION: text('nonEmpty', BY_LAMBDA),
  /** The settings' smokeContacts, comma-separated: beside the SES mailbox simulator, who a smoke event may go to. */
  SMOKE_CONTACTS: optionalText('nonEmpty'),
} as const satisfies EnvSpec;

/**
 * The operator function behind the operator API (functions/operator-api/): the table, the evidence store (audit
 * records, and the evidence an export reads), the ingest function replays and repairs go through, the bucket of
 * parked batches, and four eyes.
 */
/** The KMS HMAC key audit records are sealed with (functions/stores/audit-seal.ts); unset: the local run's key. */
export const AUDIT_SEAL = {
  AUDIT_SEAL_KEY_ARN: optionalText(
    { pattern: /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]+$/, must: 'a KMS key ARN' },
    DEPLOYED,
  ),
} as const satisfies EnvSpec;

export const OPERATOR_ENVIRONMENT = {
  ...TABLE,
  ...EVIDENCE_INDEX,
  ...EVIDENCE_ENVIRONMENT,
  /** How long a decided or expired proposal stays in the table, as long as the inbox (the audit keeps it for good). */
  ...RETENTION,
  INGEST_FUNCTION_NAME: text('nonEmpty'),
  FAILED_BATCHES_BUCKET: text('nonEmpty'),
  ...AUDIT_SEAL,
  /**
   * The kinds of action a second identity must approve (domain/approval.ts), comma-separated; empty: none. Unset (a
   * run without the stack): DEFAULT_APPROVAL_REQUIRED, the `approvalRequiredFor` setting's default.
   */
  APPROVAL_REQUIRED_FOR: optionalText(
    { pattern: /^([A-Z_]+(,[A-Z_]+)*)?$/, must: 'kinds of action, comma-separated (OPERATOR_CONTENT,ERASE)' },
    DEPLOYED,
  ),
  /** How long a proposal waits for its approval. */
  PROPOSAL_HOURS: int(1, MAX_PROPOSAL_HOURS, DEFAULT_PROPOSAL_HOURS, DEPLOYED),
  /** The bank's Identity Center user name is its directory e-mail (settings `identityCenterUserNameIsEmail`). */
  IDENTITY_CENTER_USER_NAME_IS_EMAIL: oneOf(['true', 'false'], 'false'),
  /** The stage's delivery policy per channel, as dispatch has it: what a resend's or a held notice's preview says. */
  CHANNEL_POLICIES: optionalText(),
} as const satisfies EnvSpec;

export type IngestEnvironment = EnvironmentOf<typeof INGEST_ENVIRONMENT>;
export type OperatorEnvironment = EnvironmentOf<typeof OPERATOR_ENVIRONMENT>;
export type DispatchEnvironment = EnvironmentOf<typeof DISPATCH_ENVIRONMENT>;
export type SweeperEnvironment = EnvironmentOf<typeof SWEEPER_ENVIRONMENT>;
export type FeedbackEnvironment = EnvironmentOf<typeof FEEDBACK_ENVIRONMENT>;
export type SmokeEnvironment = EnvironmentOf<typeof SMOKE_ENVIRONMENT>;
export type EvidenceEnvironment = EnvironmentOf<typeof EVIDENCE_ENVIRONMENT>;
export type EvidenceIndexEnvironment = EnvironmentOf<typeof EVIDENCE_INDEX>;
/** Where a (re-)PENDING notification goes: ingest, dispatch and the sweeper all write sweep keys. */
export type PlacementEnvironment = EnvironmentOf<typeof PLACEMENT>;
/** What dispatch and the sweeper both judge a send by (the stack builds it once for both). */
export type SendingEnvironment = EnvironmentOf<typeof SENDING>;

/** Every variable the four pipeline functions read, as one process that runs them all (the local run) sets them. */
export type PipelineRunEnvironment = RunEnvironmentOf<
  typeof INGEST_ENVIRONMENT & typeof DISPATCH_ENVIRONMENT & typeof SWEEPER_ENVIRONMENT & typeof FEEDBACK_ENVIRONMENT
>;

/** The send rates the SEND_RATE_* variables carry, by channel. */
export const sendRatesOf = (
  values: {
    readonly [K in (typeof SEND_RATE_KEYS)[Channel]]: number;
  },
): Readonly<Record<Channel, number>> => ({
  EMAIL: values[SEND_RATE_KEYS.EMAIL],
  PUSH: values[SEND_RATE_KEYS.PUSH],
  SMS: values[SEND_RATE_KEYS.SMS],
});

/** The SEND_RATE_* variables of the send rates. */
export const sendRateEnvironment = (rates: Readonly<Record<Channel, number>>) => ({
  [SEND_RATE_KEYS.EMAIL]: String(rates.EMAIL),
  [SEND_RATE_KEYS.PUSH]: String(rates.PUSH),
  [SEND_RATE_KEYS.SMS]: String(rates.SMS),
});

/** The send rates with no setting: each channel's SEND_RATE_* default (lib/settings.ts sendRatePerSecond). */
export const DEFAULT_SEND_RATES: Readonly<Record<Channel, number>> = sendRatesOf({
  SEND_RATE_EMAIL: SENDING.SEND_RATE_EMAIL.default,
  SEND_RATE_PUSH: SENDING.SEND_RATE_PUSH.default,
  SEND_RATE_SMS: SENDING.SEND_RATE_SMS.default,
});
