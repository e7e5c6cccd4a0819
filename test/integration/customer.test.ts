/**
 * One customer's data on DynamoDB Local, through the real ingest handler and the operator's use cases
 * (functions/operator): found by the byUser index (no scan), each notice with what was sent or why not, exported as
 * one document with its evidence, erased without touching what must still be sent; every such action audited with its
 * outcome; a replay with an edited value reviewed before it is made.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { TABLE_SCHEMA } from '../../functions/contracts/table-schema.ts';
import {
  apply,
  customerView,
  eraseCustomer,
  exportCustomer,
  listAudit,
  preview,
  reviewCorrection,
} from '../../functions/operator/index.ts';
import { type CustomerFixture, customerFixture } from '../support/customer-fixture.ts';
import { transferEvent } from '../support/events.ts';

let f: CustomerFixture;
const DPO = { principal: 'dpo', verifiedBy: 'LOCAL_USER' } as const;
const GDPR = { identity: DPO, reason: 'GDPR request 41' };

beforeAll(async () => {
  f = await customerFixture(inject('dynamoEndpoint'), 'customer.test');
});

describe('one customer', () => {
  it("finds the customer's events through the byUser index, newest first, and no one else's", async () => {
    expect(await f.ports.events.eventIdsOfUser('cust-1')).toEqual(['c1-pending', 'c1-refused', 'c1-sent']);
    const byUser = await f.table.indexItems(TABLE_SCHEMA.userIndex, 'USER#cust-2');
    expect(byUser.map((i) => i.pk)).toEqual(['EVENT#c2-other']);
  });

  it('says for each notice what was sent or exactly why not', async () => {
    const view = await customerView(f.ports, 'cust-1');
    const why = Object.fromEntries(view.notices.map((n) => [`${n.eventId}#${n.channel}`, n.why]));
    expect(why['c1-sent#EMAIL']).toMatch(/^sent 2026-12-01T10:00:02Z to hanako@example.com, provider message ses-c1/);
    expect(why['c1-sent#SMS']).toMatch(/opted out of SMS \(preferences of 2026-12-01T09:00:00Z, event c1-prefs\)/);
    expect(why['c1-refused#SMS']).toMatch(/^not sent: the contact point was refused \(INVALID_CONTACT\): /);
    expect(why['c1-pending#PUSH']).toMatch(/^in flight \(PENDING/);
    expect(view.notices).toHaveLength(5);
    expect(view.preferences).toMatchObject({ optOut: ['SMS'] });
  });

  it('exports everything as one JSON document, with the evidence of what was sent, audited with its outcome', async () => {
    const doc = await apply(exportCustomer, f.ports, { userId: 'cust-1' }, GDPR);
    expect(doc.notifications.map((e) => e.eventId)).toEqual(['c1-pending', 'c1-refused', 'c1-sent']);
    expect(doc.preferences).toMatchObject({ optOut: ['SMS'], eventId: 'c1-prefs' });
    expect(doc.evidence.map((p) => p.send.providerMessageId)).toEqual(['ses-c1']);
    expect(JSON.parse(JSON.stringify(doc))).toMatchObject({ userId: 'cust-1' });
    const audited = (await listAudit(f.ports)).find((a) => a.action === 'EXPORT');
    expect(audited).toMatchObject({
      action: 'EXPORT',
      by: DPO,
      reason: 'GDPR request 41',
      target: 'cust-1',
      outcome: { result: 'DONE', details: { events: 3, evidence: 1 } },
    });
  });

  it('erasure previews what it would erase and keep; then erases finished notices, keeps what must still be sent, keeps the opt-out; evidence stays; the other customer is untouched', async () => {
    const before = await f.table.eventItems('c2-other');
    const planned = await preview(eraseCustomer, f.ports, { userId: 'cust-1' });
    expect(planned.ok && eraseCustomer.shown(planned.value)).toEqual({
      erase: ['c1-refused#SMS', 'c1-sent#EMAIL', 'c1-sent#SMS'],
      keep: ['c1-pending#PUSH', 'c1-refused#EMAIL'],
    });
    expect(await f.table.eventItems('c1-sent')).toContainEqual(expect.objectContaining({ userId: 'cust-1' }));
    const result = await apply(eraseCustomer, f.ports, { userId: 'cust-1' }, GDPR);
    expect(result.erased.sort()).toEqual(['c1-refused#SMS', 'c1-sent#EMAIL', 'c1-sent#SMS']);
    expect(result.kept).toEqual([
      { notificationId: 'c1-pending#PUSH', status: 'PENDING' },
      { notificationId: 'c1-refused#EMAIL', status: 'PENDING' },
    ]);
    expect(result.preferences).toBe('kept');
    const email = (await f.table.eventItems('c1-sent')).find((i) => i.sk === 'NOTIFICATION#EMAIL');
    expect(email).toMatchObject({
      recipient: '',
      data: {},
      userId: 'ERASED',
      status: 'SENT',
      providerMessageId: 'ses-c1',
    });
    // The pending push still has its address and data: it must still be sent.
    const push = (await f.table.eventItems('c1-pending')).find((i) => i.sk === 'NOTIFICATION#PUSH');
    expect(push).toMatchObject({ status: 'PENDING', userId: 'cust-1' });
    expect(String(push?.recipient)).toMatch(/^arn:aws:sns:/);
    // Fully erased events leave the index; the one with a pending notice is found again by the next erasure.
    expect(await f.ports.events.eventIdsOfUser('cust-1')).toEqual(['c1-pending', 'c1-refused']);
    expect((await f.store.list('sends/c1-sent/')).length).toBe(1);
    expect(await f.table.eventItems('c2-other')).toEqual(before);
    // The fixture's clock stands still: the two records of this customer are told apart by their action.
    const audited = (await listAudit(f.ports)).find((a) => a.action === 'ERASE');
    expect(audited).toMatchObject({ action: 'ERASE', target: 'cust-1', outcome: { result: 'DONE' } });
    expect(audited?.outcome?.details).toMatchObject({ erased: expect.any(Array), preferences: 'kept' });
  });
});

describe('a replay with an edited value', () => {
  it('shows what changes, keeps its eventId, and is refused with another', () => {
    const quarantined = {
      eventId: 'q-1',
      raw: Buffer.from(JSON.stringify(transferEvent({ eventId: 'q-1', data: { amount: 1.5 } }))).toString('base64'),
    };
    const edited = JSON.stringify(transferEvent({ eventId: 'q-1', data: { amount: '150' } }));
    expect(reviewCorrection('t#0#1', quarantined, edited)).toMatchObject({
      refusal: null,
      changes: [{ path: 'data.amount', before: 1.5, after: '150' }],
    });
    const hijack = JSON.stringify(
      transferEvent({ eventId: 'q-other', data: { amount: '9999' }, recipient: { email: 'x@evil.example' } }),
    );
    const review = reviewCorrection('t#0#1', quarantined, hijack);
    expect(review.refusal).toMatch(/changes the eventId \(q-1 → q-other\)/);
    expect(review.changes.map((c) => c.path)).toEqual(
      expect.arrayContaining(['data.amount', 'eventId', 'recipient.email']),
    );
  });
});
