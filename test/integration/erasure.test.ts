/**
 * Erasure is final, on DynamoDB Local through the real ingest, dispatch and sweeper handlers and the operator's
 * commands: an erased notification is never repaired, resent or rebuilt from its emptied data — not by the producer's
 * corrected resend, not by `ops repair` or `ops resend` (refused in the preview and on --confirm), not by a record
 * that reaches dispatch anyway — and the opt-out of an erased customer keeps holding. A notification whose required
 * field is missing ends FAILED with that reason instead of going out blank.
 */
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  apply,
  eraseCustomer,
  listAudit,
  type OperatorPorts,
  preview,
  repair,
  resend,
} from '../../functions/operator/index.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { lambdaContext } from '../../tools/local/pipeline.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { preferencesEvent, transferEvent } from '../support/events.ts';
import { ALICE, operatorOn, resendNow } from '../support/operator.ts';
import { type LocalPipeline, localPipeline } from '../support/pipeline.ts';
import { streamEvent, streamRecord } from '../support/stream.ts';

const { ses, sns } = providerMocks();
let pipeline: LocalPipeline;
let ports: OperatorPorts;

beforeAll(async () => {
  pipeline = await localPipeline();
  ports = operatorOn(pipeline.table);
});
afterAll(() => pipeline.reader.close());

const rejected = () =>
  Object.assign(new Error('Illegal address'), {
    name: 'MessageRejected',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });
let n = 0;
beforeEach(() => {
  ses.reset();
  sns.reset();
  ses.on(SendEmailCommand).callsFake(async (input: { Destination?: { ToAddresses?: string[] } }) => {
    if (input.Destination?.ToAddresses?.[0]?.startsWith('rejected')) throw rejected();
    return { MessageId: `ses-${n++}` };
  });
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

const erase = (userId: string, on: OperatorPorts = ports) => apply(eraseCustomer, on, { userId }, ALICE);
const item = async (eventId: string, channel: string) =>
  (await pipeline.table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`) ?? {};
/** A change made to a notification behind the pipeline's back (a bug, a hand-edit, a tool of another day). */
const edit = (eventId: string, channel: string, change: Omit<UpdateCommandInput, 'TableName' | 'Key'>) =>
  pipeline.table.doc.send(
    new UpdateCommand({
      TableName: pipeline.table.tableName,
      Key: { pk: `EVENT#${eventId}`, sk: `NOTIFICATION#${channel}` },
      ...change,
    }),
  );

/** An event whose SMS number has no country code: SMS REFUSED, the email sent. */
const refusedSms = (eventId: string, userId: string, phoneNumber = '090-1234-5678') =>
  transferEvent({
    eventId,
    channels: ['EMAIL', 'SMS'],
    recipient: { userId, email: `${userId}@example.com`, phoneNumber },
  });

describe('erasure is final', () => {
  it("a producer's corrected resend after the erasure repairs nothing and sends nothing: the opted-out customer gets no blank text", async () => {
    await pipeline.ingest([preferencesEvent('er-prefs', '2026-11-30T08:00:00Z', ['SMS'], 'er-cust')]);
    await pipeline.ingest([refusedSms('er-1', 'er-cust')]);
    expect(await item('er-1', 'SMS')).toMatchObject({ status: 'REFUSED' });
    expect(await item('er-1', 'EMAIL')).toMatchObject({ status: 'SENT' });
    const erased = await erase('er-cust');
    expect(erased.erased.sort()).toEqual(['er-1#EMAIL', 'er-1#SMS']);

    ses.resetHistory();
    sns.resetHistory();
    // Inside the inbox window, the producer resends the event with the number corrected.
    const corrected = refusedSms('er-1', 'er-cust', '+81 90-1234-5678');
    await pipeline.ingest([corrected]);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
    expect(await item('er-1', 'SMS')).toMatchObject({ status: 'REFUSED', userId: 'ERASED', recipient: '', data: {} });
    const inbox = (await pipeline.table.eventItems('er-1')).find((i) => i.sk === 'INBOX');
    expect(inbox).not.toHaveProperty('repairedHashes');
    // Nothing of the erased customer is kept again: the resend is not quarantined with its number.
    const quarantined = (await pipeline.table.allItems()).filter(
      (i) => i.kind === 'QUARANTINE' && i.eventId === 'er-1',
    );
    expect(quarantined).toEqual([]);

    // The operator's repair of the same event is refused, with the reason.
    await expect(
      apply(repair, ports, { eventId: 'er-1', corrected: JSON.stringify(corrected) }, ALICE),
    ).rejects.toThrow(/er-1#SMS was erased .*: an erased notification is never repaired/);
  });

  it('erased preferences leave a watermark: a late, older PreferencesUpdated is refused and writes nothing back; a newer one applies', async () => {
    await pipeline.ingest([preferencesEvent('er-p-new', '2026-11-30T09:00:00Z', [], 'er-prefs-cust')]);
    await erase('er-prefs-cust');
    const stored = () =>
      pipeline.table.doc
        .send(new GetCommand({ TableName: pipeline.table.tableName, Key: { pk: 'PREFS#er-prefs-cust', sk: 'PREFS' } }))
        .then((r) => r.Item);
    expect(await stored()).toMatchObject({ optOut: [], erasedAt: expect.any(String) });
    expect(await stored()).not.toHaveProperty('userId');
    // An older update delivered late (a redelivery, a replay): without the watermark it would write them again.
    await pipeline.ingest([preferencesEvent('er-p-old', '2026-11-30T08:00:00Z', ['EMAIL'], 'er-prefs-cust')]);
    expect(await stored()).toMatchObject({ optOut: [], erasedAt: expect.any(String) });
    // The customer's own later choice is theirs: it applies.
    await pipeline.ingest([preferencesEvent('er-p-later', '2026-12-01T08:00:00Z', ['SMS'], 'er-prefs-cust')]);
    expect(await stored()).toMatchObject({ optOut: ['SMS'], userId: 'er-prefs-cust' });
  });

  it('a resend of an erased notification is refused in the preview and on apply, whatever its status; nothing is written, and the refused attempts are audited with the reason', async () => {
    await pipeline.ingest([
      transferEvent({
        eventId: 'er-2',
        channels: ['EMAIL', 'SMS'],
        recipient: { userId: 'er-cust-2', email: 'rejected@example.com', phoneNumber: '+819012345678' },
      }),
    ]);
    expect(await item('er-2', 'EMAIL')).toMatchObject({ status: 'FAILED' });
    const sent = await item('er-2', 'SMS');
    expect(sent).toMatchObject({ status: 'SENT' });
    await erase('er-cust-2');
    const fresh = operatorOn(pipeline.table);
    const before = await pipeline.table.eventItems('er-2');

    const refusal = /er-2#EMAIL was erased .*: an erased notification is never resent/;
    expect(await preview(resend, fresh, { notificationId: 'er-2#EMAIL' })).toEqual({
      ok: false,
      refusal: { code: 'ERASED', message: expect.stringMatching(refusal) },
    });
    await expect(resendNow(fresh, { notificationId: 'er-2#EMAIL' })).rejects.toThrow(refusal);
    // A SENT one, even named by its message id.
    const sms = { notificationId: 'er-2#SMS', despiteAccepted: String(sent.providerMessageId) };
    await expect(resendNow(fresh, sms)).rejects.toThrow(/er-2#SMS was erased/);
    expect(await pipeline.table.eventItems('er-2')).toEqual(before);
    // The preview wrote nothing; each confirmed attempt is on record, refused, with the true reason.
    expect((await listAudit(fresh)).map((r) => [r.target, r.outcome?.result, r.outcome?.details.code]).sort()).toEqual([
      ['er-2#EMAIL', 'REFUSED', 'ERASED'],
      ['er-2#SMS', 'REFUSED', 'ERASED'],
    ]);
  });

  it('an erasure landing between the read and the write of a resend makes the write refuse', async () => {
    await pipeline.ingest([
      transferEvent({
        eventId: 'er-3',
        channels: ['EMAIL'],
        recipient: { userId: 'er-cust-3', email: 'rejected-3@example.com' },
      }),
    ]);
    expect(await item('er-3', 'EMAIL')).toMatchObject({ status: 'FAILED' });
    const racing = operatorOn({
      tableName: pipeline.table.tableName,
      doc: new Proxy(pipeline.table.doc, {
        get(target, prop, receiver) {
          if (prop !== 'send') return Reflect.get(target, prop, receiver);
          return async (command: unknown) => {
            if (command instanceof UpdateCommand) await erase('er-cust-3');
            return target.send(command as never);
          };
        },
      }),
    });
    await expect(resendNow(racing, { notificationId: 'er-3#EMAIL' })).rejects.toThrow(/changed while being resent/);
    // Audited with its outcome: refused, and why.
    expect((await listAudit(racing))[0]).toMatchObject({
      action: 'RESEND',
      target: 'er-3#EMAIL',
      outcome: { result: 'REFUSED', details: { code: 'CHANGED' } },
    });
    expect(await item('er-3', 'EMAIL')).toMatchObject({ status: 'FAILED', userId: 'ERASED' });
  });

  it('an erased notification that reaches dispatch anyway is never sent: a stale record of its image is not claimed; one put back to PENDING ends FAILED, ERASED', async () => {
    await pipeline.ingest([refusedSms('er-4', 'er-cust-4')]);
    const email = await item('er-4', 'EMAIL');
    await erase('er-cust-4');
    ses.resetHistory();
    sns.resetHistory();
    // The stream hands dispatch the INSERT of the email again, late: its image still has the address and the data.
    const stale = streamRecord('INSERT', { ...email, status: 'PENDING', attempt: 0, providerMessageId: undefined });
    await pipeline.handlers.dispatch(streamEvent([stale]), lambdaContext('notifier-dispatch'));
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
    expect(await item('er-4', 'EMAIL')).toMatchObject({ status: 'SENT', recipient: '', userId: 'ERASED' });
    // Whatever put it back (a bug, a hand-edit, a tool of another day): PENDING with its emptied address and data.
    await edit('er-4', 'SMS', {
      UpdateExpression: 'SET #s = :p, sweepKey = :k, sweepAt = :at REMOVE refusedReason',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':p': 'PENDING', ':k': 'PENDING#SMS#0', ':at': Date.now() },
    });
    await pipeline.converge();
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
    expect(await item('er-4', 'SMS')).toMatchObject({ status: 'FAILED', lastError: 'ERASED' });
  });
});

describe('a notice with a required field missing', () => {
  it('is never sent blank: it ends FAILED, saying which field', async () => {
    sns.resetHistory();
    await pipeline.kafka.deliver(
      mskEvent([
        {
          topic: 'banking.transfers',
          partition: 1,
          offset: 0,
          value: transferEvent({ eventId: 'rq-1', channels: ['PUSH'], recipient: { userId: 'rq' } }),
        },
      ]),
    );
    // Before dispatch reads it, the amount's currency goes (an item written or changed some other way than ingest,
    // which refuses such an event).
    await edit('rq-1', 'PUSH', {
      UpdateExpression: 'REMOVE #data.currency',
      ExpressionAttributeNames: { '#data': 'data' },
    });
    await pipeline.converge();
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
    expect(await item('rq-1', 'PUSH')).toMatchObject({
      status: 'FAILED',
      lastError: 'RENDER_ERROR: required field currency is missing',
    });
  });
});
