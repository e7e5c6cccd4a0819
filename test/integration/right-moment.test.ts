/**
 * The right moment, on DynamoDB Local with a fake clock (docs/dispatch.md "The right moment"): dispatch and the sweeper
 * are driven at chosen instants across midnight and DST changes. A notice outside its type's send window is HELD until
 * the window opens in the customer's time zone, released by the sweeper at that instant and then sent — or EXPIRED
 * when its validity ran out meanwhile; a critical notice is never held nor limited; a newer notice of a series
 * supersedes an older one by occurredAt, never by arrival; a producer's loop gives a customer a handful per channel;
 * a one-time code is sent and then forgotten by the table.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { DispatchDeps } from '../../functions/dispatch/dispatch-notification.ts';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { SendError } from '../../functions/dispatch/send-error.ts';
import type { Sender } from '../../functions/dispatch/senders.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { notificationKey } from '../../functions/domain/keys.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { REDACTED } from '../../functions/domain/secrets.ts';
import type { Message } from '../../functions/domain/templates.ts';
import { DynamoEventStore } from '../../functions/stores/event-store.ts';
import { DynamoMomentStore } from '../../functions/stores/moment-store.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import { type Deliverer, delivererOn } from '../support/deliver.ts';
import { dispatchDeps } from '../support/dispatch-deps.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { sweepWith } from '../support/sweep-deps.ts';

let table: LocalTable;
let store: DynamoSweepStore;
let deliver: Deliverer['deliver'];
beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  store = new DynamoSweepStore(table.doc, table.tableName);
  deliver = delivererOn(table).deliver;
});

const at = (iso: string) => Date.parse(iso);
const sends: { n: NotificationItem; m: Message }[] = [];
const sender: Sender = {
  send: async (n, m) => {
    sends.push({ n, m });
    return `msg-${n.notificationId}-${n.attempt}`;
  },
};
const sentFor = (eventId: string) => sends.filter((s) => s.n.eventId === eventId);

/** Dispatch of one notification at the instant `now`, with the moment's reads on the table. */
function dispatchAt(eventId: string, channel: Channel, now: number, over: Partial<DispatchDeps> = {}) {
  const deps = dispatchDeps(
    { store, sender, moment: new DynamoMomentStore(table.doc, table.tableName), maxAgeMs: 30 * 86_400_000, ...over },
    now,
  );
  return dispatchNotification({ key: notificationKey(eventId, channel), retryAt: undefined }, deps, {
    finishBy: now + 50_000,
    maxWaitMs: 5_000,
  });
}
const sweepAt = (now: number) =>
  sweepWith(store, now, { sendRates: { EMAIL: 100, PUSH: 100, SMS: 100 }, intervalMs: 60_000 });

const item = async (eventId: string, channel: Channel = 'EMAIL') =>
  (await table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`) as unknown as NotificationItem;

/** A notification put as ingest writes it, created at `createdAt` (the fake clock's, not the machine's). */
async function put(value: object, channel: Channel, createdAt: number) {
  const d = decodeTransfer(value);
  const address = { EMAIL: 'alex@example.com', PUSH: d.event.recipient.pushEndpointArn ?? '', SMS: '+14155550123' };
  const n = buildNotification(d.event, channel, address[channel], createdAt, { retentionDays: 400 });
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: n }));
  return n;
}

const statement = (eventId: string, occurredAt: string, timeZone: string) =>
  transferEvent({
    eventId,
    type: 'StatementReady',
    occurredAt,
    recipient: { locale: 'en', timeZone },
    data: { accountLast4: '0042', periodEnd: '2026-02-28' },
  });

describe('quiet hours: held outside the window in the customer’s zone, released when it opens', () => {
  it.each([
    // New York springs forward at 02:00 on 8 March 2026: held at 01:30 EST, released at 08:00 EDT (12:00Z, not 13:00Z).
    [
      'across the spring DST change',
      'America/New_York',
      '2026-03-08T06:00:00Z',
      '2026-03-08T06:30:00Z',
      '2026-03-08T12:00:00.000Z',
    ],
    // …and falls back at 02:00 on 1 November 2026: held at 23:30 EDT, released the next morning at 08:00 EST (13:00Z).
    [
      'across midnight and the autumn DST change',
      'America/New_York',
      '2026-11-01T03:00:00Z',
      '2026-11-01T03:30:00Z',
      '2026-11-01T13:00:00.000Z',
    ],
    // Tokyo keeps no DST: held at 23:30 JST, released at 08:00 JST the next day.
    [
      'across midnight in Tokyo',
      'Asia/Tokyo',
      '2026-12-01T14:00:00Z',
      '2026-12-01T14:30:00Z',
      '2026-12-01T23:00:00.000Z',
    ],
  ])('%s: HELD until 08:00 local, released at that instant, then sent', async (_, zone, occurred, claimAt, opens) => {
    const id = `moment-held-${zone.replace('/', '-')}-${occurred.slice(5, 10)}`;
    await put(statement(id, occurred, zone), 'EMAIL', at(occurred));
    const held = await dispatchAt(id, 'EMAIL', at(claimAt));
    expect(held).toMatchObject({ kind: 'held', until: at(opens), zone });
    expect(await item(id)).toMatchObject({ status: 'HELD', heldUntil: opens, heldZone: zone, sweepAt: at(opens) });
    expect((await item(id)).sweepKey).toMatch(/^PENDING#EMAIL#bulk#\d$/);
    expect(sentFor(id)).toEqual([]);

    // A minute before the opening the sweeper leaves it; the first run after it releases it.
    expect((await sweepAt(at(opens) - 30_000)).released).toEqual([]);
    const run = await sweepAt(at(opens) + 30_000);
    expect(run.released.map((e) => e.notificationId)).toEqual([`${id}#EMAIL`]);
    const released = await item(id);
    expect(released).toMatchObject({ status: 'PENDING', releasedAt: new Date(at(opens) + 30_000).toISOString() });
    expect(released.firstCreatedAt).toBe(new Date(at(occurred)).toISOString());

    expect(await dispatchAt(id, 'EMAIL', at(opens) + 31_000)).toMatchObject({ kind: 'sent' });
    expect(sentFor(id)).toHaveLength(1);
  });

  it('a held notice whose validity ran out while it waited is released at the opening, then EXPIRED, never sent', async () => {
    // PaymentDue is worth sending for two days; this one occurred 44 h before it is claimed at 01:30 EST.
    const id = 'moment-held-then-expired';
    const event = transferEvent({
      eventId: id,
      type: 'PaymentDue',
      occurredAt: '2026-03-06T10:00:00Z',
      recipient: { locale: 'en', timeZone: 'America/New_York' },
      data: { billId: 'b-1', amount: '120.00', currency: 'USD', dueDate: '2026-03-10' },
    });
    await put(event, 'EMAIL', at('2026-03-06T10:00:00Z'));
    expect(await dispatchAt(id, 'EMAIL', at('2026-03-08T06:30:00Z'))).toMatchObject({ kind: 'held' });
    await sweepAt(at('2026-03-08T12:00:30Z'));
    const ended = await dispatchAt(id, 'EMAIL', at('2026-03-08T12:00:31Z'));
    expect(ended).toMatchObject({ kind: 'unsent', end: { status: 'EXPIRED', validUntil: '2026-03-08T10:00:00.000Z' } });
    expect(await item(id)).toMatchObject({ status: 'EXPIRED', validUntil: '2026-03-08T10:00:00.000Z' });
    expect((await item(id)).sweepKey).toBeUndefined();
    expect(sentFor(id)).toEqual([]);
  });

  it('a critical notice at 3 a.m. local is sent at once: a critical type has no window', async () => {
    const id = 'moment-critical-night';
    const occurred = '2026-03-08T07:59:00Z'; // 02:59 EST … the clock says 03:59 EDT a minute later
    const event = transferEvent({
      eventId: id,
      type: 'OneTimePasscode',
      occurredAt: occurred,
      recipient: { locale: 'en', timeZone: 'America/New_York' },
      data: { code: '204816', purpose: 'SIGN_IN' },
    });
    await put(event, 'SMS', at(occurred));
    expect(await dispatchAt(id, 'SMS', at(occurred) + 60_000)).toMatchObject({ kind: 'sent' });
  });
});

const otp = (eventId: string, occurredAt: string, code: string) =>
  transferEvent({ eventId, type: 'OneTimePasscode', occurredAt, data: { code, purpose: 'PAYMENT' } });

describe('validity: checked immediately before every provider call', () => {
  it('a code that occurred ten minutes ago ends EXPIRED, never sent; one a minute old is sent with 4 minutes of TTL', async () => {
    const now = at('2026-12-01T10:00:00Z');
    await put(otp('moment-otp-late', '2026-12-01T09:50:00Z', '111222'), 'PUSH', now - 1_000);
    await put(otp('moment-otp-fresh', '2026-12-01T09:59:00Z', '333444'), 'PUSH', now - 1_000);
    expect(await dispatchAt('moment-otp-late', 'PUSH', now)).toMatchObject({
      kind: 'unsent',
      end: { status: 'EXPIRED', validUntil: '2026-12-01T09:55:00.000Z' },
    });
    expect(sentFor('moment-otp-late')).toEqual([]);
    expect(await dispatchAt('moment-otp-fresh', 'PUSH', now)).toMatchObject({ kind: 'sent' });
    expect(sentFor('moment-otp-fresh')[0]?.m).toMatchObject({ channel: 'PUSH', ttlSeconds: 240 });
  });

  it('a code whose validity ends during the pacing wait is not sent: the check is repeated last', async () => {
    const now = at('2026-12-01T11:04:59Z');
    await put(otp('moment-otp-wait', '2026-12-01T11:00:00Z', '555666'), 'SMS', now - 1_000);
    let clock = now;
    const pacer = {
      acquire: async () => {
        clock += 2_000; // the token took two seconds: the code's five minutes ran out meanwhile
        return { window: 0, rank: 0 };
      },
    };
    const r = await dispatchAt('moment-otp-wait', 'SMS', now, { pacer, now: () => clock });
    expect(r).toMatchObject({ kind: 'unsent', end: { status: 'EXPIRED' } });
    expect(sentFor('moment-otp-wait')).toEqual([]);
  });
});

describe('a one-time code is sent, never kept', () => {
  it('the table holds the code apart until the send, then forgets it; its MAC stays', async () => {
    const now = Date.now();
    const id = 'moment-otp-forgotten';
    await deliver([otp(id, new Date(now - 5_000).toISOString(), '918273')]);
    const pending = await item(id, 'SMS');
    expect(pending.data).toEqual({ purpose: 'PAYMENT' });
    expect(pending.secrets).toEqual({ code: '918273' });
    expect(pending.secretDigests?.code).toMatch(/^HMAC_SHA_256:/);
    expect(JSON.stringify((await table.eventItems(id)).find((i) => i.sk === 'INBOX'))).not.toContain('918273');
    // What an operator reads (ops inspect, the customer view, an export, the console) never shows it, even now.
    const shown = await new DynamoEventStore(table.doc, table.tableName).read(id);
    expect(JSON.stringify(shown)).not.toContain('918273');
    expect(shown.notifications.find((n) => n.channel === 'SMS')?.secrets).toEqual({ code: REDACTED });
    expect(await dispatchAt(id, 'SMS', now)).toMatchObject({ kind: 'sent' });
    expect(sentFor(id)[0]?.m).toMatchObject({ channel: 'SMS', text: expect.stringContaining('918273') });
    const sent = await item(id, 'SMS');
    expect(sent.status).toBe('SENT');
    expect(sent.secrets).toBeUndefined();
    // The push still to send still holds it; once it ends too, nothing of the event does.
    expect(JSON.stringify(await table.eventItems(id))).toContain('918273');
    expect(await dispatchAt(id, 'PUSH', now)).toMatchObject({ kind: 'sent' });
    expect(JSON.stringify(await table.eventItems(id))).not.toContain('918273');
    expect(sent.secretDigests).toEqual(pending.secretDigests);
  });
});

const lowBalance = (eventId: string, occurredAt: string, accountLast4 = '0042', balance = '12.00', userId = 'u-lb') =>
  transferEvent({
    eventId,
    type: 'LowBalance',
    occurredAt,
    recipient: { userId, locale: 'en' },
    data: { accountLast4, balance, currency: 'USD' },
    channels: ['SMS', 'PUSH'],
  });

describe('superseded: a newer notice of the same customer and key replaces an older one, by occurredAt', () => {
  it('the older, arriving after the newer, is SUPERSEDED naming the newer; the newer is sent with its collapse id', async () => {
    const now = Date.now();
    const newer = new Date(now - 60_000).toISOString();
    const older = new Date(now - 120_000).toISOString();
    await deliver([lowBalance('moment-lb-newer', newer, '7001', '5.00')]);
    await deliver([lowBalance('moment-lb-older', older, '7001', '20.00')]);
    expect(await dispatchAt('moment-lb-older', 'SMS', now)).toMatchObject({
      kind: 'unsent',
      end: { status: 'SUPERSEDED', supersededBy: 'moment-lb-newer', supersededByOccurredAt: newer },
    });
    expect(await item('moment-lb-older', 'SMS')).toMatchObject({
      status: 'SUPERSEDED',
      supersededBy: 'moment-lb-newer',
    });
    expect(await dispatchAt('moment-lb-newer', 'PUSH', now)).toMatchObject({ kind: 'sent' });
    expect(sentFor('moment-lb-newer')[0]?.m).toMatchObject({ collapseId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    // Another account of the same customer is another series: not superseded.
    await deliver([lowBalance('moment-lb-other', older, '7002')]);
    expect(await dispatchAt('moment-lb-other', 'SMS', now)).toMatchObject({ kind: 'sent' });
  });
});

describe('a producer’s clock running ahead', () => {
  it('a notice dated hours ahead occurred at its arrival: a real notice after it is newer, not superseded for hours', async () => {
    // A producer writing local time as UTC (JST, nine hours ahead): accepted (within a day), read as of its arrival.
    await deliver([lowBalance('moment-lb-ahead', new Date(Date.now() + 9 * 3_600_000).toISOString(), '7301', '8.00')]);
    await new Promise((resolve) => setImmediate(resolve));
    const real = Date.now() + 1;
    await deliver([lowBalance('moment-lb-real', new Date(real).toISOString(), '7301', '2.00')]);
    expect(await dispatchAt('moment-lb-real', 'SMS', real + 1_000)).toMatchObject({ kind: 'sent' });
    expect(await dispatchAt('moment-lb-ahead', 'SMS', real + 1_000)).toMatchObject({
      kind: 'unsent',
      end: { status: 'SUPERSEDED', supersededBy: 'moment-lb-real' },
    });
  });
});

describe('the flood guard: a producer’s loop gives a customer a handful per channel', () => {
  it('thirty distinct LowBalance events in a minute: 3 sent per channel (the type’s limit), 27 THROTTLED', async () => {
    const now = Date.now();
    const ids = Array.from({ length: 30 }, (_, i) => `moment-loop-${i}`);
    // Thirty accounts, so no notice supersedes another: only the flood guard stands between the loop and the customer.
    const occurred = (i: number) => new Date(now - 60_000 + i * 1_000).toISOString();
    await deliver(ids.map((id, i) => lowBalance(id, occurred(i), `8${String(i).padStart(3, '0')}`, '9.00', 'u-loop')));
    for (const channel of ['SMS', 'PUSH'] as const) {
      const results = [];
      for (const id of ids) results.push(await dispatchAt(id, channel, now));
      expect(results.filter((r) => r.kind === 'sent')).toHaveLength(3);
      const throttled = results.filter((r) => r.kind === 'unsent');
      expect(throttled).toHaveLength(27);
      expect(throttled[0]).toMatchObject({
        end: { status: 'THROTTLED', throttledWindow: expect.stringMatching(/^3 per 3600 s, /) },
      });
    }
  });

  it('a notice the provider throttled and retried counts once: its retries never THROTTLE it themselves', async () => {
    // One window of the guard (an hour, aligned): the last whole hour, so every attempt falls inside it.
    const hour = 3_600_000;
    const start = Math.floor(Date.now() / hour) * hour - hour;
    const id = 'moment-retried-once';
    await deliver([lowBalance(id, new Date(start).toISOString(), '9100', '4.00', 'u-retried')]);
    let calls = 0;
    const busy: Sender = {
      send: async (n, m, signal) => {
        calls += 1;
        if (calls <= 3) throw new SendError('throttled', 'Throttling', 'Rate exceeded');
        return sender.send(n, m, signal);
      },
    };
    const results = [];
    for (let attempt = 0; attempt < 4; attempt++)
      results.push(
        await dispatchAt(id, 'SMS', start + 60_000 + attempt * 600_000, { sender: busy, maxSendAttempts: 10 }),
      );
    expect(results.map((r) => r.kind)).toEqual(['deferred', 'deferred', 'deferred', 'sent']);
    // …and the customer's two other slots of the window are still there for the next two notices.
    const more = ['moment-retried-next-1', 'moment-retried-next-2'];
    await deliver(more.map((m, i) => lowBalance(m, new Date(start + i).toISOString(), `920${i}`, '4.00', 'u-retried')));
    for (const m of more) expect(await dispatchAt(m, 'SMS', start + 3_000_000)).toMatchObject({ kind: 'sent' });
  });

  it('a critical type is never limited: thirty codes in a minute are thirty sends', async () => {
    const now = Date.now();
    const ids = Array.from({ length: 30 }, (_, i) => `moment-otp-loop-${i}`);
    await deliver(ids.map((id, i) => otp(id, new Date(now - 30_000 + i * 500).toISOString(), String(100000 + i))));
    const results = [];
    for (const id of ids) results.push(await dispatchAt(id, 'SMS', now));
    expect(results.every((r) => r.kind === 'sent')).toBe(true);
  });
});
