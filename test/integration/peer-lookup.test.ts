/**
 * Ingest of a stage in two regions, on DynamoDB Local, as the deployed handler wires it (docs/regions.md "Events read
 * again"): the look-up in the reconciled old region goes through the deployed client (functions/ingest/peer-lookup.ts:
 * one attempt, a short timeout) to the old region's replica and fence; a record MSK Replicator copied from the other
 * cluster (`__mskmr`) is taken only by the other region's active successor. Two tables stand for the two replicas of
 * the global table (DynamoDB Local shares one database, so the names differ; deployed, they are the same).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FenceControl } from '../../functions/domain/fence.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { OwnedInboxStore, RegionFencedError } from '../../functions/ingest/owned-inbox-store.ts';
import { peerInboxes } from '../../functions/ingest/peer-lookup.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, localFence, newLocalTable } from '../support/local-table.ts';
import { memoryBatchDeps } from '../support/memory-inbox-store.ts';

const PRIMARY = 'ap-northeast-1';
const RECOVERY = 'ap-northeast-3';
const CUT = Date.parse('2026-11-30T10:00:00Z');
const NOW = CUT + 120_000;
const BEFORE_CUT = '2026-11-30T09:59:00Z';
const AFTER_CUT = '2026-11-30T10:01:30Z';
const FROM_PRIMARY = 'bank-events/banking.transfers';
let recovery: LocalTable;
let primary: LocalTable;
let silent: Server;
const held: Socket[] = [];
let silentEndpoint: string;
let refusingEndpoint: string;

beforeAll(async () => {
  [recovery, primary] = await Promise.all([
    newLocalTable(inject('dynamoEndpoint')),
    newLocalTable(inject('dynamoEndpoint')),
  ]);
  // An endpoint that accepts the connection and never answers: the old region's DynamoDB hanging.
  silent = createServer((socket) => {
    held.push(socket);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentEndpoint = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  // An endpoint that refuses: a port nothing listens on any more.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  refusingEndpoint = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

const controlOf = (region: string, over: Partial<FenceControl>): FenceControl => ({
  region,
  state: 'ACTIVE',
  epoch: 2,
  since: CUT,
  by: 'test',
  reason: 'failover',
  mode: 'FORCED',
  ...over,
});
const reconciled = controlOf(RECOVERY, {
  cutAt: CUT,
  predecessor: { region: PRIMARY, epoch: 1, reconciledAt: NOW - 1 },
  lookupUntil: NOW + 3_600_000,
});
const unreconciled = controlOf(RECOVERY, { cutAt: CUT, predecessor: { region: PRIMARY, epoch: 1 } });
const oldFenced = controlOf(PRIMARY, { state: 'FENCED', epoch: 1, quiescentAt: NOW - 10 });

/**
 * The look-up's timeout where the old region answers: DynamoDB Local on a loaded CI machine can take longer than the
 * deployed short timeout, and an answer taken as none would hold the event. Only the silent endpoint's test waits it out.
 */
const ANSWERED_MS = 30_000;

/** The region's ingest as its handler wires it; the old region reached at `endpoint`, its fence saying `oldState`. */
async function ingestIn(
  here: LocalTable,
  control: FenceControl,
  old: { fence: FenceControl; endpoint?: string; timeoutMs?: number },
) {
  const oldFence = await localFence(primary, old.fence, () => NOW);
  const unanswered: string[] = [];
  const peer = peerInboxes(
    {
      region: PRIMARY,
      tableName: primary.tableName,
      fenceTable: oldFence.tableName,
      timeoutMs: old.timeoutMs ?? ANSWERED_MS,
    },
    () => NOW,
    old.endpoint ?? primary.endpoint,
  );
  const store = new OwnedInboxStore(
    new DynamoInboxStore(here.doc, here.tableName),
    await localFence(here, control, () => NOW),
    control.region,
    {
      secondCopy: [],
      clockMarginMs: 60_000,
      now: () => NOW,
      predecessorInboxes: (ids) => peer.taken(ids),
      onLookupUnanswered: (eventId) => unanswered.push(eventId),
    },
  );
  const deps = { ...memoryBatchDeps(undefined as never), store, now: () => NOW };
  const read = (eventId: string, occurredAt: string, replicatedFrom?: string) =>
    ingestBatch(
      mskEvent([
        {
          topic: 'banking.transfers',
          partition: 0,
          offset: 7,
          value: transferEvent({ eventId, occurredAt }),
          ...(replicatedFrom === undefined ? {} : { headers: { __mskmr: replicatedFrom } }),
        },
      ]),
      deps,
    );
  return { read, unanswered };
}

const statuses = async (table: LocalTable, eventId: string) =>
  (await table.eventItems(eventId)).map((i) => [i.sk, i.status ?? null]).sort();

describe("the deployed look-up in the reconciled old region's replica", () => {
  it('an event the old region took is a duplicate here, and nothing is written', async () => {
    const oldIngest = {
      ...memoryBatchDeps(undefined as never),
      store: new DynamoInboxStore(primary.doc, primary.tableName),
    };
    await ingestBatch(
      mskEvent([
        {
          topic: 'banking.transfers',
          partition: 0,
          offset: 1,
          value: transferEvent({ eventId: 'peer-taken-1', occurredAt: BEFORE_CUT }),
        },
      ]),
      oldIngest,
    );
    const { read, unanswered } = await ingestIn(recovery, reconciled, { fence: oldFenced });
    expect((await read('peer-taken-1', BEFORE_CUT)).figures).toMatchObject({ duplicates: 1, accepted: 0 });
    expect(await recovery.eventItems('peer-taken-1')).toEqual([]);
    expect(unanswered).toEqual([]);
  });

  it('an event the old region never took is new once it is reconciled: sent from here', async () => {
    const { read } = await ingestIn(recovery, reconciled, { fence: oldFenced });
    expect((await read('peer-absent-1', BEFORE_CUT)).figures.accepted).toBe(1);
    expect(await statuses(recovery, 'peer-absent-1')).toContainEqual(['NOTIFICATION#EMAIL', 'PENDING']);
  });

  it('the old region refusing connections: the event is held, not sent, and the unanswered look-up reported', async () => {
    const { read, unanswered } = await ingestIn(recovery, reconciled, { fence: oldFenced, endpoint: refusingEndpoint });
    expect((await read('peer-refused-1', BEFORE_CUT)).figures.accepted).toBe(1);
    expect(await statuses(recovery, 'peer-refused-1')).toContainEqual(['NOTIFICATION#EMAIL#E2', 'FAILOVER_HELD']);
    expect(unanswered).toEqual(['peer-refused-1']);
  });

  it('the old region never answering: held once the short timeout passes, and reported', async () => {
    const { read, unanswered } = await ingestIn(recovery, reconciled, {
      fence: oldFenced,
      endpoint: silentEndpoint,
      timeoutMs: 300,
    });
    const summary = await read('peer-silent-1', BEFORE_CUT);
    expect(summary.failure).toBeUndefined();
    expect(await statuses(recovery, 'peer-silent-1')).toContainEqual(['NOTIFICATION#SMS#E2', 'FAILOVER_HELD']);
    expect(unanswered).toEqual(['peer-silent-1']);
  });

  it('the old region active again (promoted since): its "absent" proves nothing, so the event is held', async () => {
    const { read, unanswered } = await ingestIn(recovery, reconciled, {
      fence: controlOf(PRIMARY, { state: 'ACTIVE', epoch: 3 }),
    });
    await read('peer-active-1', BEFORE_CUT);
    expect(await statuses(recovery, 'peer-active-1')).toContainEqual(['NOTIFICATION#PUSH#E2', 'FAILOVER_HELD']);
    expect(unanswered).toEqual(['peer-active-1']);
  });
});

describe('a record MSK Replicator copied from the other cluster (__mskmr)', () => {
  it('the old region healed with its fence still ACTIVE does not take it: quarantined with the reason, nothing sent', async () => {
    const healed = controlOf(PRIMARY, { epoch: 1, mode: 'INITIAL' });
    const { read } = await ingestIn(primary, healed, { fence: controlOf(RECOVERY, { epoch: 2 }) });
    const summary = await read('copied-back-1', AFTER_CUT, 'bank-events-dr/banking.transfers');
    expect(summary.figures).toMatchObject({ accepted: 0, quarantined: 1 });
    expect(summary.results[0]).toMatchObject({ kind: 'quarantined', rejection: { reason: 'REPLICATED_NOT_TAKEN' } });
    // In the event's partition only the reference to its quarantine item: no inbox item, no notification.
    expect((await primary.eventItems('copied-back-1')).map((i) => i.sk)).toEqual(['QUARANTINED#banking.transfers#0#7']);
    const kept = (await primary.allItems()).find((i) => i.kind === 'QUARANTINE' && i.eventId === 'copied-back-1');
    expect(kept).toMatchObject({
      reason: 'REPLICATED_NOT_TAKEN',
      producer: { headers: { __mskmr: 'bank-events-dr/banking.transfers' } },
    });
    expect(String(kept?.detail)).toContain('has no predecessor');
    expect(String(kept?.raw)).not.toBe('');
  });

  it('a region active on a stale epoch whose reconciled predecessor is active again does not take it, nor hold it', async () => {
    // After a failback (this region's predecessor the other, reconciled), a second failover it did not see.
    const stale = controlOf(PRIMARY, {
      epoch: 3,
      cutAt: CUT,
      predecessor: { region: RECOVERY, epoch: 2, reconciledAt: NOW - 1 },
    });
    const { read, unanswered } = await ingestIn(primary, stale, { fence: controlOf(RECOVERY, { epoch: 4 }) });
    const summary = await read('copied-back-3', AFTER_CUT, 'bank-events-dr/banking.transfers');
    expect(summary.results[0]).toMatchObject({ kind: 'quarantined', rejection: { reason: 'REPLICATED_NOT_TAKEN' } });
    // No held inbox item: the other region, reading the record from its own cluster, must not find the event taken.
    expect((await primary.eventItems('copied-back-3')).map((i) => i.sk)).toEqual(['QUARANTINED#banking.transfers#0#7']);
    expect(unanswered).toEqual([]);
  });

  it('the old region once fenced takes nothing at all: the batch fails for redelivery, nothing written', async () => {
    const { read } = await ingestIn(primary, controlOf(PRIMARY, { state: 'FENCED', epoch: 1 }), {
      fence: controlOf(RECOVERY, { epoch: 2 }),
    });
    const summary = await read('copied-back-2', AFTER_CUT, 'bank-events-dr/banking.transfers');
    expect(summary.failure).toBeInstanceOf(RegionFencedError);
    expect(await primary.eventItems('copied-back-2')).toEqual([]);
  });

  it('the active successor holds it before the reconciliation, even when it occurred after the cut and the margin', async () => {
    const { read } = await ingestIn(recovery, unreconciled, { fence: oldFenced });
    await read('copied-after-cut-1', AFTER_CUT, FROM_PRIMARY);
    expect(await statuses(recovery, 'copied-after-cut-1')).toContainEqual(['NOTIFICATION#EMAIL#E2', 'FAILOVER_HELD']);
    // Produced here at the same moment: new, as before.
    await read('produced-here-1', AFTER_CUT);
    expect(await statuses(recovery, 'produced-here-1')).toContainEqual(['NOTIFICATION#EMAIL', 'PENDING']);
  });

  it('the active successor, once reconciled, takes it after asking the old region: absent there, new and sent', async () => {
    const { read } = await ingestIn(recovery, reconciled, { fence: oldFenced });
    await read('copied-after-cut-2', AFTER_CUT, FROM_PRIMARY);
    expect(await statuses(recovery, 'copied-after-cut-2')).toContainEqual(['NOTIFICATION#EMAIL', 'PENDING']);
  });
});
