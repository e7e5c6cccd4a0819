/**
 * `ops promote` on DynamoDB Local, two tables standing for two regions' replicas: it shows first and moves nothing
 * without --reason and --confirm; confirmed, it moves the recovery region's fence to a new epoch, gives what the old
 * region had not finished a successor — held, or unknown when it was in flight, never resent blindly — and audits it.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { main } from '../../tools/ops/cli.ts';
import { pendingNotification } from '../support/dispatch-deps.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let primary: LocalTable;
let recovery: LocalTable;
const evidenceDir = mkdtempSync(join(tmpdir(), 'ops-regions-'));

async function fenceOf(table: LocalTable, state: 'ACTIVE' | 'FENCED', epoch: number) {
  const db = localClient(table.endpoint);
  await db.send(new CreateTableCommand(createFenceTableInput(`${table.tableName}-fence`)));
  db.destroy();
  const fence = new DynamoFenceStore(table.doc, `${table.tableName}-fence`, 4);
  const region = table === primary ? 'ap-northeast-1' : 'ap-northeast-3';
  await fence.initialise({ region, state, epoch, since: 0, by: 'stack', reason: 'initial', mode: 'INITIAL' });
  return fence;
}

beforeAll(async () => {
  [primary, recovery] = await Promise.all([
    newLocalTable(inject('dynamoEndpoint')),
    newLocalTable(inject('dynamoEndpoint')),
  ]);
  await fenceOf(primary, 'ACTIVE', 1);
  await fenceOf(recovery, 'FENCED', 0);
  // What the recovery replica shows of the primary's work when it is lost: one notice pending, one in flight.
  const pending = { ...pendingNotification('EMAIL'), owner: 'ap-northeast-1', epoch: 1 };
  const inFlight = { ...pendingNotification('SMS'), owner: 'ap-northeast-1', epoch: 1, status: 'SENDING' };
  inFlight.sweepKey = 'SENDING#SMS#0';
  for (const item of [pending, inFlight]) {
    await recovery.doc.send(new PutCommand({ TableName: recovery.tableName, Item: item }));
  }
});

const where = () => [
  '--primary-endpoint',
  primary.endpoint,
  '--primary-table',
  primary.tableName,
  '--recovery-endpoint',
  recovery.endpoint,
  '--recovery-table',
  recovery.tableName,
  '--evidence-dir',
  evidenceDir,
];
const promote = ['promote', '--to', 'ap-northeast-3', '--old-region-unreachable', '--from-epoch', '1'];

describe('ops promote', () => {
  it('without --reason and --confirm it shows both fences and what is unfinished, moves nothing, and exits 3', async () => {
    let out = '';
    const code = await main([...promote, ...where()], (t) => {
      out += t;
    });
    expect(code).toBe(3);
    expect(JSON.parse(out).wouldDo.unfinished).toEqual({ 'ap-northeast-1': 0, 'ap-northeast-3': 2 });
    const fence = new DynamoFenceStore(recovery.doc, `${recovery.tableName}-fence`, 4);
    expect(await fence.claimEpoch()).toBeUndefined();
  });

  it('confirmed: the recovery region active at epoch 2, the pending notice held, the one in flight unknown, audited', async () => {
    let out = '';
    const code = await main([...promote, ...where(), '--reason', 'INC-1 primary lost', '--confirm'], (t) => {
      out += t;
    });
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ region: 'ap-northeast-3', epoch: 2, held: 1, unknown: 1 });
    const fence = new DynamoFenceStore(recovery.doc, `${recovery.tableName}-fence`, 4);
    expect(await fence.control()).toMatchObject({ state: 'ACTIVE', epoch: 2, mode: 'FORCED' });
    const items = await recovery.allItems();
    const successors = items.filter((i) => String(i.sk).endsWith('#E2'));
    expect(successors.map((i) => [i.channel, i.status, i.heldReason]).sort()).toEqual([
      ['EMAIL', 'FAILOVER_HELD', 'INHERITED_PENDING'],
      ['SMS', 'UNKNOWN', 'IN_FLIGHT_AT_FAILOVER'],
    ]);
    const audit = readdirSync(join(evidenceDir, 'audit')).filter((f) => !f.endsWith('.outcome.json'));
    const record = JSON.parse(readFileSync(join(evidenceDir, 'audit', audit[0] as string), 'utf8'));
    expect(record).toMatchObject({ action: 'PROMOTE', reason: 'INC-1 primary lost', target: 'ap-northeast-3' });
  });
});
