/**
 * A stage in two regions (docs/regions.md "The stack for two regions"), from the example settings, which name a
 * recovery region: two stacks from one file, the table a global table owned by the primary's stack, a fence table per
 * region, the functions fenced, the triggers taking only their region's writes, the recovery intake disabled.
 */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { matchesFilter } from '../../functions/contracts/stream-filter.ts';
import { createNotifierStacks } from '../../lib/notifier-app.ts';
import { SettingsError } from '../../lib/settings.ts';

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
type Template = { Resources: Record<string, Resource> };

function synth(overrides: Record<string, unknown> = {}) {
  const app = new App({
    context: { settingsFile: 'examples/settings.example.json', ...overrides, 'aws:cdk:bundling-stacks': [] },
  });
  const { primary, recovery } = createNotifierStacks(app);
  const assembly = app.synth();
  if (recovery === undefined) throw new Error('the example names a recovery region');
  const of = (name: string) => assembly.getStackByName(name).template as Template;
  return { primary, recovery, p: of(primary.stackName), r: of(recovery.stackName) };
}
const byType = (t: Template, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);
const env = (t: Template, prefix: string) => {
  const found = byType(t, 'AWS::Lambda::Function').find(([id]) => id.startsWith(prefix));
  return ((found?.[1].Properties.Environment as { Variables: Record<string, unknown> }) ?? { Variables: {} }).Variables;
};

describe('a stage in two regions', () => {
  const { primary, recovery, p, r } = synth();

  it('is two stacks from one settings file: the primary in its region, the recovery in its own, deployed after', () => {
    expect([primary.stackName, primary.region]).toEqual(['notifier-example', 'ap-northeast-1']);
    expect([recovery.stackName, recovery.region]).toEqual(['notifier-example-recovery', 'ap-northeast-3']);
    expect(recovery.dependencies).toContain(primary);
  });

  it('the table is a global table with its replica in the recovery region, retained, under an id of its own', () => {
    const tables = byType(p, 'AWS::DynamoDB::GlobalTable');
    expect(tables).toHaveLength(1);
    const [id, table] = tables[0] as [string, Resource];
    // Never the one-region table's logical id with another type: CloudFormation could delete the table.
    expect(id).toMatch(/^GlobalTable/);
    // Beside it, tables of the region alone: its fence, its evidence index (lib/evidence-index-table.ts) and its
    // evidence spool (lib/evidence-spool-table.ts: a global table would write every spooled record, and its TTL
    // delete, again in the other region).
    expect(byType(p, 'AWS::DynamoDB::Table').map(([i]) => i)).toEqual([
      expect.stringMatching(/^EvidenceIndexTable/),
      expect.stringMatching(/^EvidenceSpoolTable/),
      expect.stringMatching(/^FenceTable/),
    ]);
    expect(byType(r, 'AWS::DynamoDB::Table').map(([i]) => i)).toContainEqual(
      expect.stringMatching(/^EvidenceSpoolTable/),
    );
    expect(table.DeletionPolicy).toBe('Retain');
    const replicas = table.Properties.Replicas as { Region: string }[];
    expect(replicas.map((x) => x.Region).sort()).toEqual(['ap-northeast-1', 'ap-northeast-3']);
    for (const replica of replicas) {
      expect(replica).toMatchObject({
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    }
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
    // The recovery region's stack creates no table of notifications: it reads the replica.
    expect(byType(r, 'AWS::DynamoDB::GlobalTable')).toHaveLength(0);
  });

  it('each region has a fence table of its own, never replicated, its first state written only if absent', () => {
    for (const [t, state, epoch] of [
      [p, 'ACTIVE', 1],
      [r, 'FENCED', 0],
    ] as const) {
      const [, fence] = byType(t, 'AWS::DynamoDB::Table')[0] as [string, Resource];
      expect(fence.Properties.StreamSpecification).toBeUndefined();
      const [, call] = byType(t, 'Custom::AWS').find(([id]) => id.startsWith('FenceInitialState')) as [
        string,
        Resource,
      ];
      const create = JSON.stringify(call.Properties.Create);
      expect(create).toContain('transactWriteItems');
      expect(create).toContain('attribute_not_exists(pk)');
      expect(create).toContain(`\\"state\\":{\\"S\\":\\"${state}\\"}`);
      expect(create).toContain(`\\"epoch\\":{\\"N\\":\\"${epoch}\\"}`);
    }
  });

  it("each region's dispatch triggers take only that region's own writes, never a replicated one", () => {
    for (const [t, region, other] of [
      [p, 'ap-northeast-1', 'ap-northeast-3'],
      [r, 'ap-northeast-3', 'ap-northeast-1'],
    ] as const) {
      const triggers = byType(t, 'AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FilterCriteria);
      expect(triggers.length).toBeGreaterThan(0);
      for (const [, m] of triggers) {
        const [filter] = (m.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
        const pattern = JSON.parse((filter as { Pattern: string }).Pattern);
        const record = (owner: string) => ({
          eventName: 'INSERT',
          dynamodb: {
            NewImage: {
              kind: { S: 'NOTIFICATION' },
              status: { S: 'PENDING' },
              owner: { S: owner },
              template: { S: 'OneTimePasscode' },
            },
          },
        });
        expect(matchesFilter(pattern, record(region))).toBe(true);
        expect(matchesFilter(pattern, record(other))).toBe(false);
      }
    }
  });

  it("the recovery region's intake is created disabled, with the primary's consumer group id", () => {
    const mapping = (t: Template) => t.Resources.IngestKafkaMapping as Resource;
    expect(mapping(r).Properties.Enabled).toBe(false);
    expect(mapping(p).Properties.Enabled).toBeUndefined();
    expect(mapping(r).Properties.AmazonManagedKafkaEventSourceConfig).toEqual(
      mapping(p).Properties.AmazonManagedKafkaEventSourceConfig,
    );
    expect(JSON.stringify(mapping(r).Properties.EventSourceArn)).toContain('ap-northeast-3');
  });

  it('ingest, dispatch and the sweeper are told their fence; the sweeper also the other region and its own mapping', () => {
    for (const fn of ['Ingest', 'Dispatch', 'Sweeper']) {
      expect(env(p, fn).FENCE_TABLE_NAME).toBeDefined();
      expect(env(r, fn).FENCE_TABLE_NAME).toBeDefined();
    }
    expect(env(p, 'Sweeper')).toMatchObject({
      OTHER_REGION: 'ap-northeast-3',
      OTHER_FENCE_TABLE_NAME: 'notifier-example-recovery-fence',
      INGEST_MAPPING_ID: { Ref: 'IngestKafkaMapping' },
    });
    expect(env(r, 'Sweeper')).toMatchObject({
      OTHER_REGION: 'ap-northeast-1',
      OTHER_FENCE_TABLE_NAME: 'notifier-example-fence',
    });
    // Both regions' functions write the one global table, by its fixed name.
    expect(env(r, 'Dispatch').TABLE_NAME).toBe('notifier-example-notifications');
  });

  it('ingest in each region may query an event’s partition: its held inbox items of every epoch are looked for', () => {
    for (const t of [p, r]) {
      const policies = byType(t, 'AWS::IAM::Policy').filter(([id]) => id.startsWith('Ingest'));
      const actions = policies.flatMap(([, pol]) =>
        (pol.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement.flatMap((st) =>
          Array.isArray(st.Action) ? st.Action : [st.Action],
        ),
      );
      expect(actions).toContain('dynamodb:Query');
    }
  });

  it("ingest in each region is told the other region's replica and fence, and may only read them there", () => {
    const statements = (t: Template) =>
      byType(t, 'AWS::IAM::Policy')
        .filter(([id]) => id.startsWith('Ingest'))
        .flatMap(
          ([, pol]) =>
            (pol.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
              .Statement,
        );
    for (const [t, other, otherFence] of [
      [p, 'ap-northeast-3', 'notifier-example-recovery-fence'],
      [r, 'ap-northeast-1', 'notifier-example-fence'],
    ] as const) {
      expect(env(t, 'Ingest')).toMatchObject({
        OTHER_REGION: other,
        OTHER_FENCE_TABLE_NAME: otherFence,
        // The global table's replica has the table's own name in the other region.
        OTHER_TABLE_NAME: 'notifier-example-notifications',
      });
      const there = statements(t).filter((st) => JSON.stringify(st.Resource).includes(`:${other}:`));
      const actions = there.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action])).sort();
      // A Query of the replica and a read of the fence's CONTROL: no write, no scan, nothing else in that region.
      expect(actions).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
      const resources = there.map((st) => JSON.stringify(st.Resource));
      expect(resources.find((x) => x.includes('notifications'))).toContain(`table/notifier-example-notifications`);
      expect(resources.find((x) => x.includes('fence'))).toContain(`table/${otherFence}`);
    }
  });

  it('alarms in each region on replication latency to the other and on a fenced region trying to send', () => {
    for (const [t, receiving] of [
      [p, 'ap-northeast-3'],
      [r, 'ap-northeast-1'],
    ] as const) {
      const alarms = byType(t, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
      const latency = alarms.find((a) => a.MetricName === 'ReplicationLatency');
      expect(latency).toMatchObject({ Namespace: 'AWS/DynamoDB', Threshold: 60_000 });
      expect(latency?.Dimensions).toContainEqual({ Name: 'ReceivingRegion', Value: receiving });
      // The failover runbook's first signal: each region watches the other's heartbeat, and a keeper that does not
      // run (no data) pages as well.
      expect(alarms.find((a) => a.MetricName === 'PeerHeartbeatStale')).toMatchObject({
        Statistic: 'Maximum',
        Threshold: 1,
        EvaluationPeriods: 5,
        DatapointsToAlarm: 3,
        TreatMissingData: 'breaching',
      });
      for (const name of [
        'FencedSendAttempts',
        'SelfDemoted',
        'RegionsBothActive',
        'PeerLookupsUnanswered',
        'PeerHeartbeatStale',
      ]) {
        const alarm = alarms.find((a) => a.MetricName === name);
        // The functions publish with Powertools' service dimension: an alarm without it watches nothing.
        expect(alarm?.Dimensions, name).toEqual([{ Name: 'service', Value: 'notifier' }]);
      }
    }
  });

  it("each stack's outputs name both regions, both fences and the counts: ops reads a stage from either", () => {
    const outputs = (t: Template) =>
      Object.fromEntries(
        Object.entries((t as unknown as { Outputs: Record<string, { Value: unknown }> }).Outputs).map(([k, o]) => [
          k,
          o.Value,
        ]),
      );
    expect(outputs(p)).toMatchObject({
      RegionName: 'ap-northeast-1',
      RegionKind: 'primary',
      FenceShards: '4',
      SweepShards: '8',
      PeerRegionName: 'ap-northeast-3',
      PeerStackName: 'notifier-example-recovery',
      PeerFenceTableName: 'notifier-example-recovery-fence',
    });
    expect(outputs(r)).toMatchObject({
      RegionName: 'ap-northeast-3',
      RegionKind: 'recovery',
      FenceTableName: { Ref: expect.stringMatching(/^FenceTable/) },
      FenceShards: '4',
      PeerStackName: 'notifier-example',
      PeerFenceTableName: 'notifier-example-fence',
      TableName: 'notifier-example-notifications',
    });
  });

  it('refuses settings the recovery region would use from the primary (a schema registry, a VPC, the console)', () => {
    const registry = { kind: 'glue', registryArn: 'arn:aws:glue:ap-northeast-1:123456789012:registry/bank' };
    expect(() => synth({ schemaRegistry: registry })).toThrow(SettingsError);
    try {
      synth({ schemaRegistry: registry });
    } catch (error) {
      expect((error as SettingsError).problems).toEqual([
        "schemaRegistry: not yet supported in a stage with two regions (the recovery region would use the primary's)",
      ]);
    }
  });
});
