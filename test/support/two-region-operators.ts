/**
 * A stage in two regions on DynamoDB Local, as each region's operator function sees it: two tables standing for the
 * two replicas, each with its fence (`<table>-fence`), the primary ACTIVE at epoch 1 and the recovery FENCED at 0;
 * what the recovery replica shows of the primary's work when it is lost (one notice pending, one in flight); and, per
 * region, the region commands its operator function runs (functions/operator-api/region-commands.ts), built from the
 * environment the stack gives it, on a fake clock, auditing into memory.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import type { RegionCommands } from '../../functions/operator/region-routes.ts';
import { regionCommandsOf } from '../../functions/operator-api/region-commands.ts';
import { EvidenceAuditLog } from '../../functions/stores/audit-log.ts';
import { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { pendingNotification } from './dispatch-deps.ts';
import { MemoryStore } from './evidence-memory.ts';
import { type LocalTable, newLocalTable } from './local-table.ts';

export const PRIMARY = 'ap-northeast-1';
export const RECOVERY = 'ap-northeast-3';
/** Each region's ingest mapping, as the stack names it to the operator (INGEST_MAPPING_ID). */
export const MAPPING = {
  [PRIMARY]: '11111111-1111-4111-8111-111111111111',
  [RECOVERY]: '33333333-3333-4333-8333-333333333333',
};
export const CALLER = {
  principal: 'arn:aws:sts::123456789012:assumed-role/DrOperators/alice',
  verifiedBy: 'AWS_IAM' as const,
  person: 'arn:aws:iam::123456789012:role/droperators',
};

export interface TwoRegions {
  readonly tables: Record<string, LocalTable>;
  readonly audit: EvidenceAuditLog;
  readonly clock: { now(): number; sleep(ms: number): Promise<void> };
  fence(region: string): DynamoFenceStore;
  /** The commands `region`'s operator runs; with `otherLost`, the other region never answers. */
  operator(region: string, options?: { otherLost?: boolean }): RegionCommands;
}

export async function twoRegions(endpoint: string): Promise<TwoRegions> {
  const [primary, recovery] = await Promise.all([newLocalTable(endpoint), newLocalTable(endpoint)]);
  const tables: Record<string, LocalTable> = { [PRIMARY]: primary, [RECOVERY]: recovery };
  const fence = (region: string) =>
    new DynamoFenceStore(tables[region]?.doc as DynamoDBDocumentClient, `${tables[region]?.tableName}-fence`, 4);
  const db = localClient(endpoint);
  for (const [region, state, epoch] of [
    [PRIMARY, 'ACTIVE', 1],
    [RECOVERY, 'FENCED', 0],
  ] as const) {
    await db.send(new CreateTableCommand(createFenceTableInput(`${tables[region]?.tableName}-fence`)));
    await fence(region).initialise({ region, state, epoch, since: 0, by: 'stack', reason: 'initial', mode: 'INITIAL' });
  }
  db.destroy();
  const pending = { ...pendingNotification('EMAIL'), owner: PRIMARY, epoch: 1 };
  const inFlight = {
    ...pendingNotification('SMS'),
    owner: PRIMARY,
    epoch: 1,
    status: 'SENDING',
    sweepKey: 'SENDING#SMS#0',
  };
  for (const item of [pending, inFlight]) {
    await recovery.doc.send(new PutCommand({ TableName: recovery.tableName, Item: item }));
  }
  let now = Date.parse('2026-12-06T05:00:00Z');
  // Demote and reconcile wait out the Lambda timeouts: time moves only when they sleep, never a wall-clock wait.
  const clock = {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
  };
  const audit = new EvidenceAuditLog(new MemoryStore());
  const lost = DynamoDBDocumentClient.from(localClient('http://127.0.0.1:9'));
  const operator = (region: string, options: { otherLost?: boolean } = {}) => {
    const other = region === PRIMARY ? RECOVERY : PRIMARY;
    const own = tables[region] as LocalTable;
    const peer = tables[other] as LocalTable;
    const env = {
      AWS_REGION: region,
      FENCE_TABLE_NAME: `${own.tableName}-fence`,
      FENCE_SHARDS: '4',
      OTHER_REGION: other,
      OTHER_FENCE_TABLE_NAME: `${peer.tableName}-fence`,
      INGEST_MAPPING_ID: MAPPING[region as keyof typeof MAPPING],
      INGEST_TIMEOUT_SECONDS: '120',
      DISPATCH_TIMEOUT_SECONDS: '60',
    };
    const commands = regionCommandsOf(
      {
        doc: own.doc,
        tableName: own.tableName,
        audit,
        clock,
        peer: { doc: () => (options.otherLost ? lost : peer.doc), tableName: peer.tableName },
      },
      env,
    );
    if (commands === undefined) throw new Error('the environment names a fence: the commands are there');
    return commands;
  };
  return { tables, audit, clock, fence, operator };
}
