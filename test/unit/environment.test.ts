/**
 * The contract between the stack and each function (functions/contracts/environment.ts): one spec per function, from
 * which follow both the type the stack, the local run and the chaos world build, and what the function's loader
 * parses at cold start.
 */
import { describe, expect, it } from 'vitest';
import {
  loadDispatchConfig,
  loadFeedbackConfig,
  loadIngestConfig,
  loadSmokeProducerConfig,
  loadSweeperConfig,
} from '../../functions/commons/config.ts';
import {
  DISPATCH_ENVIRONMENT,
  FEEDBACK_ENVIRONMENT,
  INGEST_ENVIRONMENT,
  type IngestEnvironment,
  SMOKE_ENVIRONMENT,
  SWEEPER_ENVIRONMENT,
} from '../../functions/contracts/environment.ts';
import type { EnvSpec } from '../../functions/contracts/environment-keys.ts';
import { brandEnvValue } from '../../functions/domain/brand.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import type { LocalEnvironment } from '../../tools/local/pipeline.ts';

type Env = Record<string, string | undefined>;
const REQUIRED = {
  TABLE_NAME: 't',
  EVIDENCE_INDEX_TABLE_NAME: 't-evidence-index',
  SENDER_EMAIL: 'n@example.com',
  BRAND: brandEnvValue(EXAMPLE_BRAND),
  TOPIC: 'notifications',
  BOOTSTRAP_BROKERS: 'b-1.example:9098',
  AWS_REGION: 'us-east-1',
};
const FUNCTIONS: [string, EnvSpec, (env: Env) => unknown][] = [
  ['ingest', INGEST_ENVIRONMENT, loadIngestConfig],
  ['dispatch', DISPATCH_ENVIRONMENT, loadDispatchConfig],
  ['sweeper', SWEEPER_ENVIRONMENT, loadSweeperConfig],
  ['feedback', FEEDBACK_ENVIRONMENT, loadFeedbackConfig],
  ['smoke producer', SMOKE_ENVIRONMENT, loadSmokeProducerConfig],
];
/** What a spec requires, with a value each. */
const requiredOf = (spec: EnvSpec): Env =>
  Object.fromEntries(
    Object.entries(spec)
      .filter(([, key]) => key.kind === 'text' && !key.optional)
      .map(([name]) => [name, REQUIRED[name as keyof typeof REQUIRED]]),
  );

describe("each function's environment: one contract for the stack and the function", () => {
  it('the loader reads every number its contract names: out of its bounds, it fails the cold start by name', () => {
    for (const [fn, spec, load] of FUNCTIONS) {
      const required = requiredOf(spec);
      expect(() => load(required), fn).not.toThrow();
      for (const [name, key] of Object.entries(spec)) {
        if (key.kind !== 'int') continue;
        expect(() => load({ ...required, [name]: String(key.max + 1) }), `${fn} ${name}`).toThrow(
          new RegExp(`${name} is invalid`),
        );
      }
    }
  });

  it('the loader refuses each variable its contract requires when it is not set, by name', () => {
    for (const [fn, spec, load] of FUNCTIONS) {
      const required = requiredOf(spec);
      for (const name of Object.keys(required)) {
        expect(() => load({ ...required, [name]: undefined }), `${fn} ${name}`).toThrow(
          new RegExp(`${name} is required but not set`),
        );
      }
    }
  });

  it('a renamed, unknown or missing variable does not compile where the stack or a local run builds it', () => {
    const ingest: IngestEnvironment = {
      TABLE_NAME: 't',
      INBOX_RETENTION_DAYS: '35',
      INGEST_CONCURRENCY: '16',
      MAX_EVENT_AGE_SECONDS: '86400',
      PENDING_THRESHOLD_SECONDS: '900',
      SWEEP_SHARDS: '8',
      SECRET_MAC_KEY_ID: 'arn:aws:kms:us-east-1:123456789012:key/mac',
    };
    // npm run build (tsc) checks these: each line must stay a compile error.
    // @ts-expect-error a variable the contract does not name: a renamed one
    const renamed: IngestEnvironment = { ...ingest, STUCK_AFTER_SECONDS: '900' };
    // @ts-expect-error a variable the stack always sets, left out
    const missing: IngestEnvironment = { TABLE_NAME: 't', INBOX_RETENTION_DAYS: '35' };
    // @ts-expect-error the local run's and the chaos world's variables are the contracts' too
    const local: LocalEnvironment['extra'] = { PENDING_THRESHOLD_MS: '1000' };
    expect(loadIngestConfig(ingest)).toMatchObject({ tableName: 't', sweepShards: 8 });
    expect([renamed, missing, local]).toHaveLength(3);
  });
});
