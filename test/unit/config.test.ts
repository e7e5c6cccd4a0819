import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  loadDispatchConfig,
  loadIngestConfig,
  loadSweeperConfig,
  parseChannelPolicies,
} from '../../functions/commons/config.ts';

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
    expect(() => loadDispatchConfig({ TABLE_NAME: 't', SENDER_EMAIL: 'not-an-email' })).toThrow(
      /SENDER_EMAIL is invalid/,
    );
    expect(() =>
      loadDispatchConfig({
        TABLE_NAME: 't',
        SENDER_EMAIL: 'n@example.com',
        LEASE_SECONDS: '10',
        SEND_TIMEOUT_MS: '6000',
      }),
    ).toThrow(/LEASE_SECONDS must exceed twice SEND_TIMEOUT_MS/);
  });

  it('applies the documented defaults for optional settings', () => {
    expect(loadIngestConfig({ TABLE_NAME: 't' })).toEqual({
      tableName: 't',
      retentionDays: 35,
      concurrency: 16,
      maxEventBytes: 65_536,
      transactionAttempts: 4,
      maxEventAgeSeconds: 86_400,
    });
    expect(loadIngestConfig({ TABLE_NAME: 't', MAX_EVENT_AGE_SECONDS: '0' }).maxEventAgeSeconds).toBe(0);
    expect(() => loadIngestConfig({ TABLE_NAME: 't', MAX_EVENT_AGE_SECONDS: '-1' })).toThrow(
      /MAX_EVENT_AGE_SECONDS is invalid/,
    );
    expect(loadDispatchConfig({ TABLE_NAME: 't', SENDER_EMAIL: 'n@example.com' })).toMatchObject({
      leaseMs: 300_000,
      sendTimeoutMs: 5_000,
      maxSendAttempts: 5,
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
    });
    expect(loadSweeperConfig({ TABLE_NAME: 't' })).toMatchObject({ pendingThresholdMs: 900_000, limit: 500 });
  });

  it('reads per-channel delivery policies and rejects unknown ones', () => {
    expect(parseChannelPolicies('SMS=AT_LEAST_ONCE')).toEqual({
      EMAIL: 'AT_MOST_ONCE',
      PUSH: 'AT_MOST_ONCE',
      SMS: 'AT_LEAST_ONCE',
    });
    expect(() => parseChannelPolicies('FAX=AT_LEAST_ONCE')).toThrow(/CHANNEL_POLICIES entry "FAX=AT_LEAST_ONCE"/);
    expect(() => parseChannelPolicies('SMS=SOMETIMES')).toThrow(ConfigError);
  });
});
