/**
 * A notice carried on by a successor of an earlier failover — released by an operator while the old region could not
 * be asked, and sent there — is never given a second successor (docs/regions.md "Fail back"): `ops reconcile` hands
 * the old region's original over to that successor, and a later promotion's pass leaves an original that a later
 * epoch's successor carries on. Without either, a failback sends the notice a second time.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { PEER_SETTLE_ATTRIBUTES } from '../../functions/contracts/table-schema.ts';
import { buildSuccessor } from '../../functions/domain/failover.ts';
import type { FenceControl } from '../../functions/domain/fence.ts';
import { eventPk, notificationIdOf } from '../../functions/domain/keys.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { reconcile } from '../../functions/operator/reconcile.ts';
import { successorPass } from '../../functions/operator/successor-pass.ts';
import { DynamoSuccessorStore } from '../../functions/stores/successor-store.ts';
import { pendingNotification } from '../support/dispatch-deps.ts';
import { type LocalTable, localFence, newLocalTable } from '../support/local-table.ts';
import { attributesNamed, recordingClient } from '../support/peer-writes.ts';

const A = 'ap-northeast-1';
const B = 'ap-northeast-3';
const NOW = Date.parse('2026-12-06T07:00:00Z');
const clock = { now: () => NOW, sleep: async () => undefined };
const intake = { enable: async () => undefined, disable: async () => undefined };
let a: LocalTable;
let b: LocalTable;

beforeAll(async () => {
  [a, b] = await Promise.all([newLocalTable(inject('dynamoEndpoint')), newLocalTable(inject('dynamoEndpoint'))]);
});

/** A's original, PENDING at epoch 1, and B's successor at epoch 2, released and sent: in both replicas. */
async function releasedAndSentInB(eventId: string) {
  const n = pendingNotification('EMAIL', NOW);
  const original = {
    ...n,
    eventId,
    userId: `u-${eventId}`,
    pk: eventPk(eventId),
    notificationId: notificationIdOf(eventId, 'EMAIL'),
    owner: A,
    epoch: 1,
  };
  const s2 = buildSuccessor(
    original,
    { status: 'PENDING', heldReason: 'INHERITED_PENDING' },
    { owner: B, epoch: 2 },
    NOW,
    DEFAULT_SWEEP_PLACEMENT,
  );
  const { sweepKey: _key, sweepAt: _at, ...unswept } = s2;
  const sent = { ...unswept, status: 'SENT', late: true };
  for (const t of [a, b]) {
    await t.doc.send(new PutCommand({ TableName: t.tableName, Item: original }));
    await t.doc.send(new PutCommand({ TableName: t.tableName, Item: sent }));
  }
  return { original, sent };
}

/** An operator's reconcile after the failback: every channel at most once, no wait. */
const failback = {
  by: 'test',
  reason: 'the old region is back',
  policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
  secondCopy: [],
  placement: DEFAULT_SWEEP_PLACEMENT,
  lookupMs: 1,
  settleAfterMs: 0,
} as const;

const control = (over: Partial<FenceControl>): FenceControl =>
  ({ since: 0, by: 'test', reason: 'test', mode: 'FORCED', cutAt: 0, ...over }) as FenceControl;

describe('a notice an earlier failover carried on', () => {
  it("ops reconcile hands the old region's original over to the successor that was released and sent", async () => {
    const { original, sent } = await releasedAndSentInB('carried-1');
    const bFence = await localFence(
      b,
      control({ region: B, state: 'ACTIVE', epoch: 2, predecessor: { region: A, epoch: 1 } }),
      clock.now,
    );
    const aFence = await localFence(a, control({ region: A, state: 'FENCED', epoch: 1, quiescentAt: 1 }), clock.now);
    // What reconcile writes in the old region's replica goes through the cross-region grant: UpdateItem, on these
    // attributes only (lib/regional-operator.ts) — anything else is AccessDenied, and only in AWS.
    const peer = recordingClient(a.endpoint);
    const report = await reconcile(
      { region: A, fence: aFence, store: new DynamoSuccessorStore(peer.doc, a.tableName, 4), intake },
      { region: B, fence: bFence, store: new DynamoSuccessorStore(b.doc, b.tableName, 4), intake },
      failback,
      clock,
    );
    expect(report.ids.alreadyDecided).toContain(original.notificationId);
    expect(report.promotePassUnfinished).toBeUndefined();
    const items = await a.eventItems('carried-1');
    expect(items.find((i) => i.sk === original.sk)).toMatchObject({ status: 'HANDED_OVER', handedOverTo: sent.sk });
    expect(peer.writes.length).toBeGreaterThan(0);
    for (const write of peer.writes) {
      expect(write.command).toBe('UpdateItemCommand');
      expect(String((write.input.Key as { pk: string }).pk)).toMatch(/^EVENT#/);
      expect(PEER_SETTLE_ATTRIBUTES).toEqual(expect.arrayContaining(attributesNamed(write.input)));
    }
  });

  it("reconcile says when the promotion's own successor pass had not finished: late successors are then not only late", async () => {
    await releasedAndSentInB('carried-3');
    const unfinishedPass = { partition: 1 };
    const bFence = await localFence(
      b,
      control({
        region: B,
        state: 'ACTIVE',
        epoch: 2,
        predecessor: { region: A, epoch: 1 },
        successorPass: unfinishedPass,
      }),
      clock.now,
    );
    const aFence = await localFence(a, control({ region: A, state: 'FENCED', epoch: 1, quiescentAt: 1 }), clock.now);
    const report = await reconcile(
      { region: A, fence: aFence, store: new DynamoSuccessorStore(a.doc, a.tableName, 4), intake },
      { region: B, fence: bFence, store: new DynamoSuccessorStore(b.doc, b.tableName, 4), intake },
      failback,
      clock,
    );
    expect(report.promotePassUnfinished).toBe(true);
  });

  it("a failback's pass gives no second successor to an original a later epoch's successor carries on", async () => {
    const { original } = await releasedAndSentInB('carried-2');
    const promoted = control({ region: A, state: 'ACTIVE', epoch: 3, predecessor: { region: B, epoch: 2 } });
    const aFence = await localFence(a, promoted, clock.now);
    const { counts } = await successorPass(
      { region: A, fence: aFence, store: new DynamoSuccessorStore(a.doc, a.tableName, 4) },
      promoted,
      { from: B, secondCopy: [], placement: DEFAULT_SWEEP_PLACEMENT },
      clock,
    );
    expect(counts.carriedOn).toBeGreaterThanOrEqual(1);
    const items = await a.eventItems('carried-2');
    expect(items.filter((i) => i.epoch === 3)).toEqual([]);
    expect(items.find((i) => i.sk === original.sk)?.status).toBe('PENDING');
  });
});
