/**
 * `ops promote`, `demote` and `reconcile` on DynamoDB Local, two tables standing for two regions' replicas: each shows
 * first and moves nothing without --reason and --confirm; confirmed, promote moves the recovery region's fence to a
 * new epoch and gives what the old region had not finished a successor — held, or unknown when it was in flight, never
 * resent blindly —, demote fences the old region and waits until it is quiet, reconcile settles the held notices.
 * What the confirm would refuse, the preview refuses in the same words; a confirmed refusal is audited REFUSED. Every
 * confirm is audited with the verified caller. The tests run in order, as the runbook does.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import { EvidenceAuditLog } from '../../functions/stores/audit-log.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { main } from '../../tools/ops/cli.ts';
import { regionsMain } from '../../tools/ops/regions.ts';
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
const confirm = (reason: string) => ['--reason', reason, '--confirm'];
const by = { principal: userInfo().username, verifiedBy: 'LOCAL_USER' };

// Demote and reconcile wait out the Lambda timeouts: a fake clock whose sleep moves time on, never a wall-clock wait.
let now = Date.now();
const clock = {
  now: () => now,
  sleep: async (ms: number) => {
    now += ms;
  },
};

/** Runs one region command on the fake clock: its exit code and what it printed. */
async function ops(argv: string[]): Promise<{ code: number; out: Record<string, unknown> }> {
  let out = '';
  const code = await regionsMain([...argv, ...where()], (t) => (out += t), clock);
  now += 1_000;
  return { code, out: JSON.parse(out) };
}

/** The newest audit record of this action, with its outcome. */
async function lastAudit(action: string) {
  const records = await new EvidenceAuditLog(new FileEvidenceStore(evidenceDir)).list();
  return records.find((r) => r.action === action);
}

const primaryFence = () => new DynamoFenceStore(primary.doc, `${primary.tableName}-fence`, 4);

describe('ops promote', () => {
  it('to the region already active is refused in the preview and on confirm (ALREADY_ACTIVE), audited REFUSED', async () => {
    const toActive = ['promote', '--to', 'ap-northeast-1', '--old-region-unreachable', '--from-epoch', '0'];
    const preview = await ops(toActive);
    const refused = {
      code: 'ALREADY_ACTIVE',
      message: 'ap-northeast-1 is already active (epoch 1): nothing to promote',
    };
    expect(preview).toMatchObject({ code: 3, out: { refused } });
    expect(preview.out).not.toHaveProperty('toAct');
    const confirmed = await ops([...toActive, ...confirm('INC-1 wrong region')]);
    expect(confirmed).toMatchObject({ code: 3, out: { refused } });
    expect(await primaryFence().control(true)).toMatchObject({ state: 'ACTIVE', epoch: 1, mode: 'INITIAL' });
    expect((await primary.allItems()).filter((i) => i.kind === 'NOTIFICATION')).toEqual([]);
    expect(await lastAudit('PROMOTE')).toMatchObject({
      by,
      reason: 'INC-1 wrong region',
      target: 'ap-northeast-1',
      outcome: { result: 'REFUSED', details: refused },
    });
  });

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
    expect(await lastAudit('PROMOTE')).toMatchObject({
      by,
      reason: 'INC-1 primary lost',
      target: 'ap-northeast-3',
      outcome: { result: 'DONE', details: { region: 'ap-northeast-3', epoch: 2, held: 1, unknown: 1 } },
    });
  });
});

describe('ops reconcile before ops demote', () => {
  it('is refused in the preview as the confirm refuses it (NOT_DEMOTED), and the confirm is audited REFUSED', async () => {
    const reconcile = ['reconcile', '--from', 'ap-northeast-1'];
    const refused = {
      code: 'NOT_DEMOTED',
      message: 'ap-northeast-1 is not demoted and quiet: run ops demote --region ap-northeast-1 first',
    };
    const preview = await ops(reconcile);
    expect(preview).toMatchObject({ code: 3, out: { refused } });
    expect(preview.out).not.toHaveProperty('toAct');
    expect(await ops([...reconcile, ...confirm('INC-1 reconcile')])).toMatchObject({ code: 3, out: { refused } });
    expect(await lastAudit('RECONCILE')).toMatchObject({
      by,
      reason: 'INC-1 reconcile',
      target: 'ap-northeast-1',
      outcome: { result: 'REFUSED', details: refused },
    });
  });
});

describe('ops demote', () => {
  const demote = ['demote', '--region', 'ap-northeast-1'];

  it('without --reason and --confirm it shows the fences, moves nothing, and exits 3', async () => {
    const preview = await ops(demote);
    expect(preview).toMatchObject({ code: 3, out: { toAct: 'add --reason "…" --confirm' } });
    expect(await primaryFence().control(true)).toMatchObject({ state: 'ACTIVE', epoch: 1 });
  });

  it('confirmed: the region fenced, then quiet once no invocation can still act there; audited DONE', async () => {
    const done = await ops([...demote, ...confirm('INC-1 primary back, demote it')]);
    expect(done).toMatchObject({ code: 0, out: { region: 'ap-northeast-1', epoch: 1, wasFenced: false } });
    const report = done.out as { fencedAt: number; quiescentAt: number };
    expect(report.quiescentAt).toBeGreaterThan(report.fencedAt);
    expect(await primaryFence().control(true)).toMatchObject({ state: 'FENCED', quiescentAt: report.quiescentAt });
    expect(await lastAudit('DEMOTE')).toMatchObject({
      by,
      reason: 'INC-1 primary back, demote it',
      target: 'ap-northeast-1',
      outcome: { result: 'DONE', details: { region: 'ap-northeast-1', quiescentAt: report.quiescentAt } },
    });
  });
});

describe('ops reconcile after ops demote', () => {
  const reconcile = ['reconcile', '--from', 'ap-northeast-1'];

  it('without --reason and --confirm it shows what it would settle, refuses nothing, and exits 3', async () => {
    const preview = await ops(reconcile);
    expect(preview).toMatchObject({ code: 3, out: { toAct: 'add --reason "…" --confirm' } });
    expect(preview.out).not.toHaveProperty('refused');
  });

  it('confirmed: what the old region provably never took (no original, no inbox item) is released, late; audited DONE', async () => {
    const done = await ops([...reconcile, ...confirm('INC-1 reconcile after demote')]);
    // The old region's replica holds neither notice nor their event: it never sent them, so both go out now, late.
    const report = { from: 'ap-northeast-1', to: 'ap-northeast-3', released: 2, handedOver: 0, unknown: 0 };
    expect(done).toMatchObject({ code: 0, out: report });
    const successors = (await recovery.allItems()).filter((i) => String(i.sk).endsWith('#E2'));
    expect(successors.map((i) => [i.channel, i.status, i.late]).sort()).toEqual([
      ['EMAIL', 'PENDING', true],
      ['SMS', 'PENDING', true],
    ]);
    expect(await lastAudit('RECONCILE')).toMatchObject({
      by,
      reason: 'INC-1 reconcile after demote',
      target: 'ap-northeast-1',
      outcome: { result: 'DONE', details: report },
    });
  });
});
