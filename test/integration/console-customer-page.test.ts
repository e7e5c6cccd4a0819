/**
 * A customer with many events, on DynamoDB Local: the console's customer page shows the newest 50 and a cursor for
 * the older ones, page after page, each event exactly once (two events at one instant on a page's edge too), the
 * records we could not read among them — and one page reads a bounded number of items, whatever the customer's count.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { answerApi, type ConsoleDeps } from '../../functions/console/api.ts';
import type { CustomerAnswer } from '../../functions/contracts/console-views.ts';
import { CUSTOMER_PAGE_EVENTS } from '../../functions/contracts/console-views.ts';
import { eventPk } from '../../functions/domain/keys.ts';
import { quarantinedUserKeyOf } from '../../functions/domain/quarantine-ref.ts';
import { operatorPorts } from '../../functions/operator/index.ts';
import { DynamoEventStore, OUT_OF_DATE } from '../../functions/stores/event-store.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { apiRoute, consoleOn, consolePerson } from '../support/console.ts';
import { acceptedEvent, putAll, quarantinedRecord } from '../support/customer-events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

const USER = 'cp-business-1';
const FAILING = 'cp-failing-1';
const EVENTS = 130;
const T0 = Date.parse('2026-12-01T00:00:00Z');
/** Four events at one instant, where the first page ends: the cursor must neither drop nor repeat them. */
const TIED = new Set([79, 80, 81, 82]);
const pad = (i: number) => String(i).padStart(3, '0');
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
const customer = async (older?: string, userId = USER) => {
  const answer = await answerApi(customerRoute, SAM, JSON.stringify({ userId, older }), deps);
  expect(answer.status).toBe(200);
  return answer.body as CustomerAnswer;
};
/** Every page of a customer, the first to the one with no older: each page's events (its notices' and records'). */
async function allPages(userId: string): Promise<{ pages: CustomerAnswer[]; events: string[][] }> {
  const pages: CustomerAnswer[] = [];
  let older: string | undefined;
  do {
    const page = await customer(older, userId);
    pages.push(page);
    older = page.older ?? undefined;
  } while (older !== undefined && pages.length < 20);
  const events = pages.map((p) => [
    ...new Set([...p.notices.map((n) => n.eventId), ...p.quarantined.map((q) => q.eventId)]),
  ]);
  return { pages, events };
}

const min = (n: number) => new Date(T0 + n * 60_000).toISOString();
/** A customer whose one event was quarantined (newest of all), then fed in again with an older occurredAt. */
const REQUEUED = 'cp-requeued-1';
/** A customer whose newest event a retrying producer sent 110 times, each copy quarantined, and an older one. */
const RETRIED = 'cp-retried-1';
const COPIES = 110;
/** A customer with 450 events at one instant (a bulk file stamped with one second), their ids UUIDs. */
const TIES = 'cp-ties-1';
const TIED_EVENTS = Array.from({ length: 450 }, () => randomUUID());

async function reviewersCustomers(): Promise<void> {
  const sixty = (user: string, prefix: string) =>
    Array.from({ length: 60 }, (_, i) => acceptedEvent(user, `${prefix}-${pad(i)}`, min(i))).flat();
  await putAll(table, [
    ...sixty(REQUEUED, 'cp-q'),
    ...acceptedEvent(REQUEUED, 'cp-q-back', min(-10)),
    ...sixty(RETRIED, 'cp-y'),
    ...TIED_EVENTS.flatMap((id) => acceptedEvent(TIES, id, min(0))),
  ]);
  await quarantinedRecord(table, { userId: REQUEUED, eventId: 'cp-q-back', at: T0 + 100 * 60_000, offset: 1 });
  for (let copy = 0; copy < COPIES; copy++) {
    const at = T0 + 200 * 60_000 + copy * 1000;
    await quarantinedRecord(table, { userId: RETRIED, eventId: 'cp-y-loud', at, offset: 1000 + copy });
  }
  await quarantinedRecord(table, { userId: RETRIED, eventId: 'cp-y-old', at: T0 - 30 * 60_000, offset: 2000 });
}

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
  const items = Array.from({ length: EVENTS }, (_, i) => acceptedEvent(USER, `cp-e-${pad(i)}`, atOf(i))).flat();
  // A second customer: 50 events, each with an email, a text and a push that FAILED (each could be sent again).
  const failing = Array.from({ length: CUSTOMER_PAGE_EVENTS }, (_, i) =>
    acceptedEvent(FAILING, `cp-f-${pad(i)}`, atOf(i), { channels: ['EMAIL', 'SMS', 'PUSH'], failed: true }),
  ).flat();
  await putAll(table, [...items, ...failing]);
  for (const [n, q] of QUARANTINED.entries()) {
    await quarantinedRecord(table, { userId: USER, eventId: q.eventId, at: q.at, offset: 100 + n });
  }
  await reviewersCustomers();
  const ports = operatorPorts({
    doc: counted(table.doc),
    tableName: table.tableName,
    evidenceIndexTableName: table.evidenceIndexTableName,
    evidence: new FileEvidenceStore(mkdtempSync(join(tmpdir(), 'console-page-'))),
    invokeIngest: () => Promise.reject(new Error('not here')),
  });
  deps = consoleOn(ports).deps;
});

describe('a customer with many events', () => {
  it('is shown the newest 50 first, then older pages through the cursor: every event once, newest first, ties on an edge too', async () => {
    const { pages, events } = await allPages(USER);
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
    const tied = [...TIED].map((i) => `cp-e-${pad(i)}`);
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

  it("refuses a cursor that is not one of its own, another customer's, or one edited to another place: the list is out of date", async () => {
    const first = await customer();
    const mine = first.older as string;
    const edited = JSON.parse(Buffer.from(mine, 'base64url').toString('utf8')) as Record<string, unknown>;
    edited.accepted = { ...(edited.accepted as object), pk: 'EVENT#cp-f-000' };
    for (const [userId, older] of [
      [USER, 'bm90IG91cnM'],
      [REQUEUED, mine],
      [USER, Buffer.from(JSON.stringify(edited)).toString('base64url')],
    ]) {
      const answer = await answerApi(customerRoute, SAM, JSON.stringify({ userId, older }), deps);
      expect(answer).toEqual({
        status: 400,
        body: { error: { code: 'INVALID', message: 'This list is out of date: look the customer up again.' } },
      });
    }
  });
});

describe('a customer whose records of one event are many, or whose events share one instant', () => {
  const range = (prefix: string, from: number, to: number) =>
    Array.from({ length: from - to + 1 }, (_, i) => `${prefix}-${pad(from - i)}`);

  it('lists an event quarantined and then accepted once, at its newest record, every other event once too', async () => {
    const { pages, events } = await allPages(REQUEUED);
    expect(events).toEqual([
      expect.arrayContaining(['cp-q-back', ...range('cp-q', 59, 11)]),
      expect.arrayContaining(range('cp-q', 10, 0)),
    ]);
    expect(events.map((e) => e.length)).toEqual([50, 11]);
    // Its notice and its quarantined record are on the first page, and on no other.
    expect(pages[0]?.quarantined.map((q) => q.eventId)).toEqual(['cp-q-back']);
    expect(pages[0]?.notices.map((n) => n.eventId)).toContain('cp-q-back');
  });

  it('counts 110 quarantined copies of one event as one event, and reaches the older records after them', async () => {
    const { pages, events } = await allPages(RETRIED);
    expect(events.map((e) => e.length)).toEqual([50, 12]);
    expect(events[0]).toEqual(expect.arrayContaining(['cp-y-loud', ...range('cp-y', 59, 11)]));
    expect(events[1]).toEqual(expect.arrayContaining([...range('cp-y', 10, 0), 'cp-y-old']));
    expect(pages[0]?.quarantined.filter((q) => q.eventId === 'cp-y-loud')).toHaveLength(COPIES);
    expect(pages[1]?.older).toBeNull();
  });

  it('pages through 450 events at one instant to the last, each once, the cursor small whatever the tie', async () => {
    const { pages, events } = await allPages(TIES);
    expect(events.map((e) => e.length)).toEqual(Array.from({ length: 9 }, () => CUSTOMER_PAGE_EVENTS));
    expect(new Set(events.flat())).toEqual(new Set(TIED_EVENTS));
    const cursors = pages.flatMap((p) => (p.older === null ? [] : [p.older]));
    expect(cursors).toHaveLength(8);
    const longest = Math.max(...cursors.map((c) => c.length));
    console.info(`the longest cursor of 450 events at one instant: ${longest} characters`);
    expect(longest).toBeLessThan(1000);
  });

  it('stops a page, bounded, after many older copies of an event it showed, and the next page goes on from there', async () => {
    // Two events a page: a page walks at most 40 index records. 'cp-b-loud' is newest, 50 older copies of it follow.
    const user = 'cp-bounded-1';
    const copies = Array.from({ length: 50 }, (_, n) => ({
      pk: eventPk('cp-b-loud'),
      sk: `QUARANTINED#banking.transfers#0#${n}`,
      kind: 'QUARANTINE_REF',
      eventId: 'cp-b-loud',
      userId: user,
      userKey: quarantinedUserKeyOf(user),
      occurredAt: min(10 + n / 100),
    }));
    await putAll(table, [
      ...acceptedEvent(user, 'cp-b-loud', min(20)),
      ...copies,
      ...acceptedEvent(user, 'cp-b-old', min(1)),
    ]);
    const store = new DynamoEventStore(table.doc, table.tableName);
    const first = await store.userEventsPage(user, 2);
    if (first === OUT_OF_DATE) throw new Error('a first page is never out of date');
    expect(first.events.map((e) => e.eventId)).toEqual(['cp-b-loud']);
    expect(first.older).toBeDefined();
    const second = await store.userEventsPage(user, 2, first.older);
    expect(second).toMatchObject({ events: [expect.objectContaining({ eventId: 'cp-b-old' })] });
    expect(second).not.toHaveProperty('older');
  });
});
