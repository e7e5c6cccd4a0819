/**
 * What the local run reads back from its table at the end and while converging: one paged scan folded into
 * bounded lists, and the count of what is still in flight from the sparse sweep index — on DynamoDB Local, through
 * the real notification store's transitions.
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { Channel } from '../../functions/domain/channels.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { buildNotification, buildQuarantine, type NotificationItem } from '../../functions/domain/notification.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { keepsDataOnDisk, localClient, ON_DISK_FROM_BYTES, scanPages } from '../../tools/local/dynamodb-local.ts';
import { type OutboxNotification, startOutbox } from '../../tools/local/outbox.ts';
import { summarizeTable } from '../../tools/local/outcomes.ts';
import { countInFlight } from '../../tools/local/pipeline.ts';
import { b64, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

const NOW = Date.parse('2026-11-30T09:15:01Z');
let table: LocalTable;
let store: DynamoNotificationStore;

function notification(i: number, channel: Channel = 'EMAIL'): NotificationItem {
  const decoded = decodeRecordValue(b64(transferEvent({ eventId: `sum-${String(i).padStart(3, '0')}` })), 65_536);
  if (!isTransfer(decoded)) throw new Error('fixture invalid');
  return buildNotification(decoded.event, channel, 'hanako@example.com', NOW, { retentionDays: 35 });
}

async function put(item: object) {
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
}

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  store = new DynamoNotificationStore(DynamoDBDocumentClient.from(localClient(table.endpoint)), table.tableName);
  // 6 SENT (with provider message ids), 1 FAILED, 1 SUPPRESSED, 1 still PENDING, 1 SENDING.
  for (let i = 0; i < 10; i++) await put(notification(i));
  for (let i = 0; i < 8; i++) {
    const key = { pk: `EVENT#sum-${String(i).padStart(3, '0')}`, sk: 'NOTIFICATION#EMAIL' };
    if (i === 7) {
      expect(await store.markSuppressed(key, 'BOUNCED', NOW)).toBe('applied');
      continue;
    }
    const claimed = await store.claim(key, `c-${i}`, NOW, 60_000);
    if (claimed.kind !== 'claimed') throw new Error(`claim ${i}: ${claimed.kind}`);
    if (i === 6) await store.markFailed(claimed.item, 'MessageRejected', NOW);
    else await store.markSent(claimed.item, `msg-${i}`, NOW);
  }
  const sending = await store.claim({ pk: 'EVENT#sum-009', sk: 'NOTIFICATION#EMAIL' }, 'c-9', NOW, 60_000);
  expect(sending.kind).toBe('claimed');
  for (const offset of [30, 10, 20]) {
    await put(
      buildQuarantine(
        { reason: 'INVALID_JSON', detail: 'value is not valid JSON' },
        'e30=',
        { topic: 't', partition: 0, offset },
        NOW,
        { retentionDays: 35 },
      ),
    );
  }
});

describe('countInFlight (converge asks it after every idle pump)', () => {
  it('counts exactly the PENDING and SENDING notifications, from the sweep index', async () => {
    expect(await countInFlight(table.endpoint, table.tableName)).toBe(2);
  });
});

describe('summarizeTable', () => {
  it('counts everything and lists at most the limit: what did not end SENT first, shown by id', async () => {
    const s = await summarizeTable(table.endpoint, table.tableName, { listLimit: 4, messageIds: new Set(['msg-2']) });
    expect(s.byStatus).toEqual({ SENT: 6, FAILED: 1, SUPPRESSED: 1, PENDING: 1, SENDING: 1 });
    expect(s.outcomes.map((o) => `${o.notificationId} ${o.status}`)).toEqual([
      'sum-006#EMAIL FAILED',
      'sum-007#EMAIL SUPPRESSED',
      'sum-008#EMAIL PENDING',
      'sum-009#EMAIL SENDING',
    ]);
    expect(s.outcomes.find((o) => o.status === 'SUPPRESSED')?.reason).toBe('BOUNCED');
    expect(s.outcomesNotListed).toBe(6);
    expect(s.quarantined).toBe(3);
    expect(s.quarantine.map((q) => q.offset)).toEqual([10, 20, 30]);
    // Only the message ids asked for are looked up (an SMS send carries no id of ours).
    expect([...s.notificationIdOfMessage]).toEqual([['msg-2', 'sum-002#EMAIL']]);
  });

  it('with room for everything, lists everything', async () => {
    const s = await summarizeTable(table.endpoint, table.tableName, { listLimit: 1000 });
    expect(s.outcomes).toHaveLength(10);
    expect(s.outcomesNotListed).toBe(0);
    expect(s.outcomes.map((o) => o.notificationId)).toEqual([...s.outcomes.map((o) => o.notificationId)].sort());
  });
});

describe('the outbox page of a run past the sends it keeps', () => {
  it('shows the provider message id of a sent notification whose content was not kept; outbox.json has them all', async () => {
    const outbox = await startOutbox({
      notificationPages: () =>
        scanPages(table.endpoint, table.tableName, {
          expression: 'kind = :k',
          values: { ':k': 'NOTIFICATION' },
        }) as AsyncIterable<OutboxNotification[]>,
      sends: () => [],
    });
    try {
      const page = await (await fetch(outbox.url)).text();
      expect(page).toContain('10 notifications: ');
      expect(page).toMatch(/accepted by the provider as message <code>msg-0<\/code>; its content is not kept/);
      expect(page).toContain('nothing was accepted by the provider for this notification');
      const all = (await (await fetch(`${outbox.url}/outbox.json`)).json()) as unknown[];
      expect(all).toHaveLength(10);
    } finally {
      await outbox.stop();
    }
  });
});

describe('where DynamoDB Local keeps a run', () => {
  it('auto: in memory for the sample and small files, on disk for large files and standard input', () => {
    expect(keepsDataOnDisk('auto', { kind: 'sample' })).toBe(false);
    expect(keepsDataOnDisk('auto', { kind: 'file', totalBytes: ON_DISK_FROM_BYTES - 1 })).toBe(false);
    expect(keepsDataOnDisk('auto', { kind: 'file', totalBytes: ON_DISK_FROM_BYTES })).toBe(true);
    expect(keepsDataOnDisk('auto', { kind: 'file', totalBytes: undefined })).toBe(true);
    expect(keepsDataOnDisk('memory', { kind: 'file', totalBytes: undefined })).toBe(false);
    expect(keepsDataOnDisk('disk', { kind: 'sample' })).toBe(true);
  });
});
