/**
 * One customer's data on DynamoDB Local, through the real ingest handler: found by the byUser index (no scan), each
 * notice with what was sent or why not, exported as one document with its evidence, erased without touching what
 * must still be sent; operator actions audited; a replay with an edited value reviewed before it is made.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  evidenceBody,
  sendEvidence,
  sendKey,
  uniformRetention,
  userPointerKey,
} from '../../functions/domain/evidence.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { main } from '../../tools/ops/cli.ts';
import {
  customerText,
  customerView,
  eraseCustomer,
  eventIdsOfUser,
  exportCustomer,
  listAudit,
  reviewCorrection,
} from '../../tools/ops/customer.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import type { IngestInvoker } from '../../tools/ops/operations.ts';
import { preferencesEvent, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
let ingest: IngestInvoker;
let store: FileEvidenceStore;
let evidenceDir: string;
const TOPIC = 'customer.test';
let offset = 0;
const publish = (value: string | object) => ingest(mskEvent([{ topic: TOPIC, partition: 0, offset: offset++, value }]));
const deps = () => ({ doc: table.doc, tableName: table.tableName });
const NOW = Date.parse('2026-12-02T05:00:00Z');

const setStatus = (eventId: string, channel: string, values: Record<string, unknown>) =>
  table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { pk: `EVENT#${eventId}`, sk: `NOTIFICATION#${channel}` },
      UpdateExpression: `SET ${Object.keys(values)
        .map((_k, i) => `#k${i} = :v${i}`)
        .join(', ')} REMOVE sweepKey, sweepAt`,
      ExpressionAttributeNames: Object.fromEntries(Object.keys(values).map((k, i) => [`#k${i}`, k])),
      ExpressionAttributeValues: Object.fromEntries(Object.values(values).map((v, i) => [`:v${i}`, v])),
    }),
  );

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ingest = await localIngest(table.endpoint, table.tableName);
  evidenceDir = mkdtempSync(join(tmpdir(), 'evidence-'));
  store = new FileEvidenceStore(evidenceDir);
  const cust = (eventId: string, over: Record<string, unknown> = {}) =>
    transferEvent({ eventId, recipient: { userId: 'cust-1' }, ...over });
  await publish(cust('c1-sent', { channels: ['EMAIL', 'SMS'], occurredAt: '2026-12-01T10:00:00Z' }));
  await publish(
    cust('c1-refused', {
      channels: ['EMAIL', 'SMS'],
      recipient: { userId: 'cust-1', phoneNumber: '090-1234-5678' },
      occurredAt: '2026-12-01T11:00:00Z',
    }),
  );
  await publish(cust('c1-pending', { channels: ['PUSH'], occurredAt: '2026-12-01T12:00:00Z' }));
  await publish(transferEvent({ eventId: 'c2-other', recipient: { userId: 'cust-2' } }));
  await publish(preferencesEvent('c1-prefs', '2026-12-01T09:00:00Z', ['SMS'], 'cust-1'));
  await setStatus('c1-sent', 'EMAIL', {
    status: 'SENT',
    attempt: 1,
    providerMessageId: 'ses-c1',
    updatedAt: '2026-12-01T10:00:02Z',
  });
  await setStatus('c1-sent', 'SMS', { status: 'SUPPRESSED', attempt: 1, suppressedReason: 'OPTED_OUT' });
  // The evidence of the email, as dispatch writes it (the record and the customer's pointer).
  const record = sendEvidence(
    {
      notificationId: 'c1-sent#EMAIL',
      eventId: 'c1-sent',
      channel: 'EMAIL',
      userId: 'cust-1',
      template: 'TransferCompleted',
      locale: 'ja',
      attempt: 1,
    },
    {
      channel: 'EMAIL',
      api: 'ses:SendEmail',
      source: 'bank <n@example.com>',
      to: ['hanako@example.com'],
      subject: 'お振込み',
      text: 't',
      html: '<p>h</p>',
      charset: 'UTF-8',
      tags: [],
    },
    'ses-c1',
    NOW,
    uniformRetention(3650),
  );
  const key = sendKey(record);
  await store.put(key, evidenceBody(record), new Date(record.retainUntil));
  await store.put(userPointerKey('cust-1', key), Buffer.from(key), new Date(record.retainUntil));
});

describe('one customer', () => {
  it("finds the customer's events through the byUser index, newest first, and no one else's", async () => {
    expect(await eventIdsOfUser(deps(), 'cust-1')).toEqual(['c1-pending', 'c1-refused', 'c1-sent']);
    const query = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: 'byUser',
        KeyConditionExpression: 'userKey = :u',
        ExpressionAttributeValues: { ':u': 'USER#cust-2' },
      }),
    );
    expect(query.Items?.map((i) => i.pk)).toEqual(['EVENT#c2-other']);
  });

  it('says for each notice what was sent or exactly why not, in plain text', async () => {
    const view = await customerView(deps(), store, 'cust-1');
    const why = Object.fromEntries(view.notices.map((n) => [`${n.eventId}#${n.channel}`, n.why]));
    expect(why['c1-sent#EMAIL']).toMatch(/^sent 2026-12-01T10:00:02Z to hanako@example.com, provider message ses-c1/);
    expect(why['c1-sent#SMS']).toMatch(/opted out of SMS \(preferences of 2026-12-01T09:00:00Z, event c1-prefs\)/);
    expect(why['c1-refused#SMS']).toMatch(/^not sent: the contact point was refused \(INVALID_CONTACT\): /);
    expect(why['c1-pending#PUSH']).toMatch(/^in flight \(PENDING/);
    const text = customerText(view);
    expect(text).toContain('customer cust-1: 5 notice(s)');
    expect(text).toContain('preferences: opted out of ["SMS"]');
  });

  it('exports everything as one JSON document, with the evidence of what was sent', async () => {
    const doc = await exportCustomer(deps(), store, 'cust-1', NOW);
    expect(doc.notifications.map((e) => e.eventId)).toEqual(['c1-pending', 'c1-refused', 'c1-sent']);
    expect(doc.preferences).toMatchObject({ optOut: ['SMS'], eventId: 'c1-prefs' });
    expect(doc.evidence?.map((p) => p.send.providerMessageId)).toEqual(['ses-c1']);
    expect(JSON.parse(JSON.stringify(doc))).toMatchObject({ userId: 'cust-1' });
  });

  it('erases finished notices, keeps what must still be sent, keeps the opt-out; evidence stays; the other customer is untouched', async () => {
    const before = await table.eventItems('c2-other');
    const result = await eraseCustomer(deps(), 'cust-1', NOW);
    expect(result.erased.sort()).toEqual(['c1-refused#SMS', 'c1-sent#EMAIL', 'c1-sent#SMS']);
    expect(result.kept).toEqual([
      { notificationId: 'c1-pending#PUSH', status: 'PENDING' },
      { notificationId: 'c1-refused#EMAIL', status: 'PENDING' },
    ]);
    expect(result.preferences).toBe('kept');
    const email = (await table.eventItems('c1-sent')).find((i) => i.sk === 'NOTIFICATION#EMAIL');
    expect(email).toMatchObject({
      recipient: '',
      data: {},
      userId: 'ERASED',
      status: 'SENT',
      providerMessageId: 'ses-c1',
    });
    // The pending push still has its address and data: it must still be sent.
    const push = (await table.eventItems('c1-pending')).find((i) => i.sk === 'NOTIFICATION#PUSH');
    expect(push).toMatchObject({ status: 'PENDING', userId: 'cust-1' });
    expect(String(push?.recipient)).toMatch(/^arn:aws:sns:/);
    // Fully erased events leave the index; the one with a pending notice is found again by the next erasure.
    expect(await eventIdsOfUser(deps(), 'cust-1')).toEqual(['c1-pending', 'c1-refused']);
    expect((await store.list('sends/c1-sent/')).length).toBe(1);
    expect(await table.eventItems('c2-other')).toEqual(before);
  });
});

describe('deliberate operator actions', () => {
  it('a replay with an edited value shows what changes, keeps its eventId, and is refused with another', () => {
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

  it('replay-quarantine: refused without a reason, shown without --confirm, audited when done (who, when, why, what changed)', async () => {
    await publish(transferEvent({ eventId: 'q-replay', channels: ['EMAIL'], data: { amount: 1.5 } }));
    const id = `${TOPIC}#0#${offset - 1}`;
    const file = join(evidenceDir, 'fixed.json');
    writeFileSync(
      file,
      JSON.stringify(transferEvent({ eventId: 'q-replay', channels: ['EMAIL'], data: { amount: '150' } })),
    );
    const where = ['--endpoint', table.endpoint, '--table', table.tableName, '--evidence-dir', evidenceDir];
    await expect(main(['replay-quarantine', id, '--value-file', file, ...where], () => undefined)).rejects.toThrow(
      /--reason/,
    );
    let printed = '';
    const shown = await main(
      ['replay-quarantine', id, '--value-file', file, '--reason', 'producer fixed the amount', '--by', 'ana', ...where],
      (t) => {
        printed += t;
      },
    );
    expect(shown).toBe(3);
    expect(printed).toContain('data.amount: 1.5 → "150"');
    expect(await table.eventItems('q-replay')).toEqual([]);
    const hijack = join(evidenceDir, 'hijack.json');
    writeFileSync(
      hijack,
      JSON.stringify(transferEvent({ eventId: 'q-else', channels: ['EMAIL'], data: { amount: '9999' } })),
    );
    await expect(
      main(['replay-quarantine', id, '--value-file', hijack, '--reason', 'x', '--confirm', ...where], () => undefined),
    ).rejects.toThrow(/keeps the quarantined record's eventId/);
    const done = await main(
      [
        'replay-quarantine',
        id,
        '--value-file',
        file,
        '--reason',
        'producer fixed the amount',
        '--by',
        'ana',
        '--confirm',
        ...where,
      ],
      () => undefined,
    );
    expect(done).toBe(0);
    expect((await table.eventItems('q-replay')).map((i) => i.sk)).toContain('INBOX');
    const [audit] = await listAudit(store);
    expect(audit).toMatchObject({
      action: 'REPLAY',
      by: 'ana',
      reason: 'producer fixed the amount',
      target: id,
      details: { value: 'edited', changes: [{ path: 'data.amount', before: 1.5, after: '150' }] },
    });
    let auditText = '';
    await main(['audit', ...where], (t) => {
      auditText += t;
    });
    expect(auditText).toContain('REPLAY');
    expect(auditText).toContain('why: producer fixed the amount');
  });

  it('export and erase need a user, a reason and --confirm, and are audited', async () => {
    const where = ['--endpoint', table.endpoint, '--table', table.tableName, '--evidence-dir', evidenceDir];
    await expect(main(['export', '--reason', 'r', ...where], () => undefined)).rejects.toThrow(/--user/);
    await expect(main(['erase', '--user', 'cust-2', ...where], () => undefined)).rejects.toThrow(/--reason/);
    expect(
      await main(['erase', '--user', 'cust-2', '--reason', 'GDPR art. 17 request 42', ...where], () => undefined),
    ).toBe(3);
    expect(await eventIdsOfUser(deps(), 'cust-2')).toEqual(['c2-other']);
    let exported = '';
    expect(
      await main(
        ['export', '--user', 'cust-2', '--reason', 'GDPR art. 15 request 41', '--confirm', '--by', 'bo', ...where],
        (t) => {
          exported += t;
        },
      ),
    ).toBe(0);
    expect(JSON.parse(exported)).toMatchObject({ userId: 'cust-2', notifications: [{ eventId: 'c2-other' }] });
    const actions = (await listAudit(store)).map((a) => `${a.action} ${a.target} ${a.by}`);
    expect(actions).toContain('EXPORT cust-2 bo');
  });
});
