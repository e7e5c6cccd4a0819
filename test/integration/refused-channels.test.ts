/**
 * A refused channel on DynamoDB Local, through the real ingest and dispatch handlers and the real stream: a contact
 * point without a sendable reading refuses its channel only — the other channels are sent, the refused one is a
 * REFUSED notification written in the event's one transaction and never sent — and the producer's corrected resend
 * (on the topic, or fed by the operator's repair) moves it REFUSED → PENDING once, so it is sent exactly once.
 */

import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { DISPATCH_FILTER_PATTERN, matchesFilter } from '../../functions/contracts/stream-filter.ts';
import { apply, listRefused, REPAIR_TOPIC, repair } from '../../functions/operator/index.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { converge, type Handlers, KafkaMapping, StreamMapping } from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE, operatorOn } from '../support/operator.ts';

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let reader: StreamReader;
let stream: StreamMapping;
let kafka: KafkaMapping;
let offset = 0;

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  handlers = await handlersOn(table);
  reader = new StreamReader(table.endpoint, table.tableName);
  stream = new StreamMapping(reader, handlers.dispatch);
  kafka = new KafkaMapping(handlers.ingest);
});
afterAll(() => reader.close());

beforeEach(() => {
  ses.reset();
  sns.reset();
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

const env = () => ({ dynamoEndpoint: table.endpoint, tableName: table.tableName });
/** Delivers the values as one MSK batch (or as `copies` concurrent deliveries of it), then drains the stream. */
const ingest = async (values: object[], copies = 1) => {
  const event = () =>
    mskEvent(values.map((value, i) => ({ topic: 'banking.transfers', partition: 0, offset: offset + i, value })));
  await Promise.all(Array.from({ length: copies }, () => kafka.deliver(event())));
  offset += values.length;
  await converge(stream, handlers, env());
};
const item = async (eventId: string, sk: string) =>
  (await table.eventItems(eventId)).find((i) => i.sk === sk) as Record<string, unknown>;
const smsTo = () => sns.commandCalls(PublishCommand).flatMap((c) => c.args[0].input.PhoneNumber ?? []);
const pushes = () => sns.commandCalls(PublishCommand).filter((c) => c.args[0].input.TargetArn !== undefined).length;
const emails = () => ses.commandCalls(SendEmailCommand).length;
const quarantined = async (eventId: string) =>
  (await table.allItems()).filter((i) => i.kind === 'QUARANTINE' && i.eventId === eventId);

const noCountryCode = (eventId: string) => transferEvent({ eventId, recipient: { phoneNumber: '090-1234-5678' } });
const corrected = (eventId: string) => transferEvent({ eventId, recipient: { phoneNumber: '+81 90-1234-5678' } });

describe('a refused channel on DynamoDB Local', () => {
  it('a phone without a country code refuses SMS alone: email and push are sent, SMS is REFUSED in the same transaction and never sent', async () => {
    await ingest([noCountryCode('rf-1')]);
    expect(emails()).toBe(1);
    expect(pushes()).toBe(1);
    expect(smsTo()).toEqual([]);
    const sms = await item('rf-1', 'NOTIFICATION#SMS');
    expect(sms).toMatchObject({
      status: 'REFUSED',
      refusedReason: 'INVALID_CONTACT',
      refusedDetail: expect.stringMatching(/no country code.*\(at recipient\.phoneNumber\)$/),
      recipient: '',
      attempt: 0,
      // Everything a send needs but the address: a repair only has to add it.
      template: 'TransferCompleted',
      data: expect.objectContaining({ amount: '10000', currency: 'JPY' }),
    });
    expect(sms).not.toHaveProperty('sweepKey');
    expect(JSON.stringify(sms)).not.toContain('090-1234-5678');
    expect(await item('rf-1', 'INBOX')).toMatchObject({
      channels: ['EMAIL', 'PUSH'],
      refusedChannels: ['SMS'],
      repairHash: expect.stringMatching(/^v2:/),
    });
    // The stream carried its INSERT; the dispatch trigger's filter never lets a REFUSED notification through.
    const image = { kind: { S: 'NOTIFICATION' }, status: { S: 'REFUSED' } };
    expect(matchesFilter(DISPATCH_FILTER_PATTERN, { eventName: 'INSERT', dynamodb: { NewImage: image } })).toBe(false);
  });

  it('a resend of the same bad event is a duplicate: nothing written, nothing sent', async () => {
    const before = await table.eventItems('rf-1');
    await ingest([noCountryCode('rf-1')]);
    expect(emails() + pushes()).toBe(0);
    expect(await table.eventItems('rf-1')).toEqual(before);
  });

  it("the producer's corrected resend repairs SMS: REFUSED → PENDING with the E.164 number, sent once; email and push are not sent again", async () => {
    const refused = await item('rf-1', 'NOTIFICATION#SMS');
    const r = await kafka.deliver(
      mskEvent([{ topic: 'banking.transfers', partition: 0, offset: offset++, value: corrected('rf-1') }]),
    );
    expect(r).toBeUndefined();
    await converge(stream, handlers, env());
    expect(smsTo()).toEqual(['+819012345678']);
    expect(emails() + pushes()).toBe(0);
    const sms = await item('rf-1', 'NOTIFICATION#SMS');
    expect(sms).toMatchObject({ status: 'SENT', recipient: '+819012345678', firstCreatedAt: refused.createdAt });
    expect(sms.repairedAt).toEqual(expect.any(String));
    expect(sms).not.toHaveProperty('refusedReason');
    const inbox = await item('rf-1', 'INBOX');
    expect(inbox).toMatchObject({ channels: ['EMAIL', 'PUSH', 'SMS'] });
    expect(inbox).not.toHaveProperty('refusedChannels');
    expect(inbox.repairedHashes).toBeInstanceOf(Set);
    expect(await quarantined('rf-1')).toEqual([]);
  });

  it('after the repair, redeliveries of the corrected and of the original record are duplicates: nothing is sent again', async () => {
    await ingest([corrected('rf-1'), noCountryCode('rf-1'), corrected('rf-1')]);
    await ingest([corrected('rf-1')], 3);
    expect(emails() + pushes() + smsTo().length).toBe(0);
    expect(await quarantined('rf-1')).toEqual([]);
  });

  it('a resend that changes anything else (the amount) is a conflict, quarantined; the refused channel stays REFUSED', async () => {
    await ingest([noCountryCode('rf-2')]);
    await ingest([
      transferEvent({ eventId: 'rf-2', recipient: { phoneNumber: '+819012345678' }, data: { amount: '99999' } }),
    ]);
    expect(smsTo()).toEqual([]);
    expect(await item('rf-2', 'NOTIFICATION#SMS')).toMatchObject({ status: 'REFUSED' });
    expect((await quarantined('rf-2')).map((q) => q.reason)).toEqual(['EVENT_ID_CONFLICT']);
  });

  it('the corrected resend delivered several times at once, and in one batch with the original: SMS sent exactly once', async () => {
    await ingest([noCountryCode('rf-3'), corrected('rf-3')], 4);
    expect(smsTo()).toEqual(['+819012345678']);
    expect(emails()).toBe(1);
    expect(await quarantined('rf-3')).toEqual([]);
  });

  it('an email SES cannot send to (a non-ASCII local part) refuses EMAIL alone; an ASCII correction repairs it', async () => {
    await ingest([transferEvent({ eventId: 'rf-4', recipient: { email: '花子@example.jp' } })]);
    expect(emails()).toBe(0);
    expect(await item('rf-4', 'NOTIFICATION#EMAIL')).toMatchObject({
      status: 'REFUSED',
      refusedReason: 'UNSENDABLE_ADDRESS',
    });
    await ingest([transferEvent({ eventId: 'rf-4', recipient: { email: 'hanako@example.jp' } })]);
    expect(ses.commandCalls(SendEmailCommand).map((c) => c.args[0].input.Destination?.ToAddresses)).toEqual([
      ['hanako@example.jp'],
    ]);
    // SMS and push went out with the first record, and only then.
    expect(smsTo()).toEqual(['+819012345678']);
    expect(pushes()).toBe(1);
  });
});

describe("an operator's refused list and repair", () => {
  it('lists the refused notifications; repair feeds the corrected event through ingest and reports each channel', async () => {
    await ingest([noCountryCode('rf-ops')]);
    const ops = operatorOn(table, { invokeIngest: await localIngest(table.endpoint, table.tableName) });
    const repairEvent = (eventId: string, value: string) => apply(repair, ops, { eventId, corrected: value }, ALICE);
    const listed = await listRefused(ops, { reason: 'INVALID_CONTACT' });
    expect(listed.find((r) => r.notificationId === 'rf-ops#SMS')).toMatchObject({
      channel: 'SMS',
      reason: 'INVALID_CONTACT',
    });
    // Still without a country code: the same event, still refused.
    const still = await repairEvent(
      'rf-ops',
      JSON.stringify(transferEvent({ eventId: 'rf-ops', recipient: { phoneNumber: '03-1234-5678' } })),
    );
    expect(still).toMatchObject({
      outcome: 'STILL_REFUSED',
      channels: [{ channel: 'SMS', status: 'REFUSED' }],
      quarantine: null,
    });
    // Another meaning: quarantined as a conflict at the repair's own position.
    const other = await repairEvent(
      'rf-ops',
      JSON.stringify(
        transferEvent({ eventId: 'rf-ops', recipient: { phoneNumber: '+819012345678', userId: 'u-other' } }),
      ),
    );
    expect(other).toMatchObject({
      outcome: 'QUARANTINED',
      quarantine: {
        reason: 'EVENT_ID_CONFLICT',
        id: expect.stringMatching(new RegExp(`^${REPAIR_TOPIC.replace(/\./g, '\\.')}#0#`)),
      },
    });
    const repaired = await repairEvent('rf-ops', JSON.stringify(corrected('rf-ops')));
    expect(repaired).toMatchObject({
      outcome: 'REPAIRED',
      channels: [{ channel: 'SMS', status: 'PENDING' }],
      quarantine: null,
    });
    await converge(stream, handlers, env());
    expect(smsTo()).toEqual(['+819012345678']);
    expect((await listRefused(ops)).some((r) => r.eventId === 'rf-ops')).toBe(false);

    // Nothing left to repair: refused, with the reason.
    await expect(repairEvent('rf-ops', JSON.stringify(corrected('rf-ops')))).rejects.toThrow(/nothing to repair/);
  });
});
