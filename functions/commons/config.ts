/**
 * Environment configuration, parsed once at cold start. A missing or malformed variable fails the init with a message
 * that names it; optional settings have documented defaults, required ones never do.
 */

import * as z from 'zod/mini';
import {
  DEFAULT_INBOX_RETENTION_DAYS,
  DEFAULT_NOTIFICATION_MAX_AGE_HOURS,
  DEFAULT_SEND_RATES,
} from '../contracts/defaults.ts';
import {
  DISPATCH_TIMING,
  deriveDispatchTiming,
  RUNTIME_TIMING_RULES,
  timingViolations,
} from '../contracts/dispatch-timing.ts';
import { type Brand, brandProblems, brandSchema } from '../domain/brand.ts';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import { type ChannelPolicies, DELIVERY_POLICIES, parseChannelPolicies } from '../domain/delivery-policy.ts';
import { DEFAULT_EVIDENCE_RETENTION_DAYS } from '../domain/evidence.ts';
import { DEFAULT_MAX_SEND_ATTEMPTS } from '../domain/send-outcome.ts';
import { MAX_SWEEP_SHARDS, SWEEP_SHARDS } from '../domain/sweep-index.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function parseEnv<S extends z.ZodMiniObject>(schema: S, env: Env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '?');
    return env[name] === undefined ? `${name} is required but not set` : `${name} is invalid: ${issue.message}`;
  });
  throw new ConfigError(`configuration error: ${problems.join('; ')}`);
}

const int = (min: number, max: number, fallback: number) =>
  z._default(z.coerce.number().check(z.int(), z.gte(min), z.lte(max)), fallback);

/** CHANNEL_POLICIES ("EMAIL=AT_MOST_ONCE,SMS=AT_LEAST_ONCE"); channels not named keep AT_MOST_ONCE. */
export function channelPoliciesOf(text: string | undefined): ChannelPolicies {
  const policies = parseChannelPolicies(text);
  if ('malformed' in policies) {
    throw new ConfigError(
      `configuration error: CHANNEL_POLICIES entry "${policies.malformed}" must be <${CHANNELS.join('|')}>=<${DELIVERY_POLICIES.join('|')}>`,
    );
  }
  return policies;
}

const tableEnv = { TABLE_NAME: z.string().check(z.minLength(1)) };

/** The rule a lease must meet against what a holder still does after its claim (loadDispatchConfig). */
export const LEASE_EXCEEDS_PACING_AND_SEND =
  'LEASE_SECONDS must exceed MAX_PACING_WAIT_MS + SEND_TIMEOUT_MS + the write allowance: a holder waiting for a send token must never lose its lease';

/**
 * Sends per second each channel may use, all dispatch invocations together (the account's quotas: SES MaxSendRate,
 * SNS SMS and push rates). Defaults: EMAIL 14 (a common starting SES production rate — set your account's own,
 * `aws ses get-send-quota`), SMS 20 (SNS's default transactional SMS rate in most regions), PUSH 100 (far below SNS's
 * Publish quota; the platform services are the real limit).
 */
const rateEnv = {
  SEND_RATE_EMAIL: int(1, 100_000, DEFAULT_SEND_RATES.EMAIL),
  SEND_RATE_PUSH: int(1, 100_000, DEFAULT_SEND_RATES.PUSH),
  SEND_RATE_SMS: int(1, 100_000, DEFAULT_SEND_RATES.SMS),
};
type SendRates = Readonly<Record<Channel, number>>;
const sendRates = (c: { SEND_RATE_EMAIL: number; SEND_RATE_PUSH: number; SEND_RATE_SMS: number }): SendRates => ({
  EMAIL: c.SEND_RATE_EMAIL,
  PUSH: c.SEND_RATE_PUSH,
  SMS: c.SEND_RATE_SMS,
});
/** Past this age since createdAt a notification ends FAILED: EXPIRED instead of being sent late. */
const maxAgeEnv = { MAX_AGE_SECONDS: int(60, 30 * 86_400, DEFAULT_NOTIFICATION_MAX_AGE_HOURS * 3600) };
const stuckEnv = { PENDING_THRESHOLD_SECONDS: int(1, 86_400, DISPATCH_TIMING.stuckAfterSeconds) };
/** Sends that may have reached the provider before a notification ends FAILED: RETRIES_EXHAUSTED (dispatch and sweeper). */
const attemptsEnv = { MAX_SEND_ATTEMPTS: int(1, 20, DEFAULT_MAX_SEND_ATTEMPTS) };
const marginEnv = { DEADLINE_MARGIN_MS: int(0, 60_000, DISPATCH_TIMING.deadlineMarginMs) };
/** Shards of the sweep index per (state, channel): the stack sizes it from its peak (sweepShardsFor). */
const shardEnv = { SWEEP_SHARDS: int(1, MAX_SWEEP_SHARDS, SWEEP_SHARDS) };

export function loadIngestConfig(env: Env = process.env) {
  const c = parseEnv(
    z.object({
      ...tableEnv,
      INBOX_RETENTION_DAYS: int(1, 3650, DEFAULT_INBOX_RETENTION_DAYS),
      INGEST_CONCURRENCY: int(1, 256, 16),
      MAX_EVENT_BYTES: int(256, 1_000_000, 65_536),
      TRANSACTION_ATTEMPTS: int(1, 10, 4),
      ...stuckEnv,
      ...shardEnv,
      // An event older than this when ingested is recorded but not sent (a day-old "transfer complete" misleads).
      MAX_EVENT_AGE_SECONDS: int(0, 36_500 * 86_400, 86_400),
    }),
    env,
  );
  return {
    tableName: c.TABLE_NAME,
    retentionDays: c.INBOX_RETENTION_DAYS,
    /** sweepAt of a new notification is createdAt + this: the sweeper's stuck threshold. */
    stuckAfterMs: c.PENDING_THRESHOLD_SECONDS * 1000,
    concurrency: c.INGEST_CONCURRENCY,
    sweepShards: c.SWEEP_SHARDS,
    maxEventBytes: c.MAX_EVENT_BYTES,
    transactionAttempts: c.TRANSACTION_ATTEMPTS,
    /** 0 disables the rule. */
    maxEventAgeSeconds: c.MAX_EVENT_AGE_SECONDS,
  };
}

export function loadDispatchConfig(env: Env = process.env) {
  const c = parseEnv(
    z.object({
      ...tableEnv,
      SENDER_EMAIL: z.email(),
      SES_CONFIGURATION_SET: z.optional(z.string().check(z.minLength(1))),
      CHANNEL_POLICIES: z.optional(z.string()),
      // Our account (the stack passes it) and region (Lambda sets it): a push endpoint outside them is refused by our
      // own IAM for that endpoint alone. Without the account, such a refusal holds the channel (the cautious reading).
      ACCOUNT_ID: z.optional(z.string().check(z.regex(/^\d{12}$/, 'an AWS account id: 12 digits'))),
      AWS_REGION: z.optional(z.string().check(z.minLength(1))),
      // The platform applications the stack lets dispatch publish to (comma-separated; empty: none): an endpoint of
      // any other is refused by our own IAM for that endpoint alone. Absent (a run without the stack): not judged.
      PUSH_APPLICATION_ARNS: z.optional(z.string()),
      // The defaults are the stack's (dispatch-timing.ts), so a function run without them behaves as deployed.
      LEASE_SECONDS: int(10, 3600, DISPATCH_TIMING.leaseSeconds),
      SEND_TIMEOUT_MS: int(100, 60_000, DISPATCH_TIMING.sendTimeoutMs),
      CONNECT_TIMEOUT_MS: int(50, 60_000, DISPATCH_TIMING.connectTimeoutMs),
      ...marginEnv,
      ...attemptsEnv,
      /** First step of the growing backoff after a deferral; it doubles up to RETRY_MAX_MS. */
      RETRY_BASE_MS: int(1, 60_000, 1_000),
      RETRY_MAX_MS: int(1, 3_600_000, 300_000),
      /** A retry due within this is waited for in the invocation; a later one is left to the sweeper. */
      NEAR_RETRY_MS: int(0, 60_000, 2_000),
      /** The longest one record waits for a send token before it is deferred (also bounded by the deadline). */
      MAX_PACING_WAIT_MS: int(0, 60_000, 10_000),
      /** How long an account-level failure holds the channel (the circuit breaker). */
      BREAKER_HOLD_SECONDS: int(1, 3_600, 60),
      DISPATCH_CONCURRENCY: int(1, 100, DISPATCH_TIMING.concurrency),
      ...rateEnv,
      ...maxAgeEnv,
      ...stuckEnv,
      ...shardEnv,
    }),
    env,
  );
  // The timing rules a running function can judge from its own variables (the stack checks them all at synth): a
  // lease a send could outlive would let a live holder be taken over; a connect timeout as long as the send timeout
  // could not tell "never connected" from "sent, no answer".
  const timing = deriveDispatchTiming({
    leaseSeconds: c.LEASE_SECONDS,
    sendTimeoutMs: c.SEND_TIMEOUT_MS,
    connectTimeoutMs: c.CONNECT_TIMEOUT_MS,
  });
  const broken = timingViolations(timing)
    .map((v) => v.slice(0, v.indexOf(':')))
    .filter((rule): rule is keyof typeof RUNTIME_TIMING_RULES => rule in RUNTIME_TIMING_RULES);
  // After its claim a holder may wait for a send token (up to MAX_PACING_WAIT_MS) and then send: a lease shorter than
  // that would let the sweeper take over a live holder that is only waiting — and, on an at-least-once channel, a
  // second holder send the same notification. (Each record's wait is also bounded by its lease: defense in depth.)
  const afterClaimMs = c.MAX_PACING_WAIT_MS + c.SEND_TIMEOUT_MS + DISPATCH_TIMING.writeAllowanceMs;
  const leaseProblems = c.LEASE_SECONDS * 1000 > afterClaimMs ? [] : [LEASE_EXCEEDS_PACING_AND_SEND];
  if (broken.length + leaseProblems.length > 0) {
    throw new ConfigError(
      `configuration error: ${[...broken.map((rule) => RUNTIME_TIMING_RULES[rule]), ...leaseProblems].join('; ')}`,
    );
  }
  return {
    tableName: c.TABLE_NAME,
    senderEmail: c.SENDER_EMAIL,
    accountId: c.ACCOUNT_ID,
    region: c.AWS_REGION,
    pushApplications:
      c.PUSH_APPLICATION_ARNS === undefined ? undefined : c.PUSH_APPLICATION_ARNS.split(',').filter((a) => a !== ''),
    configurationSet: c.SES_CONFIGURATION_SET,
    policies: channelPoliciesOf(c.CHANNEL_POLICIES),
    leaseMs: c.LEASE_SECONDS * 1000,
    sendTimeoutMs: c.SEND_TIMEOUT_MS,
    connectTimeoutMs: c.CONNECT_TIMEOUT_MS,
    deadlineMarginMs: c.DEADLINE_MARGIN_MS,
    maxSendAttempts: c.MAX_SEND_ATTEMPTS,
    retryBaseMs: c.RETRY_BASE_MS,
    retryMaxMs: c.RETRY_MAX_MS,
    nearRetryMs: c.NEAR_RETRY_MS,
    maxPacingWaitMs: c.MAX_PACING_WAIT_MS,
    breakerHoldMs: c.BREAKER_HOLD_SECONDS * 1000,
    concurrency: c.DISPATCH_CONCURRENCY,
    sendRates: sendRates(c),
    maxAgeMs: c.MAX_AGE_SECONDS * 1000,
    stuckAfterMs: c.PENDING_THRESHOLD_SECONDS * 1000,
    sweepShards: c.SWEEP_SHARDS,
  };
}

export function loadSweeperConfig(env: Env = process.env) {
  const c = parseEnv(
    z.object({
      ...tableEnv,
      CHANNEL_POLICIES: z.optional(z.string()),
      ...stuckEnv,
      /** Items one run may examine; the run also stops at its deadline. */
      SWEEP_LIMIT: int(1, 100_000, 10_000),
      SWEEP_PAGE_SIZE: int(1, 1_000, 100),
      SWEEP_CONCURRENCY: int(1, 64, 16),
      /** The schedule's period: a run re-drives at most a channel's rate × this many PENDING items. */
      SWEEP_INTERVAL_SECONDS: int(1, 3_600, DISPATCH_TIMING.sweeperIntervalSeconds),
      ...marginEnv,
      ...attemptsEnv,
      ...rateEnv,
      ...maxAgeEnv,
      ...shardEnv,
    }),
    env,
  );
  return {
    tableName: c.TABLE_NAME,
    policies: channelPoliciesOf(c.CHANNEL_POLICIES),
    sweepShards: c.SWEEP_SHARDS,
    pendingThresholdMs: c.PENDING_THRESHOLD_SECONDS * 1000,
    limit: c.SWEEP_LIMIT,
    pageSize: c.SWEEP_PAGE_SIZE,
    concurrency: c.SWEEP_CONCURRENCY,
    intervalMs: c.SWEEP_INTERVAL_SECONDS * 1000,
    deadlineMarginMs: c.DEADLINE_MARGIN_MS,
    maxSendAttempts: c.MAX_SEND_ATTEMPTS,
    sendRates: sendRates(c),
    maxAgeMs: c.MAX_AGE_SECONDS * 1000,
  };
}

/**
 * Where evidence goes (docs/evidence-and-privacy.md): EVIDENCE_BUCKET (the stack's Object Lock bucket) or, for the local
 * run, EVIDENCE_DIR (a folder); not both. Neither: this function keeps no evidence (the stack always sets the bucket;
 * an infra test pins it). The retention is a setting in days (default seven years), one value for every notice type
 * until the catalogue gives each type its own.
 */
export function loadEvidenceConfig(env: Env = process.env) {
  const c = parseEnv(
    z.object({
      EVIDENCE_BUCKET: z.optional(z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name'))),
      EVIDENCE_DIR: z.optional(z.string().check(z.minLength(1))),
      EVIDENCE_LOCK_MODE: z._default(z.enum(['GOVERNANCE', 'COMPLIANCE']), 'GOVERNANCE'),
      EVIDENCE_RETENTION_DAYS: int(1, 36_500, DEFAULT_EVIDENCE_RETENTION_DAYS),
      /** The longest an evidence write may hold the record after its send; past it the record waits as a gap. */
      EVIDENCE_TIMEOUT_MS: int(100, 30_000, 2_000),
    }),
    env,
  );
  if (c.EVIDENCE_BUCKET !== undefined && c.EVIDENCE_DIR !== undefined) {
    throw new ConfigError('configuration error: set EVIDENCE_BUCKET or EVIDENCE_DIR, not both');
  }
  const store =
    c.EVIDENCE_BUCKET !== undefined
      ? ({ kind: 's3', bucket: c.EVIDENCE_BUCKET, lockMode: c.EVIDENCE_LOCK_MODE } as const)
      : c.EVIDENCE_DIR !== undefined
        ? ({ kind: 'dir', dir: c.EVIDENCE_DIR } as const)
        : undefined;
  return { store, retentionDays: c.EVIDENCE_RETENTION_DAYS, timeoutMs: c.EVIDENCE_TIMEOUT_MS };
}
export type EvidenceConfig = ReturnType<typeof loadEvidenceConfig>;

export function loadFeedbackConfig(env: Env = process.env) {
  const c = parseEnv(z.object({ ...tableEnv }), env);
  return { tableName: c.TABLE_NAME };
}
export type FeedbackConfig = ReturnType<typeof loadFeedbackConfig>;

/**
 * The smoke producer (functions/smoke/): the topic it writes the smoke event to, the cluster's IAM bootstrap brokers
 * (the stack reads them at deploy: kafka GetBootstrapBrokers), and the region its IAM token is signed for.
 */
export function loadSmokeProducerConfig(env: Env = process.env) {
  const c = parseEnv(
    z.object({
      TOPIC: z.string().check(z.minLength(1)),
      BOOTSTRAP_BROKERS: z.string().check(z.regex(/^[^\s,]+(,[^\s,]+)*$/, 'must be host:port,host:port')),
      AWS_REGION: z.string().check(z.minLength(1)),
    }),
    env,
  );
  return { topic: c.TOPIC, brokers: c.BOOTSTRAP_BROKERS.split(','), region: c.AWS_REGION };
}
export type SmokeProducerConfig = ReturnType<typeof loadSmokeProducerConfig>;

/**
 * The bank's identity (`BRAND`: JSON, the stack writes it from the `brand` setting), checked at cold start by the same
 * schema the synth used. Required: a message without the bank's name is not sent under a placeholder one.
 */
export function loadBrandConfig(env: Env = process.env): Brand {
  const text = env.BRAND;
  if (text === undefined || text === '') throw new ConfigError('configuration error: BRAND is required but not set');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError('configuration error: BRAND is invalid: not JSON');
  }
  const result = brandSchema.safeParse(json);
  if (result.success) return result.data;
  throw new ConfigError(
    `configuration error: BRAND is invalid: ${brandProblems(json, result.error.issues).join('; ')}`,
  );
}
