/**
 * Delivery feedback on DynamoDB Local, through the real ingest, dispatch and feedback handlers and the operator's
 * resend: feedback applies only to the send it describes (matched by the provider's message id), so a resend keeps
 * its own feedback; SNS delivery status logs (SMS, push) are matched to their notification by SNS's message id,
 * recorded as DELIVERED or FAILED with the carrier's or platform's words, and a dead number or device is suppressed.
 */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { batchNameOfKey, batchObjectKey, readBatch, reportsPrefix } from '../../functions/domain/evidence-batch.ts';
import { evidenceOf } from '../../functions/operator/index.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';
import { DynamoEvidenceLocator } from '../../functions/stores/evidence-reader.ts';
import { DynamoEvidenceReports } from '../../functions/stores/evidence-reports.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { lambdaContext } from '../../tools/local/pipeline.ts';
import { deliveryStatusLog, logsSubscriptionEvent } from '../../tools/local/sns-delivery-status.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { transferEvent } from '../support/events.ts';
import { ALICE_ID, operatorOn, resendNow } from '../support/operator.ts';
import { type LocalPipeline, localPipeline } from '../support/pipeline.ts';
import { type SesEventOptions, type SesEventType, sesEvent } from '../support/ses-events.ts';

// Each provider call waits for its invocation's intent as long as it takes: taken as refused after INTENT_WAIT_MS
// (real time), the invocation's records would each go as a batch of their own, and a queue batch's sends name one batch
// only when it landed (test/support/patient-spool.ts).
vi.mock('../../functions/dispatch/record-evidence.ts', async (importOriginal) =>
  (await import('../support/patient-spool.ts')).patientIntents(await importOriginal()),
);

const { ses, sns } = providerMocks();
let pipeline: LocalPipeline;

let evidence: FileEvidenceStore;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'feedback-evidence-'));
  evidence = new FileEvidenceStore(dir);
  pipeline = await localPipeline({ EVIDENCE_DIR: dir });
});
afterAll(() => pipeline.reader.close());

/** What the provider answers to each send, in order: a message id, or an error. */
let answers: (string | Error)[] = [];
const next = async () => {
  const a = answers.shift() ?? `msg-${crypto.randomUUID()}`;
  if (a instanceof Error) throw a;
  return { MessageId: a };
};
beforeEach(() => {
  ses.reset();
  sns.reset();
  answers = [];
  ses.on(SendEmailCommand).callsFake(next);
  sns.on(PublishCommand).callsFake(next);
});

/** A 500 after the request was written: the message may have gone out, the outcome is unknown. */
const serverError = () =>
  Object.assign(new Error('We encountered an internal error. Please try again.'), {
    name: 'InternalFailure',
    $fault: 'server',
    $metadata: { httpStatusCode: 500 },
  });

const ingest = (values: object[]) => pipeline.ingest(values);
const settle = () => pipeline.converge();
const notification = async (eventId: string, channel: string) =>
  (await pipeline.table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`) ?? {};
const sesFeedback = (type: SesEventType, o: SesEventOptions) =>
  pipeline.handlers.feedback(sesEvent(type, o), lambdaContext('notifier-feedback'));
/** SNS's delivery status log entry for a message, handed over as a CloudWatch Logs subscription would. */
const snsFeedback = (channel: 'SMS' | 'PUSH', messageId: string, to: string, at = Date.now()) => {
  const log = deliveryStatusLog({ messageId, channel, to, at });
  return pipeline.handlers.feedback(
    logsSubscriptionEvent(log.logGroup, [log.message]),
    lambdaContext('notifier-feedback'),
  );
};
/** The feedback batches the table names for a send batch's reports. */
const reportsOf = (sendBatch: string) =>
  new DynamoEvidenceReports(pipeline.table.doc, pipeline.table.tableName).of(sendBatch);
const locator = () =>
  new DynamoEvidenceLocator(
    pipeline.table.doc,
    pipeline.table.tableName,
    new DynamoEvidenceIndex(pipeline.table.doc, pipeline.table.tableName),
  );
const resend = (notificationId: string, despiteAccepted?: string) =>
  resendNow(
    operatorOn(pipeline.table),
    { notificationId, ...(despiteAccepted === undefined ? {} : { despiteAccepted }) },
    { identity: ALICE_ID, reason: 'the customer called' },
  );

describe('feedback applies only to the send it describes: a resend keeps its own', () => {
  it("SES: the first send's late bounce, arriving after an operator's resend, does not block the resend's own Delivery", async () => {
    const to = 'resent@example.com';
    const nid = 'fb-resend#EMAIL';
    // The first send reaches SES but its answer is a 500: UNKNOWN (at most once). SES's own events still come.
    answers = [serverError(), 'ses-second-send'];
    await ingest([transferEvent({ eventId: 'fb-resend', channels: ['EMAIL'], recipient: { email: to, userId: 'u' } })]);
    expect(await notification('fb-resend', 'EMAIL')).toMatchObject({ status: 'UNKNOWN' });
    // Mail sent at 09:15:01, before the resend, delivered: the operator can see it went out after all.
    const first = { notificationId: nid, to, messageId: 'ses-first-send' };
    await sesFeedback('Delivery', { ...first, at: '2026-11-30T09:15:04Z' });
    expect(await notification('fb-resend', 'EMAIL')).toMatchObject({ deliveryStatus: 'DELIVERED' });

    // The operator resends anyway. Before dispatch sends again, SES reports that the first message finally bounced
    // (a soft bounce: SES gave up retrying; it says nothing lasting about the address). It is about the first send,
    // not the one on its way, and stays off the item.
    await resend(nid);
    const late = await sesFeedback('Bounce', { ...first, bounceType: 'Transient', at: '2026-11-30T10:00:00Z' });
    expect(late).toMatchObject({ kind: 'otherSend' });
    expect(await notification('fb-resend', 'EMAIL')).not.toHaveProperty('deliveryStatus');

    // The resend goes out as another message, and its own Delivery is recorded.
    await settle();
    expect(await notification('fb-resend', 'EMAIL')).toMatchObject({
      status: 'SENT',
      sesMessageId: 'ses-second-send',
    });
    const second = { notificationId: nid, to, messageId: 'ses-second-send' };
    await sesFeedback('Delivery', { ...second, at: '2026-12-02T00:00:00Z' });
    expect(await notification('fb-resend', 'EMAIL')).toMatchObject({
      status: 'SENT',
      deliveryStatus: 'DELIVERED',
      deliveryAt: '2026-12-02T00:00:00.000Z',
      deliveryMessageId: 'ses-second-send',
    });
    // Anything more about the first message, now that the second is recorded, changes nothing either; a complaint
    // is still about the address, whichever send drew it, and suppresses it.
    expect(await sesFeedback('Complaint', { ...first, at: '2026-11-30T11:00:00Z' })).toMatchObject({
      kind: 'otherSend',
      suppressions: ['suppressed'],
    });
    expect(await notification('fb-resend', 'EMAIL')).toMatchObject({ deliveryStatus: 'DELIVERED' });
  });

  it('SMS: a resent notification records the delivery status of its own message, never the earlier one', async () => {
    const phone = '+14155550100';
    answers = [serverError(), 'sns-sms-second'];
    await ingest([
      transferEvent({ eventId: 'fb-sms', channels: ['SMS'], recipient: { phoneNumber: phone, userId: 'u' } }),
    ]);
    expect(await notification('fb-sms', 'SMS')).toMatchObject({ status: 'UNKNOWN' });
    await resend('fb-sms#SMS');
    await settle();
    // The first message's log names a message no notification records: nothing to tie it to.
    expect(await snsFeedback('SMS', 'sns-sms-first', '+14155550181')).toMatchObject([{ kind: 'notOurs' }]);
    expect(await snsFeedback('SMS', 'sns-sms-second', phone)).toMatchObject([{ kind: 'recorded' }]);
    expect(await notification('fb-sms', 'SMS')).toMatchObject({
      status: 'SENT',
      deliveryStatus: 'DELIVERED',
      deliveryMessageId: 'sns-sms-second',
      deliveryResponse: 'Message has been accepted by phone carrier',
    });
  });

  it("SMS: a dead number's status about the send before an operator's resend is ours: on that send's evidence, and the number suppressed before the resend goes out", async () => {
    const dead = '+14155550181';
    answers = ['sns-dead-first', 'sns-dead-second'];
    await ingest([
      transferEvent({ eventId: 'fb-dead', channels: ['SMS'], recipient: { phoneNumber: dead, userId: 'u' } }),
    ]);
    expect(await notification('fb-dead', 'SMS')).toMatchObject({ status: 'SENT', providerMessageId: 'sns-dead-first' });
    // The customer says nothing came; the operator resends despite the acceptance. Before dispatch sends again, SNS
    // logs the first message: the number is invalid.
    await resend('fb-dead#SMS', 'sns-dead-first');
    expect(await snsFeedback('SMS', 'sns-dead-first', dead)).toMatchObject([
      {
        kind: 'otherSend',
        target: { notificationId: 'fb-dead#SMS' },
        suppressions: ['suppressed'],
      },
    ]);
    // The resend's own status stays off it: it is about the earlier send.
    expect(await notification('fb-dead', 'SMS')).not.toHaveProperty('deliveryStatus');
    await settle();
    expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
    expect(await notification('fb-dead', 'SMS')).toMatchObject({
      status: 'SUPPRESSED',
      suppressedReason: 'UNDELIVERABLE',
    });
    const [first] = await evidenceOf(evidence, 'fb-dead#SMS');
    expect(first?.send.providerMessageId).toBe('sns-dead-first');
    expect(first?.feedback).toMatchObject([{ status: 'FAILED', providerResponse: 'Invalid phone number' }]);
  });
});

describe('SES events from their queue, in batches', () => {
  it("a queue batch is recorded like its events one by one; the invocation's reports are one evidence object, which their send batch names", async () => {
    answers = ['ses-q-1', 'ses-q-2', 'ses-q-3'];
    await ingest(
      ['q-1', 'q-2', 'q-3'].map((eventId) =>
        transferEvent({ eventId, channels: ['EMAIL'], recipient: { email: `${eventId}@example.com`, userId: 'u' } }),
      ),
    );
    const sent = await Promise.all(['q-1', 'q-2', 'q-3'].map((e) => notification(e, 'EMAIL')));
    const batches = new Set(sent.map((n) => (n.evidence as { batch: string }).batch));
    expect(batches.size).toBe(1);
    const messages = sent.map((n, i) => ({
      messageId: `m-${i}`,
      receiptHandle: `r-${i}`,
      eventSource: 'aws:sqs',
      body: JSON.stringify(
        sesEvent('Delivery', {
          notificationId: String(n.notificationId),
          to: String(n.recipient),
          messageId: String(n.sesMessageId),
        }),
      ),
    }));
    expect(await pipeline.handlers.feedback({ Records: messages }, lambdaContext('notifier-feedback'))).toEqual({
      batchItemFailures: [],
    });
    for (const e of ['q-1', 'q-2', 'q-3']) {
      expect(await notification(e, 'EMAIL')).toMatchObject({ deliveryStatus: 'DELIVERED' });
    }
    const [batch] = [...batches] as [string];
    const [named, ...more] = await reportsOf(batch);
    expect(more).toEqual([]);
    expect(readBatch((await evidence.get(batchObjectKey(named as string))) as Uint8Array).header).toMatchObject({
      writer: 'feedback',
      records: [{ kind: 'FEEDBACK' }, { kind: 'FEEDBACK' }, { kind: 'FEEDBACK' }],
    });
    expect(await evidence.list(reportsPrefix(batch))).toEqual([]);
    for (const found of [await evidenceOf(evidence, 'q-2'), await evidenceOf(evidence, 'q-2', locator())]) {
      expect(found.map((p) => p.feedback.map((f) => f.status))).toEqual([['DELIVERED']]);
    }
  });

  it('one feedback invocation with reports on sends of several send batches writes one object; each send batch names it, and each send shows only its own report', async () => {
    answers = ['ses-m-1', 'ses-m-2'];
    // Two dispatch invocations: two send batches.
    for (const eventId of ['m-1', 'm-2']) {
      await ingest([
        transferEvent({
          eventId,
          channels: ['EMAIL'],
          recipient: { email: `${eventId}@example.com`, userId: eventId },
        }),
      ]);
    }
    const sent = await Promise.all(['m-1', 'm-2'].map((e) => notification(e, 'EMAIL')));
    const sendBatches = sent.map((n) => (n.evidence as { batch: string }).batch);
    expect(new Set(sendBatches).size).toBe(2);
    const before = await evidence.list('batches/');
    const messages = sent.map((n, i) => ({
      messageId: `mb-${i}`,
      receiptHandle: `rb-${i}`,
      eventSource: 'aws:sqs',
      body: JSON.stringify(
        sesEvent(i === 0 ? 'Delivery' : 'Bounce', {
          notificationId: String(n.notificationId),
          to: String(n.recipient),
          messageId: String(n.sesMessageId),
        }),
      ),
    }));
    expect(await pipeline.handlers.feedback({ Records: messages }, lambdaContext('notifier-feedback'))).toEqual({
      batchItemFailures: [],
    });
    const written = (await evidence.list('batches/')).filter((k) => !before.includes(k));
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^batches\/\d{4}-\d{2}-\d{2}\/\d{6}-feedback-[0-9a-z]+\.jsonl\.gz$/);
    for (const b of sendBatches) expect(await reportsOf(b)).toEqual([batchNameOfKey(written[0] as string)]);
    const statuses = async (eventId: string) =>
      (await evidenceOf(evidence, eventId, locator())).map((p) => p.feedback.map((f) => f.status));
    expect(await statuses('m-1')).toEqual([['DELIVERED']]);
    expect(await statuses('m-2')).toEqual([['BOUNCED']]);
  });
});

describe('SNS delivery status on DynamoDB Local', () => {
  it('an SMS and a push are DELIVERED by their logs, found by message id; a duplicate log changes nothing', async () => {
    const arn = 'arn:aws:sns:us-east-1:123456789012:endpoint/GCM/bank-app/0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e4f';
    answers = ['sns-a', 'sns-b'];
    await ingest([
      transferEvent({
        eventId: 'dl-1',
        channels: ['SMS', 'PUSH'],
        recipient: { phoneNumber: '+14155550123', pushEndpointArn: arn, userId: 'u' },
      }),
    ]);
    const sms = await notification('dl-1', 'SMS');
    const pushed = await notification('dl-1', 'PUSH');
    const at = Date.now();
    await snsFeedback('SMS', String(sms.providerMessageId), '+14155550123', at);
    await snsFeedback('PUSH', String(pushed.providerMessageId), arn, at);
    expect(await snsFeedback('SMS', String(sms.providerMessageId), '+14155550123', at)).toMatchObject([
      { kind: 'unchanged' },
    ]);
    expect(await notification('dl-1', 'SMS')).toMatchObject({ status: 'SENT', deliveryStatus: 'DELIVERED' });
    expect(await notification('dl-1', 'PUSH')).toMatchObject({
      status: 'SENT',
      deliveryStatus: 'DELIVERED',
      updatedAt: pushed.updatedAt,
      attempt: pushed.attempt,
    });
  });

  it('a number that opted out at its carrier is FAILED and suppressed: the next SMS to it ends SUPPRESSED, unsent', async () => {
    const stop = '+14155550180';
    await ingest([
      transferEvent({ eventId: 'dl-stop', channels: ['SMS'], recipient: { phoneNumber: stop, userId: 'u' } }),
    ]);
    const sent = await notification('dl-stop', 'SMS');
    await snsFeedback('SMS', String(sent.providerMessageId), stop);
    expect(await notification('dl-stop', 'SMS')).toMatchObject({
      status: 'SENT',
      deliveryStatus: 'FAILED',
      deliveryResponse: 'Phone number is opted out',
    });
    sns.resetHistory();
    await ingest([
      transferEvent({ eventId: 'dl-stop-2', channels: ['SMS'], recipient: { phoneNumber: stop, userId: 'u' } }),
    ]);
    expect(await notification('dl-stop-2', 'SMS')).toMatchObject({
      status: 'SUPPRESSED',
      suppressedReason: 'CARRIER_OPT_OUT',
    });
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
    // No phone number anywhere on the suppression item.
    const items = await pipeline.table.allItems();
    expect(JSON.stringify(items.filter((i) => i.kind === 'SUPPRESSION'))).not.toContain('5550180');
  });

  it('an unreachable number fails this once and suppresses nothing; a message nobody recorded is not ours', async () => {
    const away = '+14155550182';
    await ingest([
      transferEvent({ eventId: 'dl-away', channels: ['SMS'], recipient: { phoneNumber: away, userId: 'u' } }),
    ]);
    const sent = await notification('dl-away', 'SMS');
    const r = await snsFeedback('SMS', String(sent.providerMessageId), away);
    expect(r).toMatchObject([{ kind: 'recorded', suppressions: [] }]);
    // Another sender of the account, long ago: not looked up again, not written anywhere.
    const before = (await pipeline.table.allItems()).length;
    expect(await snsFeedback('SMS', 'someone-elses-message', away, Date.now() - 3_600_000)).toMatchObject([
      { kind: 'notOurs' },
    ]);
    expect((await pipeline.table.allItems()).length).toBe(before);
  });
});
