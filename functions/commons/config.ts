/**
 * Environment configuration, parsed once at cold start. A missing or malformed variable fails the init with a message
 * that names it; optional settings have documented defaults, required ones never do.
 */
import * as z from 'zod/mini';
import { type Brand, brandProblems, brandSchema } from '../domain/brand.ts';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import { type ChannelPolicies, DELIVERY_POLICIES, type DeliveryPolicy } from '../domain/notification.ts';

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

/** "EMAIL=AT_MOST_ONCE,SMS=AT_LEAST_ONCE"; channels not named keep AT_MOST_ONCE, the safe default for a bank. */
export function parseChannelPolicies(text: string | undefined): ChannelPolicies {
  const policies: Record<Channel, DeliveryPolicy> = {
    EMAIL: 'AT_MOST_ONCE',
    PUSH: 'AT_MOST_ONCE',
    SMS: 'AT_MOST_ONCE',
  };
  for (const entry of (text ?? '').split(',').filter((e) => e.trim() !== '')) {
    const [channel, policy] = entry.split('=').map((s) => s.trim());
    if (!CHANNELS.includes(channel as Channel) || !DELIVERY_POLICIES.includes(policy as DeliveryPolicy)) {
      throw new ConfigError(
        `configuration error: CHANNEL_POLICIES entry "${entry}" must be <${CHANNELS.join('|')}>=<${DELIVERY_POLICIES.join('|')}>`,
      );
    }
    policies[channel as Channel] = policy as DeliveryPolicy;
  }
  return policies;
}

const tableEnv = { TABLE_NAME: z.string().check(z.minLength(1)) };

export function loadIngestConfig(env: Env = process.env) {
  const c = parseEnv(
    z.object({
      ...tableEnv,
      INBOX_RETENTION_DAYS: int(1, 3650, 35),
      INGEST_CONCURRENCY: int(1, 256, 16),
      MAX_EVENT_BYTES: int(256, 1_000_000, 65_536),
      TRANSACTION_ATTEMPTS: int(1, 10, 4),
      // An event older than this when ingested is recorded but not sent (a day-old "transfer complete" misleads).
      MAX_EVENT_AGE_SECONDS: int(0, 36_500 * 86_400, 86_400),
    }),
    env,
  );
  return {
    tableName: c.TABLE_NAME,
    retentionDays: c.INBOX_RETENTION_DAYS,
    concurrency: c.INGEST_CONCURRENCY,
    maxEventBytes: c.MAX_EVENT_BYTES,
    transactionAttempts: c.TRANSACTION_ATTEMPTS,
    /** 0 disables the rule. */
    maxEventAgeSeconds: c.MAX_EVENT_AGE_SECONDS,
  };
}
export type IngestConfig = ReturnType<typeof loadIngestConfig>;

export function loadDispatchConfig(env: Env = process.env) {
  const c = parseEnv(
    z.object({
      ...tableEnv,
      SENDER_EMAIL: z.email(),
      SES_CONFIGURATION_SET: z.optional(z.string().check(z.minLength(1))),
      CHANNEL_POLICIES: z.optional(z.string()),
      LEASE_SECONDS: int(10, 3600, 300),
      SEND_TIMEOUT_MS: int(100, 60_000, 5_000),
      MAX_SEND_ATTEMPTS: int(1, 20, 5),
      RETRY_BASE_MS: int(1, 60_000, 200),
      DISPATCH_CONCURRENCY: int(1, 100, 10),
    }),
    env,
  );
  // A lease shorter than a send could be taken over while the send is still in flight: refuse to start.
  if (c.LEASE_SECONDS * 1000 <= c.SEND_TIMEOUT_MS * 2) {
    throw new ConfigError('configuration error: LEASE_SECONDS must exceed twice SEND_TIMEOUT_MS');
  }
  return {
    tableName: c.TABLE_NAME,
    senderEmail: c.SENDER_EMAIL,
    configurationSet: c.SES_CONFIGURATION_SET,
    policies: parseChannelPolicies(c.CHANNEL_POLICIES),
    leaseMs: c.LEASE_SECONDS * 1000,
    sendTimeoutMs: c.SEND_TIMEOUT_MS,
    maxSendAttempts: c.MAX_SEND_ATTEMPTS,
    retryBaseMs: c.RETRY_BASE_MS,
    concurrency: c.DISPATCH_CONCURRENCY,
  };
}
export type DispatchConfig = ReturnType<typeof loadDispatchConfig>;

export function loadSweeperConfig(env: Env = process.env) {
  const c = parseEnv(
    z.object({
      ...tableEnv,
      CHANNEL_POLICIES: z.optional(z.string()),
      PENDING_THRESHOLD_SECONDS: int(1, 86_400, 900),
      SWEEP_LIMIT: int(1, 10_000, 500),
      MAX_SEND_ATTEMPTS: int(1, 20, 5),
    }),
    env,
  );
  return {
    tableName: c.TABLE_NAME,
    policies: parseChannelPolicies(c.CHANNEL_POLICIES),
    pendingThresholdMs: c.PENDING_THRESHOLD_SECONDS * 1000,
    limit: c.SWEEP_LIMIT,
    maxSendAttempts: c.MAX_SEND_ATTEMPTS,
  };
}
export type SweeperConfig = ReturnType<typeof loadSweeperConfig>;

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
