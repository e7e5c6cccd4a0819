/**
 * A customer with many events, on DynamoDB Local: the console's customer page shows the newest 50 and a cursor for
 * the older ones, page after page, each event exactly once (two events at one instant on a page's edge too), the
 * records we could not read among them — and one page reads a bounded number of items, whatever the customer's count.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { answerApi, type ConsoleDeps } from '../../functions/console/api.ts';
import { CUSTOMER_PAGE_EVENTS } from '../../functions/console/views.ts';
import type { CustomerAnswer } from '../../functions/contracts/console-views.ts';
import { eventPk, INBOX_SK, userKeyOf } from '../../functions/domain/keys.ts';
import { buildQuarantine } from '../../functions/domain/notification.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { operatorPorts } from '../../functions/operator/index.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { apiRoute, consoleOn, consolePerson } from '../support/console.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

const USER = 'cp-business-1';
const FAILING = 'cp-failing-1';
const EVENTS = 130;
const T0 = Date.parse('2026-12-01T00:00:00Z');
/** Four events at one instant, where the first page ends: the cursor must neither drop nor repeat them. */
const TIED = new Set([79, 80, 81, 82]);
const atOf = (i: number) => new Date(T0 + (TIED.has(i) ? 79 : i) * 60_000).toISOString();
const QUARANTINED = [
  { eventId: 'cp-unread-1', at: T0 + 100.5 * 60_000 },
  { eventId: 'cp-unread-2', at: T0 + 20.5 * 60_000 },
];

let table: LocalTable;
let deps: ConsoleDeps;
let reads = 0;
const SAM = consolePerson('sam', 's');
const customerRoute = apiRoute('customer');
const customer = async (older?: string) => {
  const answer = await answerApi(customerRoute, SAM, JSON.stringify({ userId: USER, older }), deps);
  expect(answer.status).toBe(200);
  return answer.body as CustomerAnswer;
};

/** The client the console reads through, counting each request it sends. */
function counted(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  return new Proxy(doc, {
    get(target, name, receiver) {
      if (name !== 'send') return Reflect.get(target, name, receiver);
      return (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        reads++;
        return target.send(command);
      };
    },
  });
}

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  const items = Array.from({ length: EVENTS }, (_, i) => {
    const eventId = `cp-e-${String(i).padStart(3, '0')}`;
    const common = { pk: eventPk(eventId), eventId, occurredAt: atOf(i) };
    return [
      { ...common, sk: INBOX_SK, kind: 'INBOX', type: 'TransferCompleted', userKey: userKeyOf(USER) },
      {
        ...common,
        sk: 'NOTIFICATION#EMAIL',
        kind: 'NOTIFICATION',
        notificationId: `${eventId}#EMAIL`,
        channel: 'EMAIL',
        userId: USER,
        recipient: 'ops@business.example',
        status: 'SENT',
        providerMessageId: `m-${i}`,
        deliveryStatus: 'DELIVERED',
        template: 'TransferCompleted',
        data: { transferId: `t-${i}` },
      },
    ];
  }).flat();
  // A second customer: 50 events, each with an email, a text and a push that FAILED (each could be sent again).
  const failing = Array.from({ length: CUSTOMER_PAGE_EVENTS }, (_, i) => {
    const eventId = `cp-f-${String(i).padStart(3, '0')}`;
    const common = { pk: eventPk(eventId), eventId, occurredAt: atOf(i) };
    const channels = [
      ['EMAIL', 'ops@failing.example'],
      ['SMS', '+14155550182'],
      ['PUSH', 'arn:aws:sns:eu-west-1:123456789012:endpoint/APNS/app/0a1b2c'],
    ];
    return [
      { ...common, sk: INBOX_SK, kind: 'INBOX', type: 'TransferCompleted', userKey: userKeyOf(FAILING) },
      ...channels.map(([channel, recipient]) => ({
        ...common,
        sk: `NOTIFICATION#${channel}`,
        kind: 'NOTIFICATION',
        notificationId: `${eventId}#${channel}`,
        channel,
        userId: FAILING,
        recipient,
        status: 'FAILED',
        attempt: 3,
        lastError: 'RETRIES_EXHAUSTED',
        template: 'TransferCompleted',
        data: { transferId: `t-${i}` },
      })),
    ];
  }).flat();
  const all = [...items, ...failing];
  for (let i = 0; i < all.length; i += 25) {
    const batch = all.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    await table.doc.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: batch } }));
  }
  const inbox = new DynamoInboxStore(table.doc, table.tableName);
  for (const [n, q] of QUARANTINED.entries()) {
    const value = Buffer.from(JSON.stringify({ eventId: q.eventId, recipient: { userId: USER } })).toString('base64');
    const source = { topic: 'banking.transfers', partition: 0, offset: 100 + n };
    const item = buildQuarantine(
      { reason: 'INVALID_JSON', detail: 'no JSON', eventId: q.eventId },
      value,
      source,
      q.at,
      {
        retentionDays: 35,
      },
    );
    item.userId = USER;
    await inbox.quarantine(item);
  }
  const ports = operatorPorts({
    doc: counted(table.doc),
    tableName: table.tableName,
    evidence: new FileEvidenceStore(mkdtempSync(join(tmpdir(), 'console-page-'))),
    invokeIngest: () => Promise.reject(new Error('not here')),
  });
  deps = consoleOn(ports).deps;
});

describe('a customer with many events', () => {
  it('is shown the newest 50 first, then older pages through the cursor: every event once, newest first, ties on an edge too', async () => {
    const pages: CustomerAnswer[] = [];
    let older: string | undefined;
    do {
      const page = await customer(older);
      pages.push(page);
      older = page.older ?? undefined;
    } while (older !== undefined && pages.length < 10);
    const events = pages.map((p) => [...p.notices.map((n) => n.eventId), ...p.quarantined.map((q) => q.eventId)]);
    expect(events.map((e) => e.length)).toEqual([CUSTOMER_PAGE_EVENTS, CUSTOMER_PAGE_EVENTS, 32]);
    expect(pages.at(-1)?.older).toBeNull();
    const all = events.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(EVENTS + QUARANTINED.length);
    // Newest first: the first page starts at the newest event and holds the newer of the unreadable records.
    expect(pages[0]?.notices[0]?.eventId).toBe('cp-e-129');
    expect(pages[0]?.quarantined.map((q) => q.eventId)).toEqual(['cp-unread-1']);
    expect(pages[2]?.quarantined.map((q) => q.eventId)).toEqual(['cp-unread-2']);
    // The four tied events straddle the first page's end: two here, two on the next.
    const tied = [...TIED].map((i) => `cp-e-${String(i).padStart(3, '0')}`);
    expect(events[0]?.filter((e) => tied.includes(e))).toHaveLength(2);
    expect(events[1]?.filter((e) => tied.includes(e))).toHaveLength(2);
  });

  it('reads a bounded number of items for a page, not one per event the customer has', async () => {
    reads = 0;
    await customer();
    // Two index Queries, one read per event shown, the preferences, the audit's index: never the customer's 132.
    expect(reads).toBeGreaterThan(CUSTOMER_PAGE_EVENTS);
    expect(reads).toBeLessThanOrEqual(CUSTOMER_PAGE_EVENTS + 10);
  });

  it('reads a bounded number of items for a page of 50 events with three FAILED notices each: several requests per event, not one', async () => {
    reads = 0;
    const answer = await answerApi(customerRoute, SAM, JSON.stringify({ userId: FAILING }), deps);
    expect(answer.status).toBe(200);
    expect((answer.body as CustomerAnswer).notices).toHaveLength(CUSTOMER_PAGE_EVENTS * 3);
    // The figure docs/console.md states (DynamoDB requests; the audit trail's reads of the evidence store come on top).
    console.info(`DynamoDB requests for one page of 50 events x 3 FAILED notices: ${reads}`);
    expect(reads).toBeGreaterThan(CUSTOMER_PAGE_EVENTS * 2);
    expect(reads).toBeLessThanOrEqual(CUSTOMER_PAGE_EVENTS * 5);
  });

  it('refuses a cursor that is not one of its own', async () => {
    const answer = await answerApi(customerRoute, SAM, JSON.stringify({ userId: USER, older: 'bm90IG91cnM' }), deps);
    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'INVALID' } } });
  });
});
