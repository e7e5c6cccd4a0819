/**
 * Critical first in the sweeper, on DynamoDB Local: every write that puts a notification (back) to PENDING gives a
 * critical or bulk one a sweep key that names its class — ingest's transaction, a corrected resend's repair, a
 * deferral, an expired lease released, an operator's resend — and the sweeper spends a channel's re-drive cap on
 * critical partitions first, so a deferred critical notice is woken ahead of a backlog due long before it. Items
 * under the key every item had before classes existed are still found, as normal.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { notificationKey, sweepKey } from '../../functions/domain/keys.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { DynamoSweepStore } from '../../functions/stores/sweep-store.ts';
import type { SweepDeps } from '../../functions/sweeper/sweep.ts';
import { type Deliverer, delivererOn } from '../support/deliver.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { operatorOn, resendNow } from '../support/operator.ts';
import { sweepWith } from '../support/sweep-deps.ts';

let table: LocalTable;
let store: DynamoSweepStore;
let deliver: Deliverer['deliver'];
beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  store = new DynamoSweepStore(table.doc, table.tableName);
  deliver = delivererOn(table).deliver;
});

// Its definition allows an hour's age: the fixture's fixed date would be too old to send. One instant for the file,
// so a corrected resend is the same event.
const RECENT = new Date().toISOString();
const passwordChanged = (eventId: string, recipient: Record<string, unknown> = {}) =>
  transferEvent({
    eventId,
    type: 'PasswordChanged',
    occurredAt: RECENT,
    data: { changeId: `pw-${eventId}`, via: 'APP' },
    recipient,
  });
const statementReady = (eventId: string) =>
  transferEvent({
    eventId,
    type: 'StatementReady',
    occurredAt: RECENT,
    data: { accountLast4: '0042', periodEnd: '2026-11-30', closingBalance: '10000', currency: 'JPY' },
  });

const notification = async (eventId: string, channel: 'EMAIL' | 'PUSH' | 'SMS' = 'EMAIL') =>
  (await table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`) as unknown as NotificationItem;

/** A notification put straight into the table, as ingest would have written it `ageMs` ago. */
async function put(value: object, channel: 'EMAIL' | 'SMS', now: number, over: Partial<NotificationItem> = {}) {
  const d = decodeTransfer(value);
  const n = { ...buildNotification(d.event, channel, 'x@example.com', now - 3_600_000, { retentionDays: 1 }), ...over };
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: n }));
  return n;
}

// 1 email a second × a 10 s period: 10 re-drives per run on EMAIL; SMS resends an expired lease.
const sweepAt = (now: number, over: Partial<SweepDeps> = {}) =>
  sweepWith(store, now, {
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
    sendRates: { EMAIL: 1, PUSH: 1_000, SMS: 1_000 },
    intervalMs: 10_000,
    ...over,
  });

describe('the sweep key names the class of a critical or bulk notification', () => {
  it("ingest's transaction: critical and bulk keys; normal keeps the key of before", async () => {
    await deliver([
      passwordChanged('sc-ingest-pw'),
      statementReady('sc-ingest-st'),
      transferEvent({ eventId: 'sc-ingest-tr' }),
    ]);
    expect((await notification('sc-ingest-pw')).sweepKey).toMatch(/^PENDING#EMAIL#critical#\d$/);
    expect((await notification('sc-ingest-pw', 'SMS')).sweepKey).toMatch(/^PENDING#SMS#critical#\d$/);
    expect((await notification('sc-ingest-st')).sweepKey).toMatch(/^PENDING#EMAIL#bulk#\d$/);
    expect((await notification('sc-ingest-tr')).sweepKey).toMatch(/^PENDING#EMAIL#\d$/);
  });

  it("a corrected resend's repair puts a refused critical channel back under its class", async () => {
    await deliver([passwordChanged('sc-repair', { email: '花子@example.jp' })]);
    expect((await notification('sc-repair')).status).toBe('REFUSED');
    await deliver([passwordChanged('sc-repair', { email: 'hanako@example.jp' })]);
    expect(await notification('sc-repair')).toMatchObject({
      status: 'PENDING',
      sweepKey: expect.stringMatching(/^PENDING#EMAIL#critical#\d$/),
    });
  });

  it('a deferral keeps the class; the claim in between leaves the class key as it was', async () => {
    const now = Date.now();
    const n = await put(passwordChanged('sc-defer'), 'EMAIL', now);
    const claim = await store.claim(notificationKey('sc-defer', 'EMAIL'), 'c-1', now, 30_000);
    if (claim.kind !== 'claimed') throw new Error(claim.kind);
    expect(claim.item.sweepKey).toBe(n.sweepKey);
    expect(claim.item.sweepKey).toMatch(/^PENDING#EMAIL#critical#\d$/);
    const retryAt = now + 120_000;
    expect(
      await store.release(claim.item, { reason: 'THROTTLED', retryAt, sweepAt: retryAt, deferral: true }, now),
    ).toBe('applied');
    expect((await notification('sc-defer')).sweepKey).toMatch(/^PENDING#EMAIL#critical#\d$/);
  });

  it('an expired lease claimed under a SENDING key (an earlier deploy) is released under its class (the type is read)', async () => {
    const now = Date.now();
    await put(passwordChanged('sc-lease'), 'SMS', now, {
      status: 'SENDING',
      attempt: 1,
      leaseUntil: now - 1_000,
      sweepKey: sweepKey('SENDING', 'SMS', 'sc-lease#SMS'),
      sweepAt: now - 1_000,
    });
    const r = await sweepAt(now);
    expect(r.resolvedRetry.map((e) => e.notificationId)).toContain('sc-lease#SMS');
    expect(await notification('sc-lease', 'SMS')).toMatchObject({
      status: 'PENDING',
      sweepKey: expect.stringMatching(/^PENDING#SMS#critical#\d$/),
    });
  });

  it("an operator's resend of a critical notification puts it under its class", async () => {
    const now = Date.now();
    await put(passwordChanged('sc-resend'), 'EMAIL', now, {
      status: 'FAILED',
      attempt: 1,
      lastError: 'REJECTED: MessageRejected',
      sweepKey: undefined,
      sweepAt: undefined,
    });
    const after = await resendNow(operatorOn(table, { now: () => now }), { notificationId: 'sc-resend#EMAIL' });
    expect(after.sweepKey).toMatch(/^PENDING#EMAIL#critical#\d$/);
  });
});

describe('the sweeper wakes critical first', () => {
  // A table of its own: the items above would be due too, and critical ones among them would take the cap.
  beforeAll(async () => {
    table = await newLocalTable(inject('dynamoEndpoint'));
    store = new DynamoSweepStore(table.doc, table.tableName);
  });

  it('a deferred critical notification is woken in the next run ahead of a backlog due long before it', async () => {
    const now = Date.now() + 86_400_000;
    // 30 deferred transfer notices, every one due minutes before the critical one: three runs' worth at 10 per run.
    const backlog: string[] = [];
    for (let i = 0; i < 30; i++) {
      const due = now - 600_000 + i;
      const n = await put(transferEvent({ eventId: `sc-backlog-${i}` }), 'EMAIL', now, {
        retryAt: due,
        sweepAt: due,
        deferrals: 1,
        attempt: 1,
      });
      backlog.push(n.notificationId);
    }
    // The critical one is deferred through the store as dispatch defers it (a provider's throttle).
    await put(passwordChanged('sc-critical'), 'EMAIL', now);
    const claim = await store.claim(notificationKey('sc-critical', 'EMAIL'), 'c-2', now - 60_000, 30_000);
    if (claim.kind !== 'claimed') throw new Error(claim.kind);
    const retryAt = now - 1_000;
    await store.release(claim.item, { reason: 'THROTTLED', retryAt, sweepAt: retryAt, deferral: true }, now - 60_000);

    const r = await sweepAt(now);
    const woken = r.woken.map((e) => e.notificationId);
    expect(woken).toContain('sc-critical#EMAIL');
    expect(woken).toHaveLength(10);
    expect(await notification('sc-critical')).toMatchObject({ status: 'PENDING', redrives: 1 });
    expect((await notification('sc-critical')).retryAt).toBeUndefined();
    // The rest of the cap went to the backlog, oldest first.
    expect(woken.filter((id) => backlog.includes(id))).toHaveLength(9);
  });

  it('a critical notification written under the key of before (an earlier deploy) is still found, as normal', async () => {
    const now = Date.now() + 2 * 86_400_000;
    const legacy = await put(passwordChanged('sc-legacy'), 'EMAIL', now, {
      retryAt: now - 5_000,
      sweepAt: now - 5_000,
      sweepKey: sweepKey('PENDING', 'EMAIL', 'sc-legacy#EMAIL'),
    });
    expect(legacy.sweepKey).toMatch(/^PENDING#EMAIL#\d$/);
    const r = await sweepAt(now, { sendRates: { EMAIL: 1_000, PUSH: 1_000, SMS: 1_000 } });
    expect(r.woken.map((e) => e.notificationId)).toContain('sc-legacy#EMAIL');
  });
});
