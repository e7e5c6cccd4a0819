/**
 * Environment configuration, parsed once at cold start. Each function's loader parses exactly the environment its
 * contract names (functions/contracts/environment.ts) — the type the stack builds — so what the stack sets and what the
 * function reads cannot drift apart. A missing or malformed variable fails the init with a message that names it;
 * optional variables have the defaults written beside their keys, required ones never do.
 */

import * as z from 'zod/mini';
import {
  DISPATCH_TIMING,
  deriveDispatchTiming,
  RUNTIME_TIMING_RULES,
  timingViolations,
} from '../contracts/dispatch-timing.ts';
import {
  DISPATCH_ENVIRONMENT,
  type EVIDENCE_ENVIRONMENT,
  FEEDBACK_ENVIRONMENT,
  INGEST_ENVIRONMENT,
  OPERATOR_ENVIRONMENT,
  SMOKE_ENVIRONMENT,
  SWEEPER_ENVIRONMENT,
  sendRatesOf,
} from '../contracts/environment.ts';
import type { EnvKey, EnvSpec, TextKey, ValuesOf } from '../contracts/environment-keys.ts';
import { type ApprovalPolicy, approvalPolicyOf } from '../domain/approval.ts';
import { type Brand, brandProblems, brandSchema } from '../domain/brand.ts';
import { CHANNELS } from '../domain/channels.ts';
import { type ChannelPolicies, DELIVERY_POLICIES, parseChannelPolicies } from '../domain/delivery-policy.ts';
import type { SweepPlacement } from '../domain/sweep-index.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

/** `env` read as `spec` says: each key's check, bounds and default; every problem named in one ConfigError. */
export function parseEnvironment<S extends EnvSpec>(spec: S, env: Env): ValuesOf<S> {
  const shape = Object.fromEntries(Object.entries(spec).map(([name, key]) => [name, schemaOf(key)]));
  const result = z.object(shape).safeParse(env);
  if (result.success) return result.data as ValuesOf<S>;
  const problems = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '?');
    return env[name] === undefined ? `${name} is required but not set` : `${name} is invalid: ${issue.message}`;
  });
  throw new ConfigError(`configuration error: ${problems.join('; ')}`);
}

function schemaOf(key: EnvKey): z.core.SomeType {
  switch (key.kind) {
    case 'int':
      return z._default(z.coerce.number().check(z.int(), z.gte(key.min), z.lte(key.max)), key.default);
    case 'oneOf':
      return z._default(z.enum(key.values as [string, ...string[]]), key.default);
    case 'text':
      return key.optional ? z.optional(textSchema(key.check)) : textSchema(key.check);
  }
}

function textSchema(check: TextKey['check']) {
  if (check === undefined) return z.string();
  if (check === 'nonEmpty') return z.string().check(z.minLength(1));
  if (check === 'email') return z.email();
  return z.string().check(z.regex(check.pattern, check.must));
}

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

/** The rule a lease must meet against what a holder still does after its claim (loadDispatchConfig). */
export const LEASE_EXCEEDS_PACING_AND_SEND =
  'LEASE_SECONDS must exceed MAX_PACING_WAIT_MS + SEND_TIMEOUT_MS + the write allowance: a holder waiting for a send token must never lose its lease';

const placementOf = (c: { PENDING_THRESHOLD_SECONDS: number; SWEEP_SHARDS: number }): SweepPlacement => ({
  pendingThresholdMs: c.PENDING_THRESHOLD_SECONDS * 1000,
  sweepShards: c.SWEEP_SHARDS,
});

export function loadIngestConfig(env: Env = process.env) {
  const c = parseEnvironment(INGEST_ENVIRONMENT, env);
  return {
    tableName: c.TABLE_NAME,
    retentionDays: c.INBOX_RETENTION_DAYS,
    ...placementOf(c),
    concurrency: c.INGEST_CONCURRENCY,
    maxEventBytes: c.MAX_EVENT_BYTES,
    transactionAttempts: c.TRANSACTION_ATTEMPTS,
    /** 0 disables the rule. */
    maxEventAgeSeconds: c.MAX_EVENT_AGE_SECONDS,
    schemaRegistry: schemaRegistryOf(c),
    /** Where a secret's MAC comes from: the stack's KMS key, or the local run's key file; neither: none. */
    secretMacKey:
      c.SECRET_MAC_KEY_ID !== undefined
        ? ({ kind: 'kms', keyId: c.SECRET_MAC_KEY_ID } as const)
        : c.SECRET_MAC_KEY_FILE !== undefined
          ? ({ kind: 'file', path: c.SECRET_MAC_KEY_FILE } as const)
          : undefined,
  };
}

/** Where ingest reads the writer schemas of Avro and Protobuf records (functions/ingest/schema-registry.ts). */
export type SchemaRegistrySetting =
  | { readonly kind: 'glue' }
  | { readonly kind: 'confluent'; readonly url: string; readonly secretArn?: string };

/**
 * SCHEMA_REGISTRY_KIND confluent (SCHEMA_REGISTRY_URL, and SCHEMA_REGISTRY_SECRET_ARN for basic auth) or glue.
 * Unset: none, and a schema-registry record is quarantined as UNKNOWN_SCHEMA.
 */
function schemaRegistryOf(c: ValuesOf<typeof INGEST_ENVIRONMENT>): SchemaRegistrySetting | undefined {
  const kind = c.SCHEMA_REGISTRY_KIND;
  if (kind === undefined || kind === '') return undefined;
  if (kind === 'glue') return { kind };
  if (kind !== 'confluent')
    throw new ConfigError(`configuration error: SCHEMA_REGISTRY_KIND is invalid: confluent or glue, not ${kind}`);
  const url = c.SCHEMA_REGISTRY_URL;
  if (url === undefined || !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new ConfigError(
      'configuration error: SCHEMA_REGISTRY_URL must be the http(s) URL of the Confluent schema registry',
    );
  }
  const secretArn = c.SCHEMA_REGISTRY_SECRET_ARN;
  return secretArn === undefined || secretArn === '' ? { kind, url } : { kind, url, secretArn };
}

export function loadDispatchConfig(env: Env = process.env) {
  const c = parseEnvironment(DISPATCH_ENVIRONMENT, env);
  checkDispatchTiming(c);
  return {
    tableName: c.TABLE_NAME,
    evidenceIndexTableName: c.EVIDENCE_INDEX_TABLE_NAME,
    senderEmail: c.SENDER_EMAIL,
    brand: brandOf(c.BRAND),
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
    sendRates: sendRatesOf(c),
    maxAgeMs: c.MAX_AGE_SECONDS * 1000,
    ...placementOf(c),
    evidence: evidenceOf(c),
    noticeTiming: c.NOTICE_TIMING,
  };
}

/**
 * The timing rules a running function can judge from its own variables (the stack checks them all at synth): a lease
 * a send could outlive would let a live holder be taken over; a connect timeout as long as the send timeout could not
 * tell "never connected" from "sent, no answer".
 */
function checkDispatchTiming(c: ValuesOf<typeof DISPATCH_ENVIRONMENT>): void {
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
}

export function loadSweeperConfig(env: Env = process.env) {
  const c = parseEnvironment(SWEEPER_ENVIRONMENT, env);
  return {
    tableName: c.TABLE_NAME,
    evidenceIndexTableName: c.EVIDENCE_INDEX_TABLE_NAME,
    policies: channelPoliciesOf(c.CHANNEL_POLICIES),
    ...placementOf(c),
    limit: c.SWEEP_LIMIT,
    pageSize: c.SWEEP_PAGE_SIZE,
    concurrency: c.SWEEP_CONCURRENCY,
    intervalMs: c.SWEEP_INTERVAL_SECONDS * 1000,
    deadlineMarginMs: c.DEADLINE_MARGIN_MS,
    maxSendAttempts: c.MAX_SEND_ATTEMPTS,
    sendRates: sendRatesOf(c),
    maxAgeMs: c.MAX_AGE_SECONDS * 1000,
    evidence: evidenceOf(c),
    // Dispatch's rendering and sending values: what rebuilding a send's record needs (recover-evidence.ts).
    rebuild: { senderEmail: c.SENDER_EMAIL, configurationSet: c.SES_CONFIGURATION_SET, brand: brandOf(c.BRAND) },
  };
}

export function loadFeedbackConfig(env: Env = process.env) {
  const c = parseEnvironment(FEEDBACK_ENVIRONMENT, env);
  return { tableName: c.TABLE_NAME, evidence: evidenceOf(c) };
}
export type FeedbackConfig = ReturnType<typeof loadFeedbackConfig>;

/**
 * Where evidence goes (docs/evidence-and-privacy.md): the bucket or, for the local run, a folder; not both. Neither:
 * this function keeps no evidence.
 */
export function evidenceOf(c: ValuesOf<typeof EVIDENCE_ENVIRONMENT>) {
  if (c.EVIDENCE_BUCKET !== undefined && c.EVIDENCE_DIR !== undefined) {
    throw new ConfigError('configuration error: set EVIDENCE_BUCKET or EVIDENCE_DIR, not both');
  }
  const store =
    c.EVIDENCE_BUCKET !== undefined
      ? ({ kind: 's3', bucket: c.EVIDENCE_BUCKET, lockMode: c.EVIDENCE_LOCK_MODE } as const)
      : c.EVIDENCE_DIR !== undefined
        ? ({ kind: 'dir', dir: c.EVIDENCE_DIR } as const)
        : undefined;
  return {
    store,
    retentionDays: c.EVIDENCE_RETENTION_DAYS,
    timeoutMs: c.EVIDENCE_TIMEOUT_MS,
    spoolBelow: c.EVIDENCE_SPOOL_BELOW,
    spoolTableName: c.EVIDENCE_SPOOL_TABLE_NAME,
  };
}
export type EvidenceConfig = ReturnType<typeof evidenceOf>;

export function loadOperatorConfig(env: Env = process.env) {
  const c = parseEnvironment(OPERATOR_ENVIRONMENT, env);
  const store = evidenceOf(c).store;
  if (store?.kind !== 's3') throw new ConfigError('configuration error: EVIDENCE_BUCKET is required but not set');
  return {
    tableName: c.TABLE_NAME,
    evidenceIndexTableName: c.EVIDENCE_INDEX_TABLE_NAME,
    evidenceSpoolTableName: c.EVIDENCE_SPOOL_TABLE_NAME,
    evidence: store,
    ingestFunctionName: c.INGEST_FUNCTION_NAME,
    failedBatchesBucket: c.FAILED_BATCHES_BUCKET,
    auditSealKeyArn: c.AUDIT_SEAL_KEY_ARN,
    proposalKeepDays: c.INBOX_RETENTION_DAYS,
    policy: approvalPolicy(c.APPROVAL_REQUIRED_FOR, c.PROPOSAL_HOURS, c.IDENTITY_CENTER_USER_NAME_IS_EMAIL === 'true'),
    channelPolicies: channelPoliciesOf(c.CHANNEL_POLICIES),
  };
}

/** Four eyes as the environment sets it: the kinds named (none when empty; the default when unset). */
export function approvalPolicy(kinds: string | undefined, hours: number, userNameIsEmail = false): ApprovalPolicy {
  const parsed = approvalPolicyOf(kinds, hours, userNameIsEmail);
  if ('unknown' in parsed) {
    throw new ConfigError(
      `configuration error: APPROVAL_REQUIRED_FOR names no such kind: ${parsed.unknown.join(', ')}`,
    );
  }
  return parsed.policy;
}

export function loadSmokeProducerConfig(env: Env = process.env) {
  const c = parseEnvironment(SMOKE_ENVIRONMENT, env);
  const contacts = (c.SMOKE_CONTACTS ?? '').split(',').filter((x) => x !== '');
  return { topic: c.TOPIC, brokers: c.BOOTSTRAP_BROKERS.split(','), region: c.AWS_REGION, contacts };
}
export type SmokeProducerConfig = ReturnType<typeof loadSmokeProducerConfig>;

/**
 * The bank's identity (`BRAND`: JSON, the stack writes it from the `brand` setting), checked at cold start by the same
 * schema the synth used. Required: a message without the bank's name is not sent under a placeholder one.
 */
export function brandOf(text: string | undefined): Brand {
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
