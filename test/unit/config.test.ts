import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  channelPoliciesOf,
  loadDispatchConfig,
  loadIngestConfig,
  loadSweeperConfig,
} from '../../functions/commons/config.ts';
import { brandEnvValue } from '../../functions/domain/brand.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';

const BRAND = brandEnvValue(EXAMPLE_BRAND);

describe('configuration, validated once at cold start', () => {
  it('names a missing required variable', () => {
    expect(() => loadIngestConfig({})).toThrow(
      new ConfigError('configuration error: TABLE_NAME is required but not set'),
    );
    expect(() => loadDispatchConfig({ TABLE_NAME: 't' })).toThrow(/SENDER_EMAIL is required but not set/);
  });

  it('names an invalid variable', () => {
    expect(() => loadIngestConfig({ TABLE_NAME: 't', INGEST_CONCURRENCY: '0' })).toThrow(
      /INGEST_CONCURRENCY is invalid/,
    );
    expect(() =>
      loadDispatchConfig({ TABLE_NAME: 't', EVIDENCE_INDEX_TABLE_NAME: 'i', SENDER_EMAIL: 'not-an-email', BRAND }),
    ).toThrow(/SENDER_EMAIL is invalid/);
    expect(() =>
      loadDispatchConfig({
        TABLE_NAME: 't',
        EVIDENCE_INDEX_TABLE_NAME: 'i',
        SENDER_EMAIL: 'n@example.com',
        BRAND,
        LEASE_SECONDS: '10',
        SEND_TIMEOUT_MS: '6000',
      }),
    ).toThrow(/LEASE_SECONDS must exceed twice SEND_TIMEOUT_MS/);
  });

  it('refuses a lease a holder could lose while it only waits for a send token and sends', () => {
    const base = {
      TABLE_NAME: 't',
      EVIDENCE_INDEX_TABLE_NAME: 'i',
      SENDER_EMAIL: 'n@example.com',
      BRAND,
      LEASE_SECONDS: '12',
      SEND_TIMEOUT_MS: '2000',
    };
    expect(() => loadDispatchConfig({ ...base, MAX_PACING_WAIT_MS: '10000' })).toThrow(
      /LEASE_SECONDS must exceed MAX_PACING_WAIT_MS \+ SEND_TIMEOUT_MS/,
    );
    expect(loadDispatchConfig({ ...base, MAX_PACING_WAIT_MS: '9000' }).leaseMs).toBe(12_000);
  });

  it("our account and region, for telling another account's push endpoint from our own", () => {
    const base = { TABLE_NAME: 't', EVIDENCE_INDEX_TABLE_NAME: 'i', SENDER_EMAIL: 'n@example.com', BRAND };
    expect(loadDispatchConfig({ ...base, ACCOUNT_ID: '123456789012', AWS_REGION: 'eu-west-1' })).toMatchObject({
      accountId: '123456789012',
      region: 'eu-west-1',
    });
    expect(() => loadDispatchConfig({ ...base, ACCOUNT_ID: '1234' })).toThrow(/ACCOUNT_ID is invalid/);
  });

  it('applies the documented defaults for optional settings', () => {
    expect(loadIngestConfig({ TABLE_NAME: 't' })).toEqual({
      tableName: 't',
      retentionDays: 35,
      pendingThresholdMs: 900_000,
      concurrency: 16,
      maxEventBytes: 65_536,
      transactionAttempts: 4,
      maxEventAgeSeconds: 86_400,
      sweepShards: 8,
      schemaRegistry: undefined,
    });
    expect(loadIngestConfig({ TABLE_NAME: 't', MAX_EVENT_AGE_SECONDS: '0' }).maxEventAgeSeconds).toBe(0);
    expect(() => loadIngestConfig({ TABLE_NAME: 't', MAX_EVENT_AGE_SECONDS: '-1' })).toThrow(
      /MAX_EVENT_AGE_SECONDS is invalid/,
    );
    expect(
      loadDispatchConfig({ TABLE_NAME: 't', EVIDENCE_INDEX_TABLE_NAME: 'i', SENDER_EMAIL: 'n@example.com', BRAND }),
    ).toMatchObject({
      leaseMs: 120_000,
      sendTimeoutMs: 5_000,
      connectTimeoutMs: 1_500,
      maxSendAttempts: 5,
      retryBaseMs: 1_000,
      retryMaxMs: 300_000,
      breakerHoldMs: 60_000,
      maxAgeMs: 86_400_000,
      sendRates: { EMAIL: 14, PUSH: 100, SMS: 20 },
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
    });
    expect(
      loadSweeperConfig({ TABLE_NAME: 't', EVIDENCE_INDEX_TABLE_NAME: 'i', SENDER_EMAIL: 'n@example.com', BRAND }),
    ).toMatchObject({
      pendingThresholdMs: 900_000,
      limit: 10_000,
      intervalMs: 60_000,
      maxAgeMs: 86_400_000,
      sendRates: { EMAIL: 14, PUSH: 100, SMS: 20 },
    });
  });

  it('reads the send rates and the maximum age, and refuses a connect timeout not shorter than the send timeout', () => {
    const env = { TABLE_NAME: 't', EVIDENCE_INDEX_TABLE_NAME: 'i', SENDER_EMAIL: 'n@example.com', BRAND };
    expect(
      loadDispatchConfig({ ...env, SEND_RATE_EMAIL: '200', SEND_RATE_SMS: '5', MAX_AGE_SECONDS: '3600' }),
    ).toMatchObject({ sendRates: { EMAIL: 200, PUSH: 100, SMS: 5 }, maxAgeMs: 3_600_000 });
    expect(() => loadDispatchConfig({ ...env, SEND_RATE_PUSH: '0' })).toThrow(/SEND_RATE_PUSH is invalid/);
    expect(() => loadDispatchConfig({ ...env, CONNECT_TIMEOUT_MS: '5000' })).toThrow(
      /CONNECT_TIMEOUT_MS must be shorter than SEND_TIMEOUT_MS/,
    );
  });

  it('reads per-channel delivery policies and rejects unknown ones', () => {
    expect(channelPoliciesOf('SMS=AT_LEAST_ONCE')).toEqual({
      EMAIL: 'AT_MOST_ONCE',
      PUSH: 'AT_MOST_ONCE',
      SMS: 'AT_LEAST_ONCE',
    });
    expect(() => channelPoliciesOf('FAX=AT_LEAST_ONCE')).toThrow(/CHANNEL_POLICIES entry "FAX=AT_LEAST_ONCE"/);
    expect(() => channelPoliciesOf('SMS=SOMETIMES')).toThrow(ConfigError);
  });
});
