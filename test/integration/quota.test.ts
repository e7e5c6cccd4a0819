/**
 * The send pacing's shared state on DynamoDB Local: the token-bucket windows under several concurrent "environments",
 * the breaker item, and the sweeper's exactness — paging, and a write whose reply was lost still counted as done.
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SharedTokenBucket } from '../../functions/dispatch/pacer.ts';
import { DynamoBreakerStore, DynamoTokenWindows } from '../../functions/dispatch/send-quota-store.ts';
import { sweepKey } from '../../functions/domain/keys.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { sweepWith } from '../support/sweep-deps.ts';

let table: LocalTable;
const clients: { destroy(): void }[] = [];
const documentClient = () => {
  const raw = localClient(table.endpoint);
  clients.push(raw);
  return DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
};

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});
afterAll(() => {
  for (const c of clients) c.destroy();
});

describe('the shared token bucket on DynamoDB Local', () => {
  it('five environments with ten senders each never take more than the rate in any one-second window', async () => {
    const rate = 20;
    const grants: number[] = [];
    const end = Date.now() + 2_500;
    const environments = Array.from(
      { length: 5 },
      () =>
        new SharedTokenBucket(
          new DynamoTokenWindows(documentClient(), table.tableName),
          { EMAIL: rate, PUSH: rate, SMS: rate },
          { now: Date.now, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
        ),
    );
    await Promise.all(
      environments.flatMap((pacer) =>
        Array.from({ length: 10 }, async () => {
          while (Date.now() < end) {
            // By the window whose count took it: a clock read after the await could fall past the window's end on a
            // loaded machine and count the token in the next, full one. (A token handed out after its window ended
            // is test/unit/pacer-give-back.test.ts's, on a manual clock.)
            const token = await pacer.acquire('SMS', Date.now() + 3_000);
            if (token) grants.push(token.window);
          }
        }),
      ),
    );
    const perWindow = new Map<number, number>();
    for (const g of grants) perWindow.set(Math.floor(g / 1000), (perWindow.get(Math.floor(g / 1000)) ?? 0) + 1);
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(rate);
    // The windows' own counts say the same: no window item holds more than the rate.
    const items = (await table.allItems()).filter((i) => i.kind === 'RATE');
    expect(items.length).toBeGreaterThan(0);
    for (const i of items) expect(i.used).toBeLessThanOrEqual(rate);
    // Every grant was counted in a window. (Not every count was granted: tokens taken by a write that outlived its
    // window are dropped, never carried into the next one — on a slow machine that happens, and it errs on the safe side.)
    expect(grants.length).toBeGreaterThan(0);
    expect(grants.length).toBeLessThanOrEqual(items.reduce((n, i) => n + Number(i.used), 0));
  });

  /** A clock that stands still but for sleeps (which advance it): the windows are real items, the timing exact. */
  const steppedClock = (t: number) => {
    const clock = {
      t,
      now: () => clock.t,
      sleep: async (ms: number) => {
        clock.t += ms;
      },
      random: () => 0,
    };
    return clock;
  };
  const bucket = (clock: ReturnType<typeof steppedClock>) =>
    new SharedTokenBucket(
      new DynamoTokenWindows(documentClient(), table.tableName),
      { EMAIL: 14, PUSH: 14, SMS: 14 },
      clock,
    );

  it('critical first, on the window items: normal stops at its ceiling, critical takes the reserve, the release opens it to all', async () => {
    const W = 1_900_000_000_000;
    const clock = steppedClock(W + 100);
    const [a, b, c] = [bucket(clock), bucket(clock), bucket(clock)];
    // Before the release a backlog of normal sends takes all but the reserve (2 of 14) …
    const normal = await Promise.all(Array.from({ length: 14 }, () => a.acquire('PUSH', W + 400)));
    expect(normal.filter(Boolean)).toHaveLength(12);
    expect(await b.acquire('PUSH', W + 400)).toBe(false);
    // … which two critical sends in another environment still get, and nothing more: the window's 14 are taken.
    // Tokens taken under the critical ceiling are critical's (rank 0): given back, only a critical notice may spend them.
    expect(await b.acquire('PUSH', W + 400, 'critical')).toEqual({ window: W, rank: 0 });
    expect(await c.acquire('PUSH', W + 400, 'critical')).toEqual({ window: W, rank: 0 });
    expect(await c.acquire('PUSH', W + 400, 'critical')).toBe(false);
    const item = (await table.allItems()).find((i) => i.pk === 'RATE#PUSH' && i.sk === String(W));
    expect(item?.used).toBe(14);

    // Next window: no critical send comes; after the release the normal backlog takes the reserve too.
    clock.t = W + 1_100;
    expect(
      (await Promise.all(Array.from({ length: 14 }, () => a.acquire('PUSH', W + 1_400)))).filter(Boolean),
    ).toHaveLength(12);
    clock.t = W + 1_600;
    const released = await Promise.all(Array.from({ length: 3 }, () => b.acquire('PUSH', W + 1_900)));
    expect(released).toEqual([{ window: W + 1_000, rank: 1 }, { window: W + 1_000, rank: 1 }, false]);
  });

  it('critical first, in an environment: a critical waiter is served before the normal waiters in line ahead of it', async () => {
    const W = 1_900_000_010_000;
    const clock = steppedClock(W + 100);
    const pacer = bucket(clock);
    const order: string[] = [];
    const waiting = Array.from({ length: 8 }, (_, i) =>
      pacer.acquire('SMS', W + 5_000).then(() => order.push(`normal-${i}`)),
    );
    const alert = pacer.acquire('SMS', W + 5_000, 'critical').then(() => order.push('critical'));
    await Promise.all([...waiting, alert]);
    // Only the waiter already being served (its write in flight) may finish first.
    expect(order.indexOf('critical')).toBeLessThanOrEqual(1);
  });

  it('takes exactly what is left of a nearly full window, and says what the window holds after each write', async () => {
    const windows = new DynamoTokenWindows(documentClient(), table.tableName);
    expect(await windows.take('PUSH', 1_000, 7, 10)).toEqual({ got: 7, used: 7 });
    expect(await windows.take('PUSH', 1_000, 7, 10)).toEqual({ got: 3, used: 10 });
    expect(await windows.take('PUSH', 1_000, 1, 10)).toEqual({ got: 0, used: 10 });
  });

  it('all or nothing: a window with fewer left than asked grants none, in one write, and says its count', async () => {
    const windows = new DynamoTokenWindows(documentClient(), table.tableName);
    expect(await windows.take('SMS', 2_000, 7, 10, 0, true)).toEqual({ got: 7, used: 7 });
    expect(await windows.take('SMS', 2_000, 7, 10, 0, true)).toEqual({ got: 0, used: 7 });
    // What is left is still there for a write that asks for it.
    expect(await windows.take('SMS', 2_000, 3, 10, 0, true)).toEqual({ got: 3, used: 10 });
  });
});

describe('the breaker item', () => {
  it('opens, is read back, and is never shortened by a later, shorter hold', async () => {
    const store = new DynamoBreakerStore(documentClient(), table.tableName);
    expect(await store.read('SMS')).toBeUndefined();
    await store.open('SMS', { openUntil: 5_000_000, code: 'AuthorizationError' }, 1_000);
    await store.open('SMS', { openUntil: 4_000_000, code: 'KMSDisabled' }, 2_000);
    expect(await store.read('SMS')).toEqual({ openUntil: 5_000_000, code: 'AuthorizationError' });
  });
});

describe('the sweeper on DynamoDB Local', () => {
  const event = (id: string) => {
    const d = decodeTransfer(transferEvent({ eventId: id }));
    return d.event;
  };

  it('pages through a partition and resolves every expired lease exactly once, even when a reply is lost', async () => {
    const now = Date.now();
    const doc = documentClient();
    const ids: string[] = [];
    for (let i = 0; i < 45; i++) {
      const n = buildNotification(event(`sw-${i}`), 'EMAIL', 'x@example.com', now - 60_000, { retentionDays: 1 });
      ids.push(n.notificationId);
      await doc.send(
        new PutCommand({
          TableName: table.tableName,
          Item: {
            ...n,
            status: 'SENDING',
            attempt: 1,
            leaseUntil: now - 1_000,
            sweepKey: sweepKey('SENDING', 'EMAIL', n.notificationId),
            sweepAt: now - 1_000,
          },
        }),
      );
    }
    // Every third write commits and its reply is lost: the SDK retries it, the retry fails its condition.
    let writes = 0;
    const lossy = documentClient();
    lossy.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        if ((args.input as { UpdateExpression?: string }).UpdateExpression !== undefined && writes++ % 3 === 0) {
          throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET' });
        }
        return out;
      },
      { step: 'deserialize', name: 'lostReply', priority: 'low' },
    );
    const r = await sweepWith(new DynamoSweepStore(lossy, table.tableName), now, {
      sendRates: { EMAIL: 14, PUSH: 100, SMS: 20 },
      pageSize: 4,
    });
    expect(writes).toBeGreaterThanOrEqual(45);
    expect(r.resolvedUnknown.map((e) => e.notificationId).sort()).toEqual(ids.sort());
    expect(r.lostRaces).toBe(0);
    expect(r.unfinished).toBe(0);
    const items = (await table.allItems()).filter((i) => String(i.pk).startsWith('EVENT#sw-'));
    expect(items.every((i) => i.status === 'UNKNOWN' && i.lastError === 'LEASE_EXPIRED')).toBe(true);
  });
});
