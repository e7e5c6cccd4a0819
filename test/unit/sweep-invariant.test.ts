/**
 * The invariant the sweeper's lease reading rests on (functions/domain/sweep-index.ts leaseHorizon): every write that
 * puts a notification (back) to PENDING sets sweepAt <= max(its time, retryAt) + the pending threshold. The claim
 * needs retryAt passed and leaves sweepAt as it was, so every claimed item sits at or before the horizon the sweeper
 * reads to in any later run — where a dead holder's claim is found. A writer that put an item further ahead would
 * hide its dead claims from the sweeper until then.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { SendError } from '../../functions/dispatch/send-error.ts';
import { buildSuccessor } from '../../functions/domain/failover.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { deferredSweepAt, LEASE_HORIZON_SKEW_MS, leaseHorizon } from '../../functions/domain/sweep-index.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { DynamoEventStore, type ResendTarget } from '../../functions/stores/event-store.ts';
import type { NotificationStore, Release, SweepEntry, SweepStore } from '../../functions/stores/notification-store.ts';
import { DynamoSuccessorStore, type OwnedNotification } from '../../functions/stores/successor-store.ts';
import { sweep } from '../../functions/sweeper/sweep.ts';
import { dispatchDeps } from '../support/dispatch-deps.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { ALICE_ID } from '../support/operator.ts';
import { sweepDeps } from '../support/sweep-deps.ts';

const T0 = 1_800_000_000_000;
const time = fc.integer({ min: T0, max: T0 + 30 * 86_400_000 });
const threshold = fc.integer({ min: 60_000, max: 86_400_000 });
const ahead = fc.integer({ min: 0, max: 7 * 86_400_000 });

/** A PENDING write's result: its time, its retryAt (a deferral's), and the sweepAt it set. */
interface PendingWrite {
  readonly at: number;
  readonly retryAt?: number;
  readonly sweepAt: number;
}

/** The invariant, and what it buys: a claim after it, read by any later run, lies within that run's horizon. */
function holds(w: PendingWrite, t: number, claimAfter: number, sweepAfter: number) {
  const due = Math.max(w.at, w.retryAt ?? w.at);
  expect(w.sweepAt).toBeLessThanOrEqual(due + t);
  // The claim's condition: retryAt passed. The sweeper's clock may run up to the skew behind dispatch's.
  const claimedAt = due + claimAfter;
  const sweptAt = claimedAt + sweepAfter - LEASE_HORIZON_SKEW_MS;
  expect(w.sweepAt).toBeLessThanOrEqual(leaseHorizon(sweptAt, t));
}

const notification = (at: number, t: number) =>
  buildNotification(
    decodeTransfer(transferEvent({ eventId: `inv-${at}` })).event,
    'EMAIL',
    'x@example.com',
    at,
    { retentionDays: 1 },
    { sweepShards: 8, pendingThresholdMs: t },
  );

describe('every PENDING writer keeps sweepAt <= max(now, retryAt) + the pending threshold', () => {
  it("ingest's new notification", () => {
    fc.assert(
      fc.property(time, threshold, ahead, ahead, (at, t, c, s) => {
        holds({ at, sweepAt: Number(notification(at, t).sweepAt) }, t, c, s);
      }),
    );
  });

  it('a deferral: a near retry at retryAt + the threshold, a far one at its retryAt', () => {
    fc.assert(
      fc.property(
        time,
        ahead,
        fc.integer({ min: 0, max: 3_600_000 }),
        threshold,
        ahead,
        ahead,
        (at, r, near, t, c, s) => {
          const retryAt = at + r;
          holds({ at, retryAt, sweepAt: deferredSweepAt(at, retryAt, near, t) }, t, c, s);
        },
      ),
    );
  });

  it("a failover's successor that starts PENDING", () => {
    fc.assert(
      fc.property(time, threshold, ahead, ahead, (at, t, c, s) => {
        const original = notification(at - 60_000, t);
        const successor = buildSuccessor(
          original,
          { status: 'PENDING', heldReason: 'INHERITED_PENDING', secondCopy: true },
          { owner: 'ap-northeast-3', epoch: 2 },
          at,
          { sweepShards: 8, pendingThresholdMs: t },
        );
        holds({ at, sweepAt: Number(successor.sweepAt) }, t, c, s);
      }),
    );
  });

  it("dispatch's own release of its claim: a deferral (throttled, not sent) and an unknown outcome let go for a resend (at least once)", async () => {
    const failures = [
      new SendError('throttled', 'Throttling', 'throttled'),
      new SendError('notSent', 'ECONNREFUSED', 'refused'),
      new SendError('unknown', 'ECONNRESET', 'reset'),
    ];
    await fc.assert(
      fc.asyncProperty(
        time,
        threshold,
        ahead,
        ahead,
        fc.constantFrom(...failures),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        async (now, t, c, s, failure, random) => {
          const released: { at: number; release: Release }[] = [];
          // An event of a moment ago: its moment lets the send go (an old one would end unsent before the provider).
          const event = transferEvent({ eventId: `inv-${now}`, occurredAt: new Date(now - 2_000).toISOString() });
          const item = buildNotification(
            decodeTransfer(event).event,
            'SMS',
            '+819012345678',
            now - 1_000,
            { retentionDays: 1 },
            { sweepShards: 8, pendingThresholdMs: t },
          );
          const store = {
            claim: async () => ({
              kind: 'claimed',
              item: { ...item, status: 'SENDING', attempt: 1, leaseUntil: now + 120_000 },
            }),
            release: async (_: unknown, release: Release, at: number) => {
              released.push({ at, release });
              return 'applied';
            },
          } as unknown as NotificationStore;
          const deps = dispatchDeps(
            {
              store,
              sender: {
                send: async () => {
                  throw failure;
                },
              },
              audience: { check: async () => undefined },
              policies: { EMAIL: 'AT_LEAST_ONCE', PUSH: 'AT_LEAST_ONCE', SMS: 'AT_LEAST_ONCE' },
              pendingThresholdMs: t,
              random: () => random,
            },
            now,
          );
          const r = await dispatchNotification({ key: { pk: item.pk, sk: item.sk }, retryAt: undefined }, deps, {
            finishBy: now + 50_000,
            maxWaitMs: 5_000,
          });
          expect(r).toMatchObject(
            failure.failure === 'unknown' ? { kind: 'unknown', resend: true } : { kind: 'deferred' },
          );
          expect(released).toHaveLength(1);
          const [{ at, release }] = released as [{ at: number; release: Release }];
          holds({ at, retryAt: release.retryAt, sweepAt: release.sweepAt }, t, c, s);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("the sweeper's own: a re-drive, a wake-up, a release of a held item, an expired lease sent again", async () => {
    await fc.assert(
      fc.asyncProperty(time, threshold, ahead, ahead, async (now, t, c, s) => {
        const written: number[] = [];
        const entry = (status: SweepEntry['status'], over: Partial<SweepEntry> = {}): SweepEntry => ({
          pk: `EVENT#${status}`,
          sk: 'NOTIFICATION#SMS',
          notificationId: `${status}#SMS`,
          channel: 'SMS',
          status,
          attempt: 1,
          createdAt: new Date(now - 60_000).toISOString(),
          sweepAt: now - 1,
          ...over,
        });
        const entries = [
          entry('PENDING'),
          entry('PENDING', { retryAt: now - 1 }),
          entry('HELD'),
          entry('SENDING', { leaseUntil: now - 1 }),
        ];
        const record = async (_e: SweepEntry, ...rest: unknown[]) => {
          written.push(Number(rest.at(-1)));
          return 'applied';
        };
        const store = {
          findDue: async (p: { state: string; channel: string; shard: number; noticeClass: string }) => ({
            entries:
              p.state === 'PENDING' && p.channel === 'SMS' && p.shard === 0 && p.noticeClass === 'normal'
                ? entries
                : [],
          }),
          findExpiredLeases: async () => ({ entries: [] }),
          redrive: record,
          releaseHeld: record,
          resolveExpired: record,
        } as unknown as SweepStore;
        await sweep(
          sweepDeps(store, now, {
            pendingThresholdMs: t,
            policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
          }),
        );
        expect(written).toHaveLength(4);
        for (const sweepAt of written) holds({ at: now, sweepAt }, t, c, s);
      }),
      { numRuns: 30 },
    );
  });

  it("an operator's resend: due a minute after it, within any pending threshold of a minute or more", async () => {
    const mock = mockClient(DynamoDBDocumentClient);
    mock.on(UpdateCommand).resolves({ Attributes: {} });
    const events = new DynamoEventStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), 'notifier');
    const item = {
      pk: 'EVENT#inv',
      sk: 'NOTIFICATION#EMAIL',
      eventId: 'inv',
      channel: 'EMAIL',
      notificationId: 'inv#EMAIL',
      status: 'FAILED',
      attempt: 2,
    } as unknown as ResendTarget;
    try {
      await fc.assert(
        fc.asyncProperty(time, threshold, ahead, ahead, async (now, t, c, s) => {
          mock.resetHistory();
          await events.resend(item, { by: ALICE_ID, reason: 'customer called', accepted: undefined }, now);
          const values = mock.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues ?? {};
          holds({ at: now, sweepAt: Number(values[':sweepAt']) }, t, c, s);
        }),
        { numRuns: 30 },
      );
    } finally {
      mock.restore();
    }
  });

  it("an operator's release of a failover's held notice (the successor store's move to PENDING): due at once", async () => {
    const mock = mockClient(DynamoDBDocumentClient);
    mock.on(UpdateCommand).resolves({});
    try {
      await fc.assert(
        fc.asyncProperty(time, threshold, ahead, ahead, async (now, t, c, s) => {
          mock.resetHistory();
          const store = new DynamoSuccessorStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), 'notifier', 8, t);
          const held = { ...notification(now - 60_000, t), status: 'FAILOVER_HELD', epoch: 2 } as OwnedNotification;
          expect(await store.move(held, 'PENDING', 'held', { late: true }, now)).toBe(true);
          const values = mock.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues ?? {};
          const sweepAt = Object.entries(values).find(([k]) => k.includes('sweepAt'))?.[1];
          holds({ at: now, sweepAt: Number(sweepAt) }, t, c, s);
        }),
        { numRuns: 30 },
      );
    } finally {
      mock.restore();
    }
  });

  it("a producer's repair of a refused channel (REFUSED → PENDING)", async () => {
    const mock = mockClient(DynamoDBDocumentClient);
    mock.on(TransactWriteCommand).resolves({});
    const inbox = new DynamoInboxStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), 'notifier');
    try {
      await fc.assert(
        fc.asyncProperty(time, threshold, ahead, ahead, async (now, t, c, s) => {
          mock.resetHistory();
          const repaired = await inbox.repairChannels({
            eventId: 'inv',
            type: 'TransferCompleted',
            expected: { payloadHash: 'h0', channels: [], refusedChannels: ['EMAIL'], repairHash: 'r0' },
            payloadHash: 'h1',
            channels: ['EMAIL'],
            refusedChannels: [],
            repairs: [{ channel: 'EMAIL', recipient: 'x@example.com' }],
            now,
            placement: { sweepShards: 8, pendingThresholdMs: t },
          });
          expect(repaired).toBe('repaired');
          const items = mock.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
          expect(items).toHaveLength(2);
          holds({ at: now, sweepAt: Number(items[1]?.Update?.ExpressionAttributeValues?.[':sweepAt']) }, t, c, s);
        }),
        { numRuns: 30 },
      );
    } finally {
      mock.restore();
    }
  });
});
