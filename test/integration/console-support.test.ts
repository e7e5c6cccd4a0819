/**
 * What the support console tells an agent, on DynamoDB Local with the real stores: a record we received but could not
 * read is found by its event and by its customer and said to be exactly that (never "no way to reach the customer");
 * an id we never received is 404; a resend to a number the carrier opted out is refused in the preview, not offered;
 * a sent notice whose copy the store cannot show yet says so (never "nothing was handed over");
 * a proposal the console may not decide is refused and audited; the customer's audit trail is read through its index.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { Caller } from '../../functions/console/caller.ts';
import type { ApiRouteName } from '../../functions/contracts/console-routes.ts';
import { addressHash } from '../../functions/domain/audience.ts';
import { batchName } from '../../functions/domain/evidence-batch.ts';
import { suppressionPk } from '../../functions/domain/keys.ts';
import { buildQuarantine } from '../../functions/domain/notification.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { listAudit, type OperatorPorts } from '../../functions/operator/index.ts';
import { consoleOn, consolePerson } from '../support/console.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { operatorOn } from '../support/operator.ts';

let table: LocalTable;
let ports: OperatorPorts;
let consoleApi: ReturnType<typeof consoleOn>;
const SAM = consolePerson('sam', 's', 'Sam');
const NOOR = consolePerson('noor', 'a', 'Noor');
const ask = (name: ApiRouteName, body: unknown, caller: Caller = SAM) => consoleApi.ask(name, body, caller);
const STOPPED = '+14155550180';
const ABSENT_BATCH = batchName('dispatch', Date.parse('2026-12-06T00:24:16Z'), 'a3f3unread0');
const base64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ports = operatorOn(table);
  consoleApi = consoleOn(ports);
  // A transfer whose amount the producer sent as a number: quarantined by ingest's own store, as it writes it.
  const item = buildQuarantine(
    { reason: 'INVALID_AMOUNT', detail: 'amount must be a string (at data.amount)', eventId: 'cs-float' },
    base64({ eventId: 'cs-float', recipient: { userId: 'cs-u7' } }),
    { topic: 'banking.transfers', partition: 0, offset: 7 },
    Date.parse('2026-12-05T10:00:00Z'),
    { retentionDays: 35 },
  );
  item.userId = 'cs-u7';
  await new DynamoInboxStore(table.doc, table.tableName).quarantine(item);
  // A text that failed to a number whose carrier has an active STOP for it.
  const put = (Item: Record<string, unknown>) => table.doc.send(new PutCommand({ TableName: table.tableName, Item }));
  await put({
    pk: 'EVENT#cs-stop',
    sk: 'NOTIFICATION#SMS',
    kind: 'NOTIFICATION',
    notificationId: 'cs-stop#SMS',
    eventId: 'cs-stop',
    channel: 'SMS',
    userId: 'cs-u30',
    recipient: STOPPED,
    status: 'FAILED',
    lastError: 'RETRIES_EXHAUSTED',
    attempt: 3,
    template: 'TransferCompleted',
    createdAt: new Date().toISOString(),
    occurredAt: new Date().toISOString(),
  });
  // A text the provider accepted whose evidence batch the store does not hold (pending, a gap, or lost).
  await put({
    pk: 'EVENT#cs-unread',
    sk: 'NOTIFICATION#SMS',
    kind: 'NOTIFICATION',
    notificationId: 'cs-unread#SMS',
    eventId: 'cs-unread',
    channel: 'SMS',
    userId: 'cs-u31',
    recipient: '+14155550181',
    status: 'SENT',
    providerMessageId: 'm-unread-1',
    evidence: { batch: ABSENT_BATCH, sha256: 'a'.repeat(64) },
    attempt: 1,
    template: 'TransferCompleted',
    createdAt: new Date().toISOString(),
    occurredAt: new Date().toISOString(),
  });
  const hash = addressHash('SMS', STOPPED);
  await put({
    pk: suppressionPk('SMS', hash),
    sk: hash,
    kind: 'SUPPRESSION',
    channel: 'SMS',
    state: 'ACTIVE',
    cause: 'CARRIER_OPT_OUT',
    since: '2026-12-05T09:00:00.000Z',
    notificationId: 'cs-stop#SMS',
  });
});

describe('an event we received but could not read', () => {
  it('is found by its event id and said to be unreadable, with where engineers find it', async () => {
    const answer = await ask('event', { eventId: 'cs-float' });
    expect(answer.status).toBe(200);
    const page = answer.body as { silent: unknown[]; quarantined: { why: string; where: string }[]; userId: string };
    expect(page.silent).toEqual([]);
    expect(page.userId).toBe('cs-u7');
    expect(page.quarantined).toEqual([
      expect.objectContaining({ where: 'banking.transfers#0#7', reason: 'INVALID_AMOUNT', replayedAt: null }),
    ]);
    expect(page.quarantined[0]?.why).toMatch(/received it but could not read it \(the amount was not in the agreed/);
    expect(page.quarantined[0]?.why).toContain('after the bank’s system that sent it is fixed');
    expect(JSON.stringify(page)).not.toContain('no way to reach the customer');
  });

  it('is on its customer’s page, found through the customer index', async () => {
    const answer = await ask('customer', { userId: 'cs-u7' });
    expect(answer.status).toBe(200);
    expect((answer.body as { quarantined: { eventId: string }[] }).quarantined).toEqual([
      expect.objectContaining({ eventId: 'cs-float' }),
    ]);
  });

  it('an id we never received is 404, never a reason why it was not sent', async () => {
    const answer = await ask('event', { eventId: 'cs-nosuch-typo' });
    expect(answer.status).toBe(404);
    expect(JSON.stringify(answer.body)).toContain('We have not received an event with this id');
    // A record whose id could not be read at all is under no id: the answer says it may be one of those.
    expect(JSON.stringify(answer.body)).toContain('one we could not read at all');
  });
});

describe('a sent notice whose copy the evidence store cannot show yet', () => {
  it('says the copy is not readable and why, and that it was handed over, never that nothing was', async () => {
    const answer = await ask('notice', { notificationId: 'cs-unread#SMS' });
    expect(answer.status).toBe(200);
    const body = answer.body as { sent: unknown[]; unfound: { state: string; batch: string; says: string }[] };
    expect(body).toMatchObject({ sent: [], handedOver: 'YES' });
    expect(body.unfound).toEqual([expect.objectContaining({ state: 'lost', batch: ABSENT_BATCH })]);
    expect(body.unfound[0]?.says).toContain('not in the store yet');
  });

  it('a notice the provider never accepted is said to have nothing handed over', async () => {
    const answer = await ask('notice', { notificationId: 'cs-stop#SMS' });
    expect(answer.body).toMatchObject({ sent: [], unfound: [], handedOver: 'NO' });
  });
});

describe('a resend to a number the carrier opted out', () => {
  it('is not offered on the card, and the preview refuses it SUPPRESSED in words without command-line flags', async () => {
    const page = (await ask('event', { eventId: 'cs-stop' })).body as {
      notices: { resend: { offer: string; note: string } }[];
    };
    expect(page.notices[0]?.resend.offer).toBe('NONE');
    expect(page.notices[0]?.resend.note).toContain('STOP');
    const preview = (await ask('preview', { notificationId: 'cs-stop#SMS' })).body as { ok: boolean; code: string };
    expect(preview).toMatchObject({ ok: false, code: 'SUPPRESSED' });
    expect(JSON.stringify(preview)).not.toMatch(/--|lift-suppression/);
    // Which suppression, not a guess between them: the carrier's STOP, and what undoes it.
    const { message } = preview as unknown as { message: string };
    expect(message).toContain('replied STOP');
    expect(message).toContain('texts START');
    expect(message).not.toContain('turned these messages off');
  });

  it('is refused on propose too, and the refusal audited', async () => {
    const answer = await ask('propose', { notificationId: 'cs-stop#SMS', reason: 'customer says the phone is back' });
    expect(answer.status).toBe(409);
    expect(JSON.stringify(answer.body)).not.toMatch(/--[a-z]|the customer has it/);
    const trail = (await ports.audit.listAbout(['cs-stop'], '2000-01-01')).filter((r) => r.step === 'PROPOSE');
    expect(trail.map((r) => r.outcome?.result)).toEqual(['REFUSED']);
  });
});

describe('a proposal the console may not decide', () => {
  it('is refused NOT_HERE and audited as a refusal, and is not listed', async () => {
    await ports.proposals.create({
      id: 'p-20261205T000000Z-erase1',
      action: 'ERASE',
      target: 'cs-u7',
      userId: 'cs-u7',
      request: { userId: 'cs-u7' },
      shown: {},
      fingerprint: 'f',
      reason: 'customer asked to be forgotten',
      proposedBy: { principal: 'alice', verifiedBy: 'LOCAL_USER' },
      proposedAt: new Date().toISOString(),
      approveBy: new Date(Date.now() + 3_600_000).toISOString(),
      state: 'PENDING',
    });
    const answer = await ask(
      'decide',
      { proposalId: 'p-20261205T000000Z-erase1', decision: 'APPROVE', reason: 'the customer asked for it' },
      NOOR,
    );
    expect(answer).toMatchObject({ status: 403, body: { error: { code: 'NOT_HERE' } } });
    expect(JSON.stringify(answer.body)).toContain('an engineer approves this in the operator CLI');
    expect((await ports.proposals.get('p-20261205T000000Z-erase1'))?.state).toBe('PENDING');
    const audited = (await listAudit(ports)).filter((r) => r.proposal === 'p-20261205T000000Z-erase1');
    expect(audited).toEqual([
      expect.objectContaining({ step: 'APPROVE', by: expect.objectContaining({ principal: 'bank_noor' }) }),
    ]);
    expect(audited[0]?.outcome).toMatchObject({ result: 'REFUSED', details: { code: 'NOT_HERE' } });
    const listed = (await ask('proposals', {}, NOOR)).body as { proposals: { id: string }[] };
    expect(listed.proposals.map((p) => p.id)).not.toContain('p-20261205T000000Z-erase1');
  });
});
