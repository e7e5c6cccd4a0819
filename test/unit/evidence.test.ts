/**
 * Evidence of every send (docs/evidence-and-privacy.md): what the provider received, byte for byte, written after the
 * acceptance is recorded and outside the send slot — one batch per invocation, the SENT write naming it and the
 * record's SHA-256; a store that fails or hangs never delays nor repeats the send — the batch becomes a gap with its
 * exact bytes, which the sweeper's pass writes later; the stores write once.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { EVIDENCE_ENVIRONMENT } from '../../functions/contracts/environment.ts';
import {
  type DispatchDeps,
  dispatchNotification,
  startDispatch,
} from '../../functions/dispatch/dispatch-notification.ts';
import { InvocationEvidence } from '../../functions/dispatch/record-evidence.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import {
  evidencePrefixOf,
  parseEvidence,
  type SendEvidence,
  sendKey,
  uniformRetention,
  userPointerKey,
} from '../../functions/domain/evidence.ts';
import {
  batchName,
  batchObjectKey,
  decodeBatch,
  EvidenceBatchFormatError,
  encodeBatch,
  indexRef,
  parseIndexRef,
  sha256Hex,
} from '../../functions/domain/evidence-batch.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import type { SpooledRecord } from '../../functions/stores/evidence-spool.ts';
import { FileEvidenceStore, S3EvidenceStore } from '../../functions/stores/evidence-store.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { fillEvidenceGaps } from '../../functions/sweeper/fill-evidence.ts';
import { documentClientMock, providerMocks } from '../support/aws-mocks.ts';
import {
  claimedNotification,
  DISPATCH_BUDGET,
  DISPATCH_NOW,
  dispatchDeps,
  pendingNotification,
} from '../support/dispatch-deps.ts';
import { MemoryGaps, MemoryIndex, MemoryIntents, MemoryStore } from '../support/evidence-memory.ts';

const ddb = documentClientMock();
const { ses, sns } = providerMocks();
const s3 = mockClient(S3Client);
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const NOW = DISPATCH_NOW;
const pending = pendingNotification;
const sending = (n: NotificationItem) => claimedNotification(n);

const sender = new ProviderSender(new SESClient({}), new SNSClient({}), {
  senderEmail: 'notifications@example.com',
  configurationSet: 'notifier',
});

/** Dispatch whose sends' evidence goes to `batch`. */
const dispatchingInto = (batch: InvocationEvidence): DispatchDeps =>
  dispatchDeps(
    {
      store: new DynamoNotificationStore(doc, 'notifier-test'),
      sender,
      random: () => 0.5,
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
      evidence: { retention: uniformRetention(3650), requestOf: (n, m) => sender.request(n, m), batch },
    },
    NOW,
  );

/** One dispatch invocation's evidence: its batch over the given store, gaps, intents and index. */
function invocation(
  store: MemoryStore,
  gaps = new MemoryGaps(),
  intents = new MemoryIntents(),
  index = new MemoryIndex(),
) {
  const batch = new InvocationEvidence(
    { store, gaps, intents, index: { index, retentionDays: 3650 } },
    { now: NOW, id: 'inv0000000000000001', dueMs: NOW + 90_000 },
  );
  const deps = dispatchingInto(batch);
  return { batch, deps, store, gaps, intents, index };
}
const send = (n: NotificationItem, d: DispatchDeps) =>
  dispatchNotification({ key: { pk: n.pk, sk: n.sk }, retryAt: undefined }, d, DISPATCH_BUDGET);
/** The one send record of a batch object in the store. */
const recordIn = (store: MemoryStore, name: string) => {
  const [r] = decodeBatch(store.objects.get(batchObjectKey(name))?.body ?? Buffer.alloc(0)).records;
  return { entry: r!.entry, bytes: r!.bytes, send: parseEvidence(r!.bytes) as SendEvidence };
};
/** The sweeper's gap filler over these gaps, store and customers' index. */
const fillWithIndex = (gaps: MemoryGaps, store: MemoryStore, index: MemoryIndex) =>
  fillEvidenceGaps({
    gaps,
    store,
    index: { index, retentionDays: 3650 },
    now: () => NOW,
    deadline: NOW + 60_000,
    limit: 10,
  });
const marks = () => ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input.ExpressionAttributeValues?.[':to']);
const sentWrite = () =>
  ddb.commandCalls(UpdateCommand).find((c) => c.args[0].input.ExpressionAttributeValues?.[':to'] === 'SENT')!.args[0]
    .input.ExpressionAttributeValues;

beforeEach(() => {
  ddb.reset();
  ses.reset();
  sns.reset();
  s3.reset();
});

describe('the evidence of a send is what the provider received', () => {
  it('email: sender, recipient, subject, text and HTML exactly as in SendEmail, the message id, when, kept for the retention', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-1' });
    const { batch, deps, store, index } = invocation(new MemoryStore());
    const r = await send(n, deps);
    expect(r).toMatchObject({ kind: 'sent', evidence: { batch: batch.name } });
    expect(await batch.close(10_000, 2_000, NOW)).toMatchObject({ outcome: 'written', records: 1, intentOpen: false });
    const { send: e, bytes } = recordIn(store, batch.name);
    const input = ses.commandCalls(SendEmailCommand)[0]!.args[0].input;
    expect(e.request).toMatchObject({
      channel: 'EMAIL',
      source: input.Source,
      to: input.Destination?.ToAddresses,
      subject: input.Message?.Subject?.Data,
      text: input.Message?.Body?.Text?.Data,
      html: input.Message?.Body?.Html?.Data,
      configurationSet: input.ConfigurationSetName,
      tags: input.Tags,
    });
    expect(e).toMatchObject({
      notificationId: n.notificationId,
      providerMessageId: 'ses-1',
      acceptedAt: new Date(NOW).toISOString(),
      retainUntil: new Date(NOW + 3650 * 86_400_000).toISOString(),
      attempt: 1,
      noticeType: 'TransferCompleted',
    });
    expect(store.objects.get(batchObjectKey(batch.name))?.retainUntil.toISOString()).toBe(e.retainUntil);
    // The SENT write names the batch, the record's own digest and the attempt that wrote it (a later attempt's reader
    // trusts only its own); the customer's index names the send.
    expect(sentWrite()?.[':evidence']).toEqual({
      batch: batch.name,
      sha256: sha256Hex(bytes),
      acceptedAt: e.acceptedAt,
      attempt: 1,
    });
    // The customer's index and the event's name the send, its record's digest (the anchor that outlives the item) and
    // its record's attempt (a later attempt's reader asks for its own).
    const ref = { batch: batch.name, notificationId: n.notificationId, sha256: sha256Hex(bytes), attempt: 1 };
    expect(await index.sendsOf(n.userId)).toEqual([ref]);
    expect(await index.sendsOfEvent(n.eventId)).toEqual([ref]);
  });

  it('SMS: the text as published and its encoding (Japanese is UCS-2); push: the exact JSON payload', async () => {
    for (const channel of ['SMS', 'PUSH'] as const) {
      ddb.reset();
      sns.reset();
      const n = pending(channel);
      ddb
        .on(UpdateCommand)
        .resolvesOnce({ Attributes: sending(n) })
        .resolves({});
      sns.on(PublishCommand).resolves({ MessageId: `sns-${channel}` });
      const { batch, deps, store } = invocation(new MemoryStore());
      await send(n, deps);
      await batch.close(10_000, 2_000, NOW);
      const e = recordIn(store, batch.name).send;
      const input = sns.commandCalls(PublishCommand)[0]!.args[0].input;
      if (channel === 'SMS') {
        expect(e.request).toMatchObject({ phoneNumber: input.PhoneNumber, text: input.Message, encoding: 'UCS-2' });
      } else {
        expect(e.request).toMatchObject({ targetArn: input.TargetArn, payload: input.Message });
      }
    }
  });

  it('a batch keeps each record as the bytes it was on its own, found by its header and checked against its hash', () => {
    const records = (['EMAIL', 'SMS'] as const).map((channel, i) => {
      const n = pending(channel);
      const record = {
        evidenceVersion: 1,
        kind: 'SEND',
        notificationId: n.notificationId,
        eventId: n.eventId,
        channel,
        userId: n.userId,
        noticeType: n.template,
        locale: n.locale,
        attempt: 1,
        providerMessageId: `m-${i}`,
        acceptedAt: new Date(NOW).toISOString(),
        retainUntil: new Date(NOW + 86_400_000).toISOString(),
        request: {
          channel: 'SMS',
          api: 'sns:Publish',
          phoneNumber: '+81',
          text: 'テスト',
          encoding: 'UCS-2',
          segments: 1,
          smsType: 'Transactional',
        },
      } as SendEvidence;
      return { record, bytes: Buffer.from(`${JSON.stringify(record, null, 2)}\n`) };
    });
    const name = batchName('dispatch', NOW, 'abcdef0123456789');
    const object = encodeBatch(name, 'dispatch', records);
    const decoded = decodeBatch(object);
    expect(decoded.header).toMatchObject({ evidenceBatch: 1, name, writer: 'dispatch' });
    expect(decoded.records.map((r) => r.bytes.equals(records[decoded.records.indexOf(r)]!.bytes))).toEqual([
      true,
      true,
    ]);
    // One changed byte in a record: the batch is refused, never shown as evidence.
    const plain = gunzipSync(object);
    plain.writeUInt8((plain.at(-3) ?? 0) ^ 1, plain.length - 3);
    expect(() => decodeBatch(gzipSync(plain))).toThrow(EvidenceBatchFormatError);
  });
});

describe('evidence never delays nor repeats a send', () => {
  it('the send slot is free once the outcome is recorded: nothing is written to the store until the batch closes', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-slot' });
    const store = new MemoryStore('hang');
    const { batch, deps } = invocation(store);
    expect(await send(n, deps)).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
    expect(store.puts).toBe(0);
    expect(batch.records).toHaveLength(1);
  });

  it('a failing store: SENT stands, one send, the exact bytes kept as a gap; the later pass writes them and closes it', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-2' });
    const { batch, deps, gaps, intents } = invocation(new MemoryStore('fail'));
    await batch.open([n.notificationId]);
    const r = await send(n, deps);
    expect(r).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
    expect(await batch.close(10_000, 2_000, NOW)).toMatchObject({
      outcome: 'gap',
      error: 'ServiceUnavailable',
      intentOpen: false,
    });
    expect(marks()).toEqual([undefined, 'SENT']);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
    // The batch as it would have been written; the intent closed (the gap keeps the records safe).
    expect([...gaps.gaps.keys()]).toEqual([batchObjectKey(batch.name)]);
    expect(intents.open_.size).toBe(0);

    const store = new MemoryStore();
    const index = new MemoryIndex();
    const filled = await fillWithIndex(gaps, store, index);
    expect(filled).toEqual({ filled: 1, open: 0, errors: [], removed: [], damaged: [] });
    expect(gaps.gaps.size).toBe(0);
    expect(recordIn(store, batch.name).send.request).toMatchObject({ to: ['hanako@example.com'] });
    expect(await index.sendsOf(n.userId)).toEqual([
      // The filler reads the attempt from the record (a batch's header does not list it).
      {
        batch: batch.name,
        notificationId: n.notificationId,
        sha256: recordIn(store, batch.name).entry.sha256,
        attempt: 1,
      },
    ]);
    // A pass against a store still failing leaves the gap open for the next run, and says so.
    const again = new MemoryGaps();
    await again.add({ key: 'sends/e/EMAIL/m.json', body: Buffer.from('{}'), retainUntil: new Date(NOW), since: 'x' });
    expect(
      await fillEvidenceGaps({
        gaps: again,
        store: new MemoryStore('fail'),
        now: () => NOW,
        deadline: NOW + 1,
        limit: 10,
      }),
    ).toMatchObject({ filled: 0, open: 1 });
  });

  it('a store that hangs is given up at the evidence timeout: the batch goes to the gaps', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-3' });
    const { batch, deps, gaps } = invocation(new MemoryStore('hang'));
    await send(n, deps);
    const started = Date.now();
    expect(await batch.close(10_000, 50, NOW)).toMatchObject({ outcome: 'gap' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(gaps.gaps.size).toBe(1);
  });

  it('store and table both refusing: the evidence is lost (counted, alarmed) unless its intent was kept for the rebuild; the send stays SENT and is not repeated', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-4' });
    const { batch, deps } = invocation(new MemoryStore('fail'), new MemoryGaps(true), new MemoryIntents(true));
    await batch.open([n.notificationId]);
    await send(n, deps);
    // The intent refused too: the record was written on its own, and that is what was lost.
    expect(await batch.close(10_000, 2_000, NOW)).toMatchObject({
      records: 0,
      intentOpen: false,
      alone: [expect.objectContaining({ outcome: 'lost', records: 1 })],
    });
    expect(marks()).toEqual([undefined, 'SENT']);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
    // With its intent kept, the same failure leaves the batch to the sweeper's rebuild (recover-evidence.ts).
    const kept = invocation(new MemoryStore('fail'), new MemoryGaps(true));
    await kept.batch.open([n.notificationId]);
    kept.batch.add({ record: {} as SendEvidence, bytes: Buffer.from('{}'), sha256: '' });
    expect(await kept.batch.close(10_000, 2_000, NOW)).toMatchObject({ outcome: 'gap', intentOpen: true });
  });

  it('the provider call waits for the batch intent, which went out beside the claim', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-wait' });
    let written: () => void = () => undefined;
    const intents = new MemoryIntents();
    const slow = Object.assign(Object.create(intents) as MemoryIntents, {
      open: (i: Parameters<MemoryIntents['open']>[0]) =>
        new Promise<void>((resolve) => {
          written = () => void intents.open(i).then(resolve);
        }),
    });
    const { batch, deps } = invocation(new MemoryStore(), new MemoryGaps(), slow);
    void batch.open([n.notificationId]);
    const sending_ = send(n, deps);
    for (let i = 0; i < 20; i++) await new Promise(setImmediate);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
    written();
    expect(await sending_).toMatchObject({ kind: 'sent', evidence: { batch: batch.name } });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
  });

  it('an intent that neither lands nor fails is waited for at most a moment, then taken as refused — and counted as not written: the send goes on', async () => {
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).resolves({ MessageId: 'sns-hung' });
    const hanging = Object.assign(Object.create(new MemoryIntents()) as MemoryIntents, {
      open: () => new Promise<void>(() => undefined),
    });
    const { deps, store } = invocation(new MemoryStore(), new MemoryGaps(), hanging);
    let late = 0;
    const batch = new InvocationEvidence(
      { store, gaps: new MemoryGaps(), intents: hanging },
      { now: NOW, id: 'inv0000000000000002', dueMs: NOW + 90_000, intentWaitMs: 20, onIntentLate: () => late++ },
    );
    void batch.open([n.notificationId]);
    const r = await send(n, {
      ...deps,
      evidence: { ...(deps.evidence as NonNullable<DispatchDeps['evidence']>), batch },
    });
    expect(r).toMatchObject({ kind: 'sent' });
    const name = (r as { evidence: { batch: string } }).evidence.batch;
    expect(name).not.toBe(batch.name);
    expect((await batch.close(10_000, 2_000, NOW)).alone).toMatchObject([{ outcome: 'written' }]);
    expect(recordIn(store, name).send.providerMessageId).toBe('sns-hung');
    // Once, however many sends and the close waited for it.
    expect(late).toBe(1);
    expect(batch.intentTimedOut).toBe(true);
  });

  it('an intent the table refused: each record is written at once as a batch of its own, which its SENT write names', async () => {
    const store = new MemoryStore();
    const { batch, deps, index } = invocation(store, new MemoryGaps(), new MemoryIntents(true));
    expect(await batch.open(['x'])).toMatchObject({ kept: false, error: 'ProvisionedThroughputExceededException' });
    const names: string[] = [];
    for (const channel of ['EMAIL', 'SMS'] as const) {
      ddb.reset();
      const n = pending(channel);
      ddb
        .on(UpdateCommand)
        .resolvesOnce({ Attributes: sending(n) })
        .resolves({});
      ses.on(SendEmailCommand).resolves({ MessageId: 'ses-alone' });
      sns.on(PublishCommand).resolves({ MessageId: 'sns-alone' });
      const r = await send(n, deps);
      const name = (r as { evidence: { batch: string } }).evidence.batch;
      expect(name).not.toBe(batch.name);
      expect(sentWrite()?.[':evidence']).toMatchObject({ batch: name });
      names.push(name);
    }
    expect(new Set(names).size).toBe(2);
    const closed = await batch.close(10_000, 2_000, NOW);
    // Written as they came, not at the end: the batch itself is empty.
    expect(closed).toMatchObject({ records: 0, intentOpen: false });
    expect(closed.alone.map((a) => a.outcome)).toEqual(['written', 'written']);
    for (const name of names) expect(recordIn(store, name).send.acceptedAt).toBe(new Date(NOW).toISOString());
    expect((await index.sendsOf(pending('SMS').userId)).map((s) => s.batch).sort()).toEqual([...names].sort());
  });

  it('a record written alone whose index write failed is counted unindexed and kept as a gap: the filler indexes it', async () => {
    const store = new MemoryStore();
    const gaps = new MemoryGaps();
    const refusing = new MemoryIndex(true);
    const { batch, deps } = invocation(store, gaps, new MemoryIntents(true), refusing);
    await batch.open(['x']);
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).resolves({ MessageId: 'sns-unindexed' });
    const name = ((await send(n, deps)) as { evidence: { batch: string } }).evidence.batch;
    const [alone] = (await batch.close(10_000, 2_000, NOW)).alone;
    expect(alone).toMatchObject({ outcome: 'written', indexed: false, indexGap: 'added' });
    expect(recordIn(store, name).send.providerMessageId).toBe('sns-unindexed');
    expect([...gaps.gaps.keys()]).toEqual([batchObjectKey(name)]);

    // The sweeper's pass: the object is already there, its sends are indexed, the gap closed.
    const index = new MemoryIndex();
    const filled = await fillWithIndex(gaps, store, index);
    expect(filled).toMatchObject({ filled: 1, open: 0, errors: [] });
    expect(await index.sendsOf(n.userId)).toEqual([
      { batch: name, notificationId: n.notificationId, sha256: recordIn(store, name).entry.sha256, attempt: 1 },
    ]);
    expect(gaps.gaps.size).toBe(0);
  });

  it('a send the provider refused leaves no evidence (nothing was received)', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses
      .on(SendEmailCommand)
      .rejects(Object.assign(new Error('bad'), { name: 'InvalidParameterValue', $metadata: { httpStatusCode: 400 } }));
    const { batch, deps, store, gaps } = invocation(new MemoryStore());
    expect(await send(n, deps)).toMatchObject({ kind: 'failed' });
    expect(await batch.close(10_000, 2_000, NOW)).toMatchObject({ records: 0 });
    expect(store.objects.size + gaps.gaps.size).toBe(0);
  });
});

/**
 * One invocation of few records (a low rate's): its records go to the spool. `put` is the spool's put (it records
 * the order of the writes in `order`, beside the table's UpdateItems).
 */
function spoolingInvocation(
  put: (records: readonly SpooledRecord[]) => Promise<void>,
  intents = new MemoryIntents(),
  putFirstMs = 50,
) {
  const index = new MemoryIndex();
  const batch = new InvocationEvidence(
    {
      store: new MemoryStore(),
      gaps: new MemoryGaps(),
      intents,
      index: { index, retentionDays: 3650 },
      spool: { put },
    },
    { now: NOW, id: 'inv0000000000000002', dueMs: NOW + 90_000, spoolBelow: 25, putFirstMs },
  );
  const deps = dispatchingInto(batch);
  return { batch, deps, intents, index };
}
/** A one-time code's SMS: its SENT write would keep the redacted record's bytes for a rebuild. */
const otpSms = (): NotificationItem => ({ ...pending('SMS'), secrets: { code: '493021' } }) as NotificationItem;
/** The table's UpdateItems in order (the claim, then each transition), beside the spool's puts. */
function tableInOrder(n: NotificationItem, order: string[]) {
  let calls = 0;
  ddb.on(UpdateCommand).callsFake((input: { ExpressionAttributeValues?: Record<string, unknown> }) => {
    order.push(String(input.ExpressionAttributeValues?.[':to'] ?? 'claim'));
    return calls++ === 0 ? { Attributes: sending(n) } : {};
  });
}

describe('a low rate: an invocation of few records puts each in the spool before its SENT write, and writes no intent', () => {
  it('a spooling invocation puts the record before the SENT write and opens no intent; the SENT write keeps no record bytes', async () => {
    const n = otpSms();
    const order: string[] = [];
    tableInOrder(n, order);
    sns.on(PublishCommand).resolves({ MessageId: 'sns-first' });
    const puts: SpooledRecord[] = [];
    const { batch, deps, intents, index } = spoolingInvocation(async (records) => {
      order.push('put');
      puts.push(...records);
    });
    expect(await batch.open([n.notificationId])).toEqual({ kept: false, spooling: true });
    const r = await send(n, deps);
    expect(r).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
    expect(order).toEqual(['claim', 'put', 'SENT']);
    expect(intents.open_.size).toBe(0);
    const sent = sentWrite();
    expect(sent?.[':evidence']).toMatchObject({ batch: puts[0]?.slice, sha256: puts[0]?.sha256 });
    expect(sent?.[':evidenceRecord']).toBeUndefined();
    // At close: the index only (the put is not made again), and no intent to close.
    expect(await batch.close(10_000, 2_000, NOW)).toMatchObject({
      outcome: 'written',
      intentOpen: false,
      indexed: true,
    });
    expect(puts).toHaveLength(1);
    expect(await index.sendsOf(n.userId)).toEqual([
      { batch: puts[0]?.slice, notificationId: n.notificationId, sha256: puts[0]?.sha256, attempt: 1 },
    ]);
  });

  it('the send slot is free once the put lands, not before: the SENT write follows outside it, and `settled` says what it came to', async () => {
    const n = pending('SMS');
    const order: string[] = [];
    let answerSent: () => void = () => undefined;
    let sentAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      sentAsked = resolve;
    });
    let calls = 0;
    ddb.on(UpdateCommand).callsFake(async (input: { ExpressionAttributeValues?: Record<string, unknown> }) => {
      order.push(String(input.ExpressionAttributeValues?.[':to'] ?? 'claim'));
      if (calls++ === 0) return { Attributes: sending(n) };
      // The SENT write answers only when the test says so.
      const answered = new Promise<void>((resolve) => {
        answerSent = resolve;
      });
      sentAsked();
      await answered;
      return {};
    });
    sns.on(PublishCommand).resolves({ MessageId: 'sns-slot' });
    let answerPut: () => void = () => undefined;
    const putLands = new Promise<void>((resolve) => {
      answerPut = resolve;
    });
    // The put answers only when the test says so: its wait (PUT_FIRST_MS) is set far past the test's own, so a loaded
    // machine's slow poll cannot time the put out and take the intent path instead (CI at stop 52 did exactly that).
    const { batch, deps } = spoolingInvocation(
      async () => {
        order.push('put');
        await putLands;
      },
      undefined,
      60_000,
    );
    await batch.open([n.notificationId]);
    let free = false;
    const starting = startDispatch({ key: { pk: n.pk, sk: n.sk }, retryAt: undefined }, deps, DISPATCH_BUDGET).then(
      (r) => {
        free = true;
        return r;
      },
    );
    // As long as the send takes to reach its put: waitFor's default 1 s is a few sends on a loaded machine.
    await vi.waitFor(() => expect(order).toContain('put'), { timeout: 20_000 });
    await new Promise((resolve) => setImmediate(resolve));
    // Asked, not landed: the slot is still the send's.
    expect(free).toBe(false);
    answerPut();
    const started = await starting;
    // Free before SENT has landed: the record is kept in the spool (the sweeper finds it if this holder dies now).
    expect(started.kind).toBe('recording');
    await asked;
    expect(order).toEqual(['claim', 'put', 'SENT']);
    answerSent();
    const settled = started.kind === 'recording' ? await started.settled : started;
    expect(settled).toMatchObject({ kind: 'sent', acceptance: 'recorded', providerMessageId: 'sns-slot' });
  });

  it('a put that did not land keeps the SENT write in the slot: the send is not free until its outcome is recorded', async () => {
    const n = pending('SMS');
    tableInOrder(n, []);
    sns.on(PublishCommand).resolves({ MessageId: 'sns-kept' });
    const { batch, deps } = spoolingInvocation(async () => {
      throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    });
    await batch.open([n.notificationId]);
    const started = await startDispatch({ key: { pk: n.pk, sk: n.sk }, retryAt: undefined }, deps, DISPATCH_BUDGET);
    expect(started).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
    expect(marks()).toContain('SENT');
  });

  it('a refused spool put opens the intent and the send is still recorded, with what a rebuild needs; the intent covers the put', async () => {
    const n = otpSms();
    const order: string[] = [];
    tableInOrder(n, order);
    sns.on(PublishCommand).resolves({ MessageId: 'sns-refused' });
    const { batch, deps, intents } = spoolingInvocation(async () => {
      order.push('put');
      throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    });
    await batch.open([n.notificationId]);
    expect(await send(n, deps)).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
    expect(order).toEqual(['claim', 'put', 'SENT']);
    expect([...intents.open_.values()]).toEqual([
      expect.objectContaining({ name: batch.name, notificationIds: [n.notificationId] }),
    ]);
    expect(sentWrite()?.[':evidenceRecord']).toBeInstanceOf(Uint8Array);
    // The intent stays open: the sweeper's recovery puts the record again (recover-evidence.ts respool).
    expect(await batch.close(10_000, 2_000, NOW)).toMatchObject({ outcome: 'gap', intentOpen: true });
  });

  it('a put that does not answer holds the slot PUT_FIRST_MS at most: the intent is opened and SENT written', async () => {
    const n = pending('PUSH');
    const order: string[] = [];
    tableInOrder(n, order);
    sns.on(PublishCommand).resolves({ MessageId: 'sns-hung' });
    const { batch, deps, intents } = spoolingInvocation(() => {
      order.push('put');
      return new Promise<void>(() => undefined);
    });
    await batch.open([n.notificationId]);
    const started = Date.now();
    expect(await send(n, deps)).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(order).toEqual(['claim', 'put', 'SENT']);
    expect(intents.open_.size).toBe(1);
  });

  it('a refused put and a refused intent: SENT stands, and the record goes as a late object of its slice at close', async () => {
    const n = pending('EMAIL');
    tableInOrder(n, []);
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-late' });
    const { batch, deps } = spoolingInvocation(async () => {
      throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    }, new MemoryIntents(true));
    await batch.open([n.notificationId]);
    expect(await send(n, deps)).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
    const closed = await batch.close(10_000, 2_000, NOW);
    expect(closed).toMatchObject({ outcome: 'written', intentOpen: false });
    expect(closed.spool?.late.map((l) => [l.outcome, l.key])).toEqual([
      ['written', expect.stringMatching(/-sweeper-spooldays3650late[0-9a-f]{16}\.jsonl\.gz$/)],
    ]);
  });
});

describe('keys and stores', () => {
  it("a batch is named by its day, time, writer and id (a feedback invocation's reports too); an index ref names it and the notification", () => {
    const name = batchName('dispatch', Date.parse('2026-12-05T09:15:03.120Z'), 'a1b2c3d4e5');
    expect(name).toBe('batches/2026-12-05/091503-dispatch-a1b2c3d4e5');
    expect(batchObjectKey(name)).toBe(`${name}.jsonl.gz`);
    expect(batchName('feedback', Date.parse('2026-12-05T10:00:00Z'), 'f0f0f0f0f0')).toBe(
      'batches/2026-12-05/100000-feedback-f0f0f0f0f0',
    );
    expect(() => batchName('dispatch', NOW, '../x')).toThrow();
    // An eventId may hold a space or "#": the batch name never does, so the ref parses back whatever it holds.
    expect(parseIndexRef(indexRef(name, 'a b#c#EMAIL'))).toEqual({ batch: name, notificationId: 'a b#c#EMAIL' });
  });

  it('an eventId holding "/", "#" or ".." cannot reach another event\'s prefix', () => {
    expect(evidencePrefixOf('a/b')).toBe('sends/a%2Fb/');
    expect(evidencePrefixOf('a#EMAIL')).toBe('sends/a/EMAIL/');
    expect(evidencePrefixOf('x#y')).toBe('sends/x%23y/');
    // "." and ".." are no folder names of ours: the local store could not write them.
    expect(sendKey({ eventId: '..', channel: 'SMS', providerMessageId: '../m' })).toBe('sends/%2E%2E/SMS/..%2Fm.json');
  });

  it("a long userId in another script is named by its hash: every evidence key stays under S3's 1,024 bytes", () => {
    const key = userPointerKey(
      '顧'.repeat(128),
      sendKey({ eventId: 'e'.repeat(128), channel: 'EMAIL', providerMessageId: 'm'.repeat(80) }),
    );
    expect(key).toMatch(/^users\/sha256-[0-9a-f]{64}\//);
    expect(Buffer.byteLength(key)).toBeLessThan(1024);
    expect(userPointerKey('u-42', 'sends/e/EMAIL/m.json')).toBe('users/u-42/e/EMAIL/m.json');
  });

  it('the local folder store writes once, lists by prefix, returns the same bytes, and refuses a key leaving the folder', async () => {
    const store = new FileEvidenceStore(mkdtempSync(join(tmpdir(), 'evidence-')));
    const bytes = Buffer.from('{"é":"😀"}\n');
    expect(await store.put('sends/e1/EMAIL/m1.json', bytes, new Date())).toBe('written');
    expect(await store.put('sends/e1/EMAIL/m1.json', Buffer.from('other'), new Date())).toBe('alreadyThere');
    await store.put('sends/e10/EMAIL/m2.json', bytes, new Date());
    expect(await store.list('sends/e1/')).toEqual(['sends/e1/EMAIL/m1.json']);
    expect(Buffer.from((await store.get('sends/e1/EMAIL/m1.json')) as Uint8Array).equals(bytes)).toBe(true);
    expect(await store.get('sends/none.json')).toBeUndefined();
    await expect(store.put('sends/../../x', bytes, new Date())).rejects.toThrow(/bad evidence key/);
  });

  it('S3: written once with Object Lock, its retain-until, a SHA-256 checksum and KMS; an existing key (412) is already there', async () => {
    const store = new S3EvidenceStore(new S3Client({}), 'evidence-bucket', 'COMPLIANCE');
    s3.on(PutObjectCommand)
      .resolvesOnce({})
      .rejects(
        Object.assign(new Error('At least one of the pre-conditions you specified did not hold'), {
          name: 'PreconditionFailed',
          $metadata: { httpStatusCode: 412 },
        }),
      );
    const until = new Date(NOW + EVIDENCE_ENVIRONMENT.EVIDENCE_RETENTION_DAYS.default * 86_400_000);
    expect(await store.put('sends/e/EMAIL/m.json', Buffer.from('x'), until)).toBe('written');
    expect(await store.put('sends/e/EMAIL/m.json', Buffer.from('x'), until)).toBe('alreadyThere');
    expect(s3.commandCalls(PutObjectCommand)[0]!.args[0].input).toMatchObject({
      Bucket: 'evidence-bucket',
      IfNoneMatch: '*',
      ObjectLockMode: 'COMPLIANCE',
      ObjectLockRetainUntilDate: until,
      ChecksumAlgorithm: 'SHA256',
      ChecksumSHA256: 'LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=',
      ServerSideEncryption: 'aws:kms',
    });
    s3.on(PutObjectCommand).rejects(
      Object.assign(new Error('denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }),
    );
    await expect(store.put('sends/e/EMAIL/m2.json', Buffer.from('x'), until)).rejects.toThrow('denied');
  });
});
