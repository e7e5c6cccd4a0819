/** How a function learns it runs in a stage with two regions: from FENCE_TABLE_NAME, checked at cold start. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../functions/commons/config.ts';
import { regionFenceOf } from '../../functions/commons/region-fence.ts';

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

  it('refuses, at cold start, the other region without its fence table, and shards out of bounds', () => {
    expect(() =>
      regionFenceOf({ AWS_REGION: 'ap-northeast-1', FENCE_TABLE_NAME: 'f', OTHER_REGION: 'ap-northeast-3' }),
    ).toThrow(ConfigError);
    expect(() => regionFenceOf({ AWS_REGION: 'ap-northeast-1', FENCE_TABLE_NAME: 'f', FENCE_SHARDS: '0' })).toThrow(
      /FENCE_SHARDS is invalid/,
    );
  });
});
