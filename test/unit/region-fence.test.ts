/** How a function learns it runs in a stage with two regions: from FENCE_TABLE_NAME, checked at cold start. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../functions/commons/config.ts';
import { regionFenceOf } from '../../functions/commons/region-fence.ts';
import { loadRegionFence } from '../../functions/commons/region-fence-loader.ts';

describe("a function's region fence", () => {
  it('is absent in a stage in one region (no FENCE_TABLE_NAME): the function runs unfenced, as before', () => {
    expect(regionFenceOf({ AWS_REGION: 'ap-northeast-1' })).toBeUndefined();
  });

  it('names its region, its fence table, the other region and the mapping the keeper disables', () => {
    const fence = regionFenceOf({
      AWS_REGION: 'ap-northeast-3',
      FENCE_TABLE_NAME: 'notifier-prod-recovery-fence',
      FENCE_SHARDS: '6',
      OTHER_REGION: 'ap-northeast-1',
      OTHER_FENCE_TABLE_NAME: 'notifier-prod-fence',
      INGEST_MAPPING_ID: 'abc',
      FAILOVER_CLOCK_SKEW_SECONDS: '30',
    });
    expect(fence).toMatchObject({
      region: 'ap-northeast-3',
      clockMarginMs: 30_000,
      other: { region: 'ap-northeast-1', fenceTable: 'notifier-prod-fence' },
      ingestMappingId: 'abc',
    });
    expect([fence?.store.tableName, fence?.store.shards]).toEqual(['notifier-prod-recovery-fence', 6]);
  });

  it("tells ingest the other region's replica of the table and the look-up's timeout, 1 s unless set", () => {
    const env = {
      AWS_REGION: 'ap-northeast-3',
      FENCE_TABLE_NAME: 'notifier-prod-recovery-fence',
      OTHER_REGION: 'ap-northeast-1',
      OTHER_FENCE_TABLE_NAME: 'notifier-prod-fence',
      OTHER_TABLE_NAME: 'notifier-prod-notifications',
    };
    expect(regionFenceOf(env)).toMatchObject({
      other: { region: 'ap-northeast-1', fenceTable: 'notifier-prod-fence', tableName: 'notifier-prod-notifications' },
      lookupTimeoutMs: 1_000,
    });
    expect(regionFenceOf({ ...env, PEER_LOOKUP_TIMEOUT_MS: '500' })?.lookupTimeoutMs).toBe(500);
  });

  it('refuses, at cold start, a look-up with no other region, the other region named as this one, and a timeout out of bounds', () => {
    const base = { AWS_REGION: 'ap-northeast-1', FENCE_TABLE_NAME: 'f' };
    expect(() => regionFenceOf({ ...base, OTHER_TABLE_NAME: 'notifier-prod-notifications' })).toThrow(
      /OTHER_TABLE_NAME needs OTHER_REGION/,
    );
    // A look-up in its own region would find nothing it has not taken itself: every event new.
    expect(() =>
      regionFenceOf({ ...base, OTHER_REGION: 'ap-northeast-1', OTHER_FENCE_TABLE_NAME: 'g', OTHER_TABLE_NAME: 't' }),
    ).toThrow(/OTHER_REGION is this region/);
    expect(() => regionFenceOf({ ...base, PEER_LOOKUP_TIMEOUT_MS: '60000' })).toThrow(
      /PEER_LOOKUP_TIMEOUT_MS is invalid/,
    );
  });

  it('refuses, at cold start, the other region without its fence table, and shards out of bounds', () => {
    expect(() =>
      regionFenceOf({ AWS_REGION: 'ap-northeast-1', FENCE_TABLE_NAME: 'f', OTHER_REGION: 'ap-northeast-3' }),
    ).toThrow(ConfigError);
    expect(() => regionFenceOf({ AWS_REGION: 'ap-northeast-1', FENCE_TABLE_NAME: 'f', FENCE_SHARDS: '0' })).toThrow(
      /FENCE_SHARDS is invalid/,
    );
  });
});

describe("a function's region fence, loaded at cold start only in a stage in two regions", () => {
  it('is absent without FENCE_TABLE_NAME, and a bad region setting still fails the init', async () => {
    expect(await loadRegionFence({ AWS_REGION: 'ap-northeast-1' })).toBeUndefined();
    await expect(loadRegionFence({ AWS_REGION: 'ap-northeast-1', FENCE_SHARDS: '0' })).rejects.toThrow(
      /FENCE_SHARDS is invalid/,
    );
  });

  it('is the fence regionFenceOf makes when the stage names its fence table', async () => {
    const env = { AWS_REGION: 'ap-northeast-3', FENCE_TABLE_NAME: 'notifier-prod-recovery-fence', FENCE_SHARDS: '6' };
    const fence = await loadRegionFence(env);
    expect(fence).toMatchObject({ region: 'ap-northeast-3', clockMarginMs: 60_000 });
    expect([fence?.store.tableName, fence?.store.shards]).toEqual(['notifier-prod-recovery-fence', 6]);
    await expect(loadRegionFence({ ...env, OTHER_REGION: 'ap-northeast-3' })).rejects.toThrow(ConfigError);
  });
});
