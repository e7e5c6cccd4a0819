/**
 * The claim leaves the sweep key as it was, on DynamoDB Local: a claimed notification stays in the sweep index under
 * its PENDING key at its PENDING sweepAt (the index updates its projected status, attempt and lease in place: no
 * delete and put). The sweeper reads each PENDING partition up to now + the pending threshold and resolves an expired
 * lease there in the first run after it — whatever the channel's cap or the class order hold back — and never touches
 * a live one. Items claimed by an earlier deploy, under a SENDING key, are still resolved from there. A dead holder's
 * spooled send whose look-up the run cut short is resolved SENT by the next run, and a partition whose Query fails
 * every run neither fails the run nor hides a later partition's dead claim.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import { TABLE_SCHEMA } from '../../functions/contracts/table-schema.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { notificationKey, SWEEP_LEASE_CURSORS_KEY, sweepKey, sweepPartition } from '../../functions/domain/keys.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { DynamoEvidenceSpool, type EvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import { DynamoLeaseCursors, LEASE_WALK_FIRST_MAX } from '../../functions/stores/lease-cursors.ts';
import type { SweepStore } from '../../functions/stores/notification-store.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { spooledSends } from '../../functions/sweeper/spooled-send.ts';
import type { SweepDeps } from '../../functions/sweeper/sweep.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { MemoryIndex } from '../support/evidence-memory.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { proofOf, RETENTION } from '../support/spool-proofs.ts';
import { sweepWith } from '../support/sweep-deps.ts';

const THRESHOLD_MS = 900_000;
const LEASE_MS = 120_000;
let table: LocalTable;
let store: DynamoSweepStore;
// A table each: every test reads whole partitions, and each one's clock is its own.
beforeEach(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  store = new DynamoSweepStore(table.doc, table.tableName);
});

const RECENT = new Date().toISOString();
const TYPES = { critical: 'PasswordChanged', normal: undefined, bulk: 'StatementReady' } as const;
const DATA = {
  critical: { changeId: 'pw-1', via: 'APP' },
  normal: undefined,
  bulk: { accountLast4: '0042', periodEnd: '2026-11-30', closingBalance: '10000', currency: 'JPY' },
};

/** A notification as ingest writes it at `createdAt`: PENDING, due for the sweeper at createdAt + the threshold. */
async function put(
  eventId: string,
  channel: 'EMAIL' | 'SMS',
  createdAt: number,
  noticeClass: keyof typeof TYPES = 'normal',
  over: Partial<NotificationItem> = {},
): Promise<NotificationItem> {
  const type = TYPES[noticeClass];
  const d = decodeTransfer(
    transferEvent({ eventId, occurredAt: RECENT, ...(type === undefined ? {} : { type, data: DATA[noticeClass] }) }),
  );
  const n = { ...buildNotification(d.event, channel, 'x@example.com', createdAt, { retentionDays: 1 }), ...over };
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: n }));
  return n;
}

async function claimed(eventId: string, channel: 'EMAIL' | 'SMS', at: number): Promise<NotificationItem> {
  const claim = await store.claim(notificationKey(eventId, channel), `c-${eventId}`, at, LEASE_MS);
  if (claim.kind !== 'claimed') throw new Error(claim.kind);
  return claim.item;
}

/** What the sweep index holds under a key: each entry's id, status and sweepAt. */
async function indexed(key: string) {
  const items = await table.indexItems(TABLE_SCHEMA.sweepIndex, key);
  return items.map((i) => ({ id: i.notificationId, status: i.status, sweepAt: i.sweepAt }));
}

// 1 email a second × a 10 s period: 10 re-drives a run on EMAIL; SMS resends an expired lease.
const sweepAt = (now: number, over: Partial<SweepDeps> = {}) =>
  sweepWith(store, now, {
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
    sendRates: { EMAIL: 1, PUSH: 1_000, SMS: 1_000 },
    intervalMs: 10_000,
    pendingThresholdMs: THRESHOLD_MS,
    ...over,
  });

const ids = (es: readonly { notificationId: string }[]) => es.map((e) => e.notificationId);

describe('the claim does not re-key the sweep index', () => {
  it('a claimed notification stays under its PENDING key at its PENDING sweepAt; a lease extension moves neither', async () => {
    const now = Date.now();
    const n = await put('sl-claim', 'EMAIL', now);
    const item = await claimed('sl-claim', 'EMAIL', now);
    expect(item).toMatchObject({ status: 'SENDING', attempt: 1, sweepKey: n.sweepKey, sweepAt: now + THRESHOLD_MS });
    expect(n.sweepKey).toMatch(/^PENDING#EMAIL#\d$/);
    expect(await store.extendLease(item, now + 2 * LEASE_MS, now + 60_000)).toBe('applied');
    expect(await indexed(String(n.sweepKey))).toEqual([
      { id: n.notificationId, status: 'SENDING', sweepAt: now + THRESHOLD_MS },
    ]);
    expect(await indexed(sweepKey('SENDING', 'EMAIL', n.notificationId))).toEqual([]);
    // Finished, it leaves the index.
    const extended = await store.get(notificationKey('sl-claim', 'EMAIL'));
    expect(await store.markSent(extended as NotificationItem, 'ses-1', now + 61_000)).toBe('applied');
    expect(await indexed(String(n.sweepKey))).toEqual([]);
  });
});

describe("the sweeper resolves a dead holder's claim in the first run after its lease", () => {
  it('a claim whose holder dies is resolved in the first run after its lease though its sweepAt is 15 minutes ahead', async () => {
    const now = Date.now();
    const n = await put('sl-dead', 'EMAIL', now);
    await claimed('sl-dead', 'EMAIL', now);
    // Lease live: nothing to do, nothing written.
    const during = await sweepAt(now + LEASE_MS - 1);
    expect(during).toMatchObject({ resolvedUnknown: [], lostRaces: 0, examined: 0 });
    const after = await sweepAt(now + LEASE_MS + 1);
    expect(ids(after.resolvedUnknown)).toEqual([n.notificationId]);
    const item = await store.get(notificationKey('sl-dead', 'EMAIL'));
    expect(item).toMatchObject({ status: 'UNKNOWN', lastError: 'LEASE_EXPIRED', attempt: 1 });
    expect(item?.sweepKey).toBeUndefined();
  });

  it('on an at-least-once channel it is sent again under the same key, and a recorded acceptance makes it SENT', async () => {
    const now = Date.now();
    const resend = await put('sl-sms', 'SMS', now, 'bulk');
    await claimed('sl-sms', 'SMS', now);
    const accepted = await put('sl-acc', 'SMS', now);
    const holder = await claimed('sl-acc', 'SMS', now);
    expect(await store.extendLease(holder, now + LEASE_MS, now + 1_000, 'sns-acc')).toBe('applied');
    const r = await sweepAt(now + LEASE_MS + 1);
    expect(ids(r.resolvedRetry)).toEqual([resend.notificationId]);
    expect(ids(r.resolvedSent)).toEqual([accepted.notificationId]);
    // Back to PENDING in its own class's partition, without a read for its template.
    expect(await store.get(notificationKey('sl-sms', 'SMS'))).toMatchObject({
      status: 'PENDING',
      attempt: 1,
      sweepKey: resend.sweepKey,
      sweepAt: now + LEASE_MS + 1 + THRESHOLD_MS,
    });
    expect(resend.sweepKey).toMatch(/^PENDING#SMS#bulk#\d$/);
    expect(await store.get(notificationKey('sl-acc', 'SMS'))).toMatchObject({ status: 'SENT' });
  });

  it("a lease extended with the message id and its record's reference (never without the id): the sweeper's SENT from the id keeps the reference, so the item names its record", async () => {
    const now = Date.now();
    await put('sl-named', 'EMAIL', now);
    const holder = await claimed('sl-named', 'EMAIL', now);
    // Accepted after the item was created, as every send of its attempt is (domain/attempt-evidence.ts).
    const accepted = new Date(now + 800).toISOString();
    const evidence = { batch: sliceBatchName(now, RETENTION), sha256: 'cd'.repeat(32), acceptedAt: accepted };
    // Without the id (a write before the provider answered) the reference is not written: it goes with the acceptance.
    expect(await store.extendLease(holder, now + LEASE_MS, now + 500, undefined, evidence)).toBe('applied');
    expect((await store.get(notificationKey('sl-named', 'EMAIL')))?.evidence).toBeUndefined();
    expect(await store.extendLease(holder, now + LEASE_MS, now + 1_000, 'ses-named', evidence)).toBe('applied');
    expect(await store.get(notificationKey('sl-named', 'EMAIL'))).toMatchObject({ status: 'SENDING', evidence });
    const r = await sweepAt(now + LEASE_MS + 1);
    expect(ids(r.sentFromItem)).toEqual(['sl-named#EMAIL']);
    expect(await store.get(notificationKey('sl-named', 'EMAIL'))).toMatchObject({
      status: 'SENT',
      sesMessageId: 'ses-named',
      evidence,
    });
  });

  it('a dead claim in a bulk partition is resolved while critical notices are due', async () => {
    const now = Date.now();
    // 40 critical emails due for 45 minutes, over the shards: the cap of 10 a run leaves them due, holding bulk back.
    for (let i = 0; i < 40; i++) await put(`sl-crit-${i}`, 'EMAIL', now - 3_600_000, 'critical');
    const bulk = await put('sl-bulk', 'EMAIL', now, 'bulk');
    await claimed('sl-bulk', 'EMAIL', now);
    expect(bulk.sweepKey).toMatch(/^PENDING#EMAIL#bulk#\d$/);
    const r = await sweepAt(now + LEASE_MS + 1);
    expect(r.redriven).toHaveLength(10);
    expect(r.redriven.every((e) => e.notificationId.startsWith('sl-crit-'))).toBe(true);
    expect(ids(r.resolvedUnknown)).toEqual([bulk.notificationId]);
  });

  it('a dead claim in a capped partition is resolved', async () => {
    const now = Date.now();
    // 40 normal emails due, the cap of 10 a run, and a dead claim among them in the same class (and channel).
    for (let i = 0; i < 40; i++) await put(`sl-due-${i}`, 'EMAIL', now - 3_600_000);
    const dead = await put('sl-capped', 'EMAIL', now);
    await claimed('sl-capped', 'EMAIL', now);
    const r = await sweepAt(now + LEASE_MS + 1);
    expect(r.redriven).toHaveLength(10);
    expect(r.unfinished).toBeGreaterThan(0);
    expect(ids(r.resolvedUnknown)).toEqual([dead.notificationId]);
    expect(r.leasePass.unfinished).toBe(0);
  });

  it('a live lease is neither written nor re-driven nor counted against the cap', async () => {
    const now = Date.now();
    // Claimed late (its PENDING sweepAt long passed), so it sits among the due items; and one stuck item due after it.
    const live = await put('sl-live', 'EMAIL', now - 3_600_000);
    await claimed('sl-live', 'EMAIL', now);
    const before = await store.get(notificationKey('sl-live', 'EMAIL'));
    // In the same partition, read after it.
    const sameShard = Array.from({ length: 64 }, (_, i) => `sl-stuck-${i}`).find(
      (id) => sweepKey('PENDING', 'EMAIL', `${id}#EMAIL`) === live.sweepKey,
    );
    const stuck = await put(String(sameShard), 'EMAIL', now - 1_800_000);
    expect(stuck.sweepKey).toBe(live.sweepKey);
    // A cap of one re-drive on EMAIL this run.
    const r = await sweepAt(now + 60_000, { sendRates: { EMAIL: 1, PUSH: 1, SMS: 1 }, intervalMs: 1_000 });
    expect(ids(r.redriven)).toEqual([stuck.notificationId]);
    expect(r).toMatchObject({ resolvedUnknown: [], resolvedRetry: [], expired: [], lostRaces: 0 });
    expect(await store.get(notificationKey('sl-live', 'EMAIL'))).toEqual(before);
  });

  it('an item claimed under the re-keying code is still resolved from its SENDING partition; a live one is left', async () => {
    const now = Date.now();
    const old = await put('sl-old', 'SMS', now - 600_000, 'critical', {
      status: 'SENDING',
      attempt: 1,
      leaseUntil: now - 1_000,
      sweepKey: sweepKey('SENDING', 'SMS', 'sl-old#SMS'),
      sweepAt: now - 1_000,
    });
    // Claimed by the earlier deploy, its lease extended by this one (which no longer moves sweepAt): still live.
    const extended = await put('sl-old-live', 'EMAIL', now - 600_000, 'normal', {
      status: 'SENDING',
      attempt: 1,
      leaseUntil: now + 60_000,
      sweepKey: sweepKey('SENDING', 'EMAIL', 'sl-old-live#EMAIL'),
      sweepAt: now - 30_000,
    });
    const r = await sweepAt(now);
    expect(ids(r.resolvedRetry)).toEqual([old.notificationId]);
    expect(r.lostRaces).toBe(0);
    // Released under its class's PENDING key (read from the item: the SENDING key carries no class).
    expect(await store.get(notificationKey('sl-old', 'SMS'))).toMatchObject({
      status: 'PENDING',
      sweepKey: expect.stringMatching(/^PENDING#SMS#critical#\d$/),
    });
    expect(await store.get(notificationKey('sl-old-live', 'EMAIL'))).toMatchObject({
      status: 'SENDING',
      sweepKey: extended.sweepKey,
    });
  });

  it('a lease pass resumes where a saved cursor (a real LastEvaluatedKey, through its item) stopped it', async () => {
    const now = Date.now();
    // Bulk, held behind due critical emails: only the lease pass reads it. Two dead claims in the one partition.
    for (let i = 0; i < 40; i++) await put(`sl-rc-${i}`, 'EMAIL', now - 3_600_000, 'critical');
    const first = await put('sl-first', 'EMAIL', now - 60_000, 'bulk');
    const second = String(
      Array.from({ length: 64 }, (_, i) => `sl-second-${i}`).find(
        (id) => sweepKey('PENDING', 'EMAIL', `${id}#EMAIL`, 8, 'bulk') === first.sweepKey,
      ),
    );
    await put(second, 'EMAIL', now, 'bulk');
    await claimed('sl-first', 'EMAIL', now);
    await claimed(second, 'EMAIL', now);
    const partition = { state: 'PENDING', channel: 'EMAIL', noticeClass: 'bulk', shard: 0 } as const;
    const shard = Number(String(first.sweepKey).split('#').at(-1));
    const page = await store.findDue(
      { ...partition, shard },
      { now: now + 10 * LEASE_MS, until: now + THRESHOLD_MS },
      1,
    );
    expect(ids(page.entries)).toEqual([first.notificationId]);
    const cursors = new DynamoLeaseCursors(table.doc, table.tableName);
    await cursors.save({ [String(first.sweepKey)]: page.next ?? {} }, now);
    const saved = await cursors.load();
    expect(Object.keys(saved.cursors)).toEqual([first.sweepKey]);

    // Resumed past the first: only the second is found this run, and nothing is left to resume.
    const resumed = await sweepAt(now + LEASE_MS + 1, { leaseCursors: saved.cursors });
    expect(ids(resumed.resolvedUnknown)).toEqual([`${second}#EMAIL`]);
    expect(resumed.leasePass).toMatchObject({ unfinished: 0, cursors: {} });
    await cursors.save(resumed.leasePass.cursors, now);
    expect(await cursors.load()).toEqual({ cursors: {}, resumeAt: undefined, walkFirst: [], leaseAt: {} });
    // The next run reads the partition from its start.
    const next = await sweepAt(now + LEASE_MS + 2, { leaseCursors: {} });
    expect(ids(next.resolvedUnknown)).toEqual([first.notificationId]);
    // Where the rotation stopped round-trips through the item too, and a save without it clears it.
    const at = { noticeClass: 'bulk', channel: 'SMS', shard: 7 } as const;
    await cursors.save({}, now, at);
    expect(await cursors.load()).toEqual({ cursors: {}, resumeAt: at, walkFirst: [], leaseAt: {} });
    await cursors.save({}, now);
    expect((await cursors.load()).resumeAt).toBeUndefined();
    // So do the partitions kept for a lease left for the next run, at most LEASE_WALK_FIRST_MAX, and a save without
    // them clears them.
    const many = Array.from({ length: LEASE_WALK_FIRST_MAX + 1 }, (_, i) => `PENDING#EMAIL#critical#${i}`);
    await cursors.save({}, now, undefined, many);
    expect((await cursors.load()).walkFirst).toEqual(many.slice(0, LEASE_WALK_FIRST_MAX));
    // With where each one's lease sits, kept only for the partitions kept; a save without it (an older item) loads none.
    const last = many[LEASE_WALK_FIRST_MAX] as string;
    await cursors.save({}, now, undefined, many, { [many[0] as string]: now - 5, [last]: now });
    expect(await cursors.load()).toMatchObject({
      walkFirst: many.slice(0, LEASE_WALK_FIRST_MAX),
      leaseAt: { [many[0] as string]: now - 5 },
    });
    await cursors.save({}, now, undefined, many);
    expect((await cursors.load()).leaseAt).toEqual({});
    // A hand-edited one keeps only its numbers.
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: SWEEP_LEASE_CURSORS_KEY,
        UpdateExpression: 'SET leaseAt = :lease',
        ExpressionAttributeValues: { ':lease': { a: 'soon', b: now } },
      }),
    );
    expect((await cursors.load()).leaseAt).toEqual({ b: now });
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: SWEEP_LEASE_CURSORS_KEY,
        UpdateExpression: 'SET leaseAt = :lease',
        ExpressionAttributeValues: { ':lease': [now] },
      }),
    );
    expect((await cursors.load()).leaseAt).toEqual({});
    await cursors.save({}, now, at, []);
    expect(await cursors.load()).toEqual({ cursors: {}, resumeAt: at, walkFirst: [], leaseAt: {} });
  });
  it('a saved cursor DynamoDB would refuse (a day ahead, an extra attribute) is set aside, and the run goes on', async () => {
    const now = Date.now();
    // Bulk, held behind due critical emails: only the lease pass reads it.
    for (let i = 0; i < 40; i++) await put(`sl-bc-${i}`, 'EMAIL', now - 3_600_000, 'critical');
    const first = await put('sl-bc-dead', 'EMAIL', now - 60_000, 'bulk');
    await claimed('sl-bc-dead', 'EMAIL', now);
    const key = String(first.sweepKey);
    const cursor = { sweepKey: key, sweepAt: now - 1_000, pk: 'EVENT#x', sk: 'NOTIFICATION#EMAIL' };
    // A day ahead (a hand edit, or a release that lowered the threshold): set aside before the Query.
    const ahead = await sweepAt(now + LEASE_MS + 1, {
      leaseCursors: { [key]: { ...cursor, sweepAt: now + 86_400_000 } },
    });
    expect(ahead.leasePass.dropped).toEqual([{ partition: key, reason: 'lies beyond the horizon' }]);
    // Read from the round's stop instead: the dead claim the cursor would have skipped is found.
    expect(ids(ahead.resolvedUnknown)).toEqual([first.notificationId]);
    // An extra attribute: DynamoDB refuses the start key (ValidationException); set aside, the partition read again.
    const extra = await sweepAt(now + LEASE_MS + 2, { leaseCursors: { [key]: { ...cursor, note: 'hand edit' } } });
    expect(extra.leasePass.dropped).toEqual([
      { partition: key, reason: expect.stringMatching(/^refused by DynamoDB: .*starting key/) },
    ]);
    expect(extra.leasePass.unfinished).toBe(0);
  });
});

/** An event id whose notification on `channel` lands in the PENDING partition of `noticeClass` numbered `shard`. */
const idIn = (prefix: string, channel: 'EMAIL' | 'SMS', noticeClass: 'normal' | 'bulk', shard: number) =>
  String(
    Array.from({ length: 256 }, (_, i) => `${prefix}-${i}`).find(
      (id) =>
        sweepKey('PENDING', channel, `${id}#${channel}`, 8, noticeClass) ===
        `PENDING#${channel}#${noticeClass}#${shard}`,
    ),
  );

describe("a dead holder's spooled send whose look-up the run's deadline cut short", () => {
  it('is left SENDING with its partition kept before it, and the next run resolves it SENT from the spool', async () => {
    const now = Date.now();
    // Bulk, held behind due critical emails: only the lease pass reads it, from a saved cursor just before the claim.
    for (let i = 0; i < 40; i++) await put(`sl-sp-${i}`, 'EMAIL', now - 3_600_000, 'critical');
    const before = await put(idIn('sl-sp-before', 'EMAIL', 'bulk', 5), 'EMAIL', now - 60_000, 'bulk');
    const holder = idIn('sl-sp-dead', 'EMAIL', 'bulk', 5);
    const n = await put(holder, 'EMAIL', now, 'bulk');
    await claimed(holder, 'EMAIL', now);
    const key = String(n.sweepKey);
    const partition = { state: 'PENDING', channel: 'EMAIL', noticeClass: 'bulk', shard: 5 } as const;
    const page = await store.findDue(partition, { now, until: now + THRESHOLD_MS }, 1);
    expect(ids(page.entries)).toEqual([before.notificationId]);
    // The holder spooled its send's record, then died before its SENT write.
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    const proof = proofOf(holder, now + 500, undefined, 'EMAIL');
    const slice = sliceBatchName(now, RETENTION);
    const notificationId = `${holder}#EMAIL`;
    await spool.put([{ slice, sha256: proof.sha256, notificationId, recordKind: 'SEND', bytes: proof.bytes }], now);
    const cursors = new DynamoLeaseCursors(table.doc, table.tableName);
    await cursors.save({ [key]: page.next ?? {} }, now);

    // Run 1: the clock reaches the run's deadline as the look-up starts reading the spool.
    const run1 = now + LEASE_MS + 1;
    const clock = { t: run1 };
    const deadline = run1 + 50_000;
    const cut = {
      async *minuteOf(startMs: number, shard: number, max: number) {
        clock.t = deadline;
        yield* spool.minuteOf(startMs, shard, max);
      },
      recordAt: (slice: string, sha256: string) => spool.recordAt(slice, sha256),
    };
    const lookUps = (over: { spool: Pick<EvidenceSpool, 'minuteOf' | 'recordAt'>; now: () => number }, by: number) =>
      spooledSends({
        notifications: store,
        outlets: { index: { index: new MemoryIndex(), retentionDays: RETENTION } },
        deadline: by,
        maxRecords: 20_000,
        ...over,
      });
    const first = lookUps({ spool: cut, now: () => clock.t }, deadline);
    const saved = await cursors.load();
    const r1 = await sweepAt(run1, {
      now: () => clock.t,
      deadline,
      spooled: first,
      leaseCursors: saved.cursors,
    });
    expect(first.lookups).toMatchObject({ deferred: 1, skipped: 0, found: 0 });
    expect([...r1.resolvedUnknown, ...r1.resolvedRetry, ...r1.resolvedSent]).toEqual([]);
    expect(await store.get(notificationKey(holder, 'EMAIL'))).toMatchObject({ status: 'SENDING', attempt: 1 });
    // Kept where it was read from, before the claim, not past it, and to be walked first by the next run.
    expect(r1.leasePass.cursors[key]).toEqual(page.next);
    expect(r1.leasePass.walkFirst).toEqual([key]);
    await cursors.save(r1.leasePass.cursors, run1, r1.leasePass.resumeAt, r1.leasePass.walkFirst);

    // Run 2, a minute later: its own deadline; the claim's partition is walked first (its key through the item), and
    // the claim resolved from its spooled record.
    const run2 = run1 + 60_000;
    const next = await cursors.load();
    expect(next.walkFirst).toEqual([key]);
    const second = lookUps({ spool, now: () => run2 }, run2 + 50_000);
    const walked: string[] = [];
    const r2 = await sweepAt(run2, {
      store: Object.assign(Object.create(store) as DynamoSweepStore, {
        findExpiredLeases: (...args: Parameters<SweepStore['findExpiredLeases']>) => {
          walked.push(sweepPartition(args[0]));
          return store.findExpiredLeases(...args);
        },
      }),
      spooled: second,
      leaseCursors: next.cursors,
      leaseResumeAt: next.resumeAt,
      leaseWalkFirst: next.walkFirst,
    });
    expect(walked[0]).toBe(key);
    expect(r2.leasePass.walkFirst).toEqual([]);
    expect(ids(r2.resolvedSent)).toEqual([notificationId]);
    expect(second.lookups).toMatchObject({ found: 1, deferred: 0, skipped: 0 });
    expect(await store.get(notificationKey(holder, 'EMAIL'))).toMatchObject({
      status: 'SENT',
      evidence: { batch: slice, sha256: proof.sha256 },
    });
  });
});

describe('a lease-pass partition whose Query fails every run', () => {
  /** The store, but every lease-pass Query of `failing` answers as a throttled table does. */
  const throttledIn = (failing: string): SweepStore =>
    Object.assign(Object.create(store) as DynamoSweepStore, {
      findExpiredLeases: async (...args: Parameters<SweepStore['findExpiredLeases']>) => {
        if (sweepPartition(args[0]) === failing)
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
            name: 'ThrottlingException',
            $fault: 'client',
            $metadata: { httpStatusCode: 400 },
          });
        return store.findExpiredLeases(...args);
      },
    });

  it('does not fail the run, and a later partition’s dead claim is resolved in the first run after its lease, each run', async () => {
    const now = Date.now();
    // Bulk emails, held behind due critical ones: only the lease pass reads them. Shard 1 fails; shard 6 is later.
    for (let i = 0; i < 40; i++) await put(`sl-fp-${i}`, 'EMAIL', now - 3_600_000, 'critical');
    const stuck = idIn('sl-fp-stuck', 'EMAIL', 'bulk', 1);
    const early = idIn('sl-fp-early', 'EMAIL', 'bulk', 6);
    const late = idIn('sl-fp-late', 'EMAIL', 'bulk', 6);
    for (const id of [stuck, early, late]) await put(id, 'EMAIL', now, 'bulk');
    await claimed(stuck, 'EMAIL', now);
    await claimed(early, 'EMAIL', now);
    await claimed(late, 'EMAIL', now + 60_000);
    const failing = 'PENDING#EMAIL#bulk#1';
    const throttled = throttledIn(failing);
    const run = (at: number) =>
      sweepWith(throttled, at, {
        policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
        sendRates: { EMAIL: 1, PUSH: 1_000, SMS: 1_000 },
        intervalMs: 10_000,
        pendingThresholdMs: THRESHOLD_MS,
      });

    const r1 = await run(now + LEASE_MS + 1);
    expect(ids(r1.resolvedUnknown)).toEqual([`${early}#EMAIL`]);
    expect(r1.redriven).toHaveLength(10);
    expect(r1.leasePass.failed).toEqual([
      { partition: failing, error: 'ThrottlingException: Rate of requests exceeds the allowed throughput.' },
    ]);
    expect(r1.leasePass.resumeAt).toBeUndefined();
    const r2 = await run(now + 60_000 + LEASE_MS + 1);
    expect(ids(r2.resolvedUnknown)).toEqual([`${late}#EMAIL`]);
    expect(r2.leasePass.failed).toEqual([
      { partition: failing, error: 'ThrottlingException: Rate of requests exceeds the allowed throughput.' },
    ]);
    // The failing partition's claim waits for its Query to succeed: then it is resolved like any other.
    expect(await store.get(notificationKey(stuck, 'EMAIL'))).toMatchObject({ status: 'SENDING' });
    const healed = await sweepAt(now + 120_000 + LEASE_MS);
    expect(ids(healed.resolvedUnknown)).toEqual([`${stuck}#EMAIL`]);
  });
});
