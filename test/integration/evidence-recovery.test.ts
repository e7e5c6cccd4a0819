/**
 * Evidence a dying dispatch invocation could not write is recovered (docs/evidence-and-privacy.md "Never delays a
 * send, never causes a second one"), on DynamoDB Local with the real ingest and sweeper handlers and the local
 * folder store: an invocation opens its batch's intent, sends, and dies before the batch object is written. The next
 * sweeper run after the intent's due time rebuilds each record from its SENT notification, keeps it only when it
 * hashes to the digest the SENT write carried, writes the batch under the name the notifications already point to,
 * indexes the customers and closes the intent — and the operator's `evidence` finds every send. A record whose
 * rebuild would differ (its notification changed before the sweeper came) is never written: it is counted lost,
 * with the digest it should have had. An invocation of few records spools them instead (domain/evidence-spool.ts):
 * dying before its spool puts land, its records are rebuilt into the spool, found before and after the roll-up, and
 * its customer's erasure waits until the spool holds them.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { neverHeld } from '../../functions/dispatch/channel-breaker.ts';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { unpaced } from '../../functions/dispatch/pacer.ts';
import { InvocationEvidence } from '../../functions/dispatch/record-evidence.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { uniformRetention } from '../../functions/domain/evidence.ts';
import { batchObjectKey, decodeBatch } from '../../functions/domain/evidence-batch.ts';
import { parseSliceBatch } from '../../functions/domain/evidence-spool.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { apply, eraseCustomer, evidenceFound, evidenceOf, preview, resend } from '../../functions/operator/index.ts';
import { DynamoEventStore } from '../../functions/stores/event-store.ts';
import { DynamoEvidenceGaps } from '../../functions/stores/evidence-gaps.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';
import { DynamoEvidenceIntents } from '../../functions/stores/evidence-intents.ts';
import { DynamoEvidenceLocator } from '../../functions/stores/evidence-reader.ts';
import { DynamoEvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { clock } from '../../tools/chaos/faults.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { type Handlers, KafkaMapping, lambdaContext } from '../../tools/local/pipeline.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE, ALICE_ID, operatorOn, resendNow } from '../support/operator.ts';

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let kafka: KafkaMapping;
let dir: string;
let store: FileEvidenceStore;
let offset = 0;
/** What the local run's functions render and send with (tools/local/pipeline.ts): the sweeper rebuilds with the same. */
const SENDER = 'notifications@bank.example';
const RETENTION_DAYS = 2_557;
const DUE_MS = 90_000;

beforeAll(async () => {
  clock.install();
  table = await newLocalTable(inject('dynamoEndpoint'));
  dir = mkdtempSync(join(tmpdir(), 'evidence-recovery-'));
  handlers = await handlersOn(table, { EVIDENCE_DIR: dir });
  kafka = new KafkaMapping(handlers.ingest);
  store = new FileEvidenceStore(dir);
});

beforeEach(() => {
  ses.reset();
  sns.reset();
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

const ingest = (value: object) =>
  kafka.deliver(mskEvent([{ topic: 'recovery', partition: 0, offset: offset++, value }]));
const notification = async (eventId: string, channel: string) =>
  (await table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`);

/** A spool whose puts never land: an invocation of few records dies before they would have. */
const neverLands = Object.assign(Object.create(DynamoEvidenceSpool.prototype) as DynamoEvidenceSpool, {
  put: () => new Promise<void>(() => undefined),
});

/**
 * One dispatch invocation that sends every notification of `eventIds` and dies before writing its batch — or, as one
 * of few records that spools them (`spooling`), before its spool puts land.
 */
async function invocationThatDies(
  eventIds: readonly string[],
  id: string,
  spooling: boolean | Pick<DynamoEvidenceSpool, 'put'> = false,
  notifications = new DynamoNotificationStore(table.doc, table.tableName),
) {
  const intents = new DynamoEvidenceIntents(table.doc, table.tableName);
  const batch = new InvocationEvidence(
    {
      store,
      gaps: new DynamoEvidenceGaps(table.doc, table.tableName),
      intents,
      index: { index: new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName), retentionDays: RETENTION_DAYS },
      ...(spooling === false ? {} : { spool: spooling === true ? neverLands : spooling }),
    },
    {
      now: Date.now(),
      id,
      dueMs: Date.now() + DUE_MS,
      spoolBelow: spooling === false ? 0 : 25,
      // DynamoDB Local on a loaded machine can miss PUT_FIRST_MS and INTENT_WAIT_MS (real time): a put that lands and
      // the intent are awaited as long as they take, or the invocation leaves the path its test is about.
      intentWaitMs: 600_000,
      ...(typeof spooling === 'object' ? { putFirstMs: 600_000 } : {}),
    },
  );
  const sender = new ProviderSender(new SESClient({}), new SNSClient({}), { senderEmail: SENDER });
  const targets = [];
  for (const eventId of eventIds) {
    for (const item of await table.eventItems(eventId)) {
      if (String(item.sk).startsWith('NOTIFICATION#')) targets.push({ pk: String(item.pk), sk: String(item.sk) });
    }
  }
  await batch.open(targets.map((k) => `${k.pk.slice('EVENT#'.length)}#${k.sk.slice('NOTIFICATION#'.length)}`));
  for (const key of targets) {
    const r = await dispatchNotification(
      { key, retryAt: undefined },
      {
        store: notifications,
        sender,
        pacer: unpaced,
        breaker: neverHeld,
        now: Date.now,
        sleep: async () => undefined,
        policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
        leaseMs: 120_000,
        sendTimeoutMs: 5_000,
        maxSendAttempts: 5,
        retryBaseMs: 1_000,
        retryMaxMs: 300_000,
        nearRetryMs: 2_000,
        pendingThresholdMs: DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs,
        maxAgeMs: 86_400_000 * 3650,
        brand: EXAMPLE_BRAND,
        evidence: {
          retention: uniformRetention(RETENTION_DAYS),
          requestOf: (n, m) => sender.request(n, m),
          batch,
        },
      },
      { finishBy: Date.now() + 50_000, maxWaitMs: 1_000 },
    );
    expect(r.kind).toBe('sent');
  }
  // The invocation dies here: its records were in memory, its batch is never written, its intent stays open.
  return { batch, intents };
}

const sweepAfter = async (ms: number) => {
  clock.advance(ms);
  return (await handlers.sweeper({}, lambdaContext('sweeper'))) as {
    recovered?: { recovered: number; rebuilt: number; lost: { notificationId: string; sha256: string }[] };
    rolledUp?: { slices: number; records: number; objects: number };
  };
};

describe('a dispatch invocation that dies after its sends and before its batch', () => {
  it('is recovered by the sweeper after the intent is due: every record byte for byte as sent, indexed, and found', async () => {
    for (const eventId of ['rec-1', 'rec-2']) {
      await ingest(
        transferEvent({ eventId, channels: ['EMAIL', 'PUSH', 'SMS'], recipient: { userId: `cust-${eventId}` } }),
      );
    }
    const { batch, intents } = await invocationThatDies(['rec-1', 'rec-2'], 'dying00000000000001');
    expect(batch.records).toHaveLength(6);
    expect(await store.list('batches/')).toEqual([]);

    // Not before the intent is due: the invocation might still be writing.
    expect((await sweepAfter(1_000)).recovered).toMatchObject({ recovered: 0 });
    const r = await sweepAfter(DUE_MS);
    expect(r.recovered).toMatchObject({ recovered: 1, rebuilt: 6, lost: [] });
    expect(await intents.overdue(Date.now() + 10 * DUE_MS, 10)).toEqual([]);

    const object = await store.get(batchObjectKey(batch.name));
    const written = decodeBatch(object as Uint8Array).records;
    // Byte for byte what the dying invocation held, each matching the digest on its SENT notification.
    expect(written.map((w) => w.bytes.toString('base64')).sort()).toEqual(
      batch.records.map((p) => p.bytes.toString('base64')).sort(),
    );
    for (const w of written) {
      const [eventId, channel] = w.entry.notificationId.split('#') as [string, string];
      expect((await notification(eventId, channel))?.evidence).toMatchObject({
        batch: batch.name,
        sha256: w.entry.sha256,
      });
    }
    const locator = new DynamoEvidenceLocator(
      table.doc,
      table.tableName,
      new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName),
      table.evidenceSpoolTableName,
    );
    expect((await evidenceOf(store, 'rec-2', locator)).map((p) => p.send.notificationId).sort()).toEqual([
      'rec-2#EMAIL',
      'rec-2#PUSH',
      'rec-2#SMS',
    ]);
    // Found through the customer's index alone, as after the table's items expired.
    expect((await locator.ofUser('cust-rec-1')).map((s) => s.notificationId).sort()).toEqual([
      'rec-1#EMAIL',
      'rec-1#PUSH',
      'rec-1#SMS',
    ]);
  });

  it('one-time codes sent by SMS and push are rebuilt from the redacted bytes their SENT write kept, never lost', async () => {
    await ingest(
      transferEvent({
        eventId: 'otp-1',
        type: 'OneTimePasscode',
        occurredAt: new Date(Date.now()).toISOString(),
        channels: ['SMS', 'PUSH'],
        recipient: { userId: 'cust-otp-1' },
        data: { code: '204816', purpose: 'SIGN_IN' },
      }),
    );
    const { batch } = await invocationThatDies(['otp-1'], 'dying00000000000003');
    expect(batch.records).toHaveLength(2);
    for (const channel of ['SMS', 'PUSH']) {
      const item = await notification('otp-1', channel);
      // The secret is forgotten; what is kept is the record already redacted.
      expect(item?.secrets).toBeUndefined();
      expect(item?.evidenceRecord).toBeInstanceOf(Uint8Array);
    }
    // Kept for the rebuild, never shown: an operator's view of the event leaves the bytes out.
    const view = await operatorOn(table).events.read('otp-1');
    for (const n of view.notifications) expect(n).not.toHaveProperty('evidenceRecord');
    const r = await sweepAfter(DUE_MS + 1_000);
    expect(r.recovered).toMatchObject({ recovered: 1, rebuilt: 2, lost: [] });
    const written = decodeBatch((await store.get(batchObjectKey(batch.name))) as Uint8Array).records;
    expect(written.map((w) => w.bytes.toString('base64')).sort()).toEqual(
      batch.records.map((p) => p.bytes.toString('base64')).sort(),
    );
    for (const w of written) expect(w.bytes.toString('utf8')).not.toContain('204816');
  });

  it('a record whose notification changed before the rebuild is not written: counted lost with the digest it should have had', async () => {
    await ingest(transferEvent({ eventId: 'rec-3', channels: ['EMAIL', 'SMS'], recipient: { userId: 'cust-rec-3' } }));
    const { batch } = await invocationThatDies(['rec-3'], 'dying00000000000002');
    const sms = batch.records.find((p) => p.record.channel === 'SMS');
    // As a template deployed in between would: the SMS would render otherwise now.
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: 'EVENT#rec-3', sk: 'NOTIFICATION#SMS' },
        UpdateExpression: 'SET #data.amount = :amount',
        ExpressionAttributeNames: { '#data': 'data' },
        ExpressionAttributeValues: { ':amount': '99999' },
      }),
    );
    const r = await sweepAfter(DUE_MS + 1_000);
    expect(r.recovered).toMatchObject({ recovered: 1, rebuilt: 1 });
    expect(r.recovered?.lost).toEqual([expect.objectContaining({ notificationId: 'rec-3#SMS', sha256: sms?.sha256 })]);
    const written = decodeBatch((await store.get(batchObjectKey(batch.name))) as Uint8Array).records;
    expect(written.map((w) => w.entry.notificationId)).toEqual(['rec-3#EMAIL']);
  });

  it('a sent notification whose item is gone before the rebuild (expired, deleted) is counted lost, never dropped unsaid', async () => {
    await ingest(transferEvent({ eventId: 'rec-7', channels: ['EMAIL', 'SMS'], recipient: { userId: 'cust-rec-7' } }));
    const { batch } = await invocationThatDies(['rec-7'], 'dying00000000000007');
    await table.doc.send(
      new DeleteCommand({ TableName: table.tableName, Key: { pk: 'EVENT#rec-7', sk: 'NOTIFICATION#SMS' } }),
    );
    const r = await sweepAfter(DUE_MS + 1_000);
    expect(r.recovered).toMatchObject({ recovered: 1, rebuilt: 1 });
    expect(r.recovered?.lost).toEqual([
      expect.objectContaining({ notificationId: 'rec-7#SMS', batch: batch.name, reason: 'ITEM_GONE' }),
    ]);
  });
});

const locatorOn = (t: LocalTable) =>
  new DynamoEvidenceLocator(
    t.doc,
    t.tableName,
    new DynamoEvidenceIndex(t.doc, t.evidenceIndexTableName),
    t.evidenceSpoolTableName,
  );

describe('finding a send after the table forgot it, and a send whose batch is not written yet', () => {
  it("an event's evidence is found by its id alone after its inbox and notification items are gone", async () => {
    await ingest(transferEvent({ eventId: 'rec-5', channels: ['EMAIL', 'SMS'], recipient: { userId: 'cust-rec-5' } }));
    const { batch } = await invocationThatDies(['rec-5'], 'living00000000000005');
    // This invocation lives: its batch lands, with the customer's and the event's index items.
    expect(await batch.close(10_000, 2_000, Date.now())).toMatchObject({ outcome: 'written', intentOpen: false });
    for (const item of await table.eventItems('rec-5')) {
      await table.doc.send(
        new DeleteCommand({ TableName: table.tableName, Key: { pk: String(item.pk), sk: String(item.sk) } }),
      );
    }
    expect(await table.eventItems('rec-5')).toEqual([]);
    const found = await evidenceFound(store, 'rec-5', locatorOn(table));
    expect(found.unfound).toEqual([]);
    expect(found.proofs.map((p) => p.send.notificationId)).toEqual(['rec-5#EMAIL', 'rec-5#SMS']);
    // Each checked against the digest the index kept from the SENT write.
    for (const p of found.proofs) {
      expect(p.sha256).toBe(batch.records.find((r) => r.record.notificationId === p.send.notificationId)?.sha256);
      expect(p.warnings).toBeUndefined();
    }
  });

  it('a send whose batch is not in the store is "named in batch X; not in the store yet", pending its recovery — never "not sent"; its customer\'s erasure waits for it', async () => {
    await ingest(transferEvent({ eventId: 'rec-6', channels: ['EMAIL'], recipient: { userId: 'cust-rec-6' } }));
    const { batch } = await invocationThatDies(['rec-6'], 'dying00000000000006');
    const [proof] = batch.records;
    const found = await evidenceFound(store, 'rec-6', locatorOn(table));
    expect(found.proofs).toEqual([]);
    expect(found.unfound).toEqual([
      {
        notificationId: 'rec-6#EMAIL',
        batch: batch.name,
        sha256: proof?.sha256,
        state: 'pending',
        says: expect.stringMatching(
          new RegExp(
            `^named in batch ${batch.name} \\(sha256 ${proof?.sha256}\\); not in the store yet: a gap, pending recovery, or lost — its intent is open`,
          ),
        ),
      },
    ]);
    // The erasure cannot take the data the rebuild needs: the SENT email waits, and says why.
    const ports = operatorOn(table);
    const erased = await apply(eraseCustomer, ports, { userId: 'cust-rec-6' }, ALICE);
    expect(erased.erased).toEqual([]);
    expect(erased.kept).toEqual([
      { notificationId: 'rec-6#EMAIL', status: 'SENT', waits: expect.stringContaining(`evidence batch ${batch.name}`) },
    ]);
    expect(await notification('rec-6', 'EMAIL')).toMatchObject({ userId: 'cust-rec-6' });
    // Once the sweeper rebuilt the batch, the send is found and the erasure goes ahead.
    expect((await sweepAfter(DUE_MS + 1_000)).recovered).toMatchObject({ rebuilt: 1, lost: [] });
    expect((await evidenceFound(store, 'rec-6', locatorOn(table))).proofs).toHaveLength(1);
    expect((await apply(eraseCustomer, ports, { userId: 'cust-rec-6' }, ALICE)).erased).toEqual(['rec-6#EMAIL']);
  });
});

describe('a resend of a send whose evidence batch is not written yet', () => {
  it("is refused while the batch's intent is open — in the preview and on --confirm, saying why — and goes ahead once the sweeper wrote the batch, which holds the first send's record", async () => {
    await ingest(transferEvent({ eventId: 'rec-8', channels: ['SMS'], recipient: { userId: 'cust-rec-8' } }));
    const { batch } = await invocationThatDies(['rec-8'], 'dying00000000000008');
    const [first] = batch.records;
    const sent = await notification('rec-8', 'SMS');
    const request = { notificationId: 'rec-8#SMS', despiteAccepted: String(sent?.providerMessageId) };
    const ports = operatorOn(table);
    expect(await preview(resend, ports, request)).toEqual({
      ok: false,
      refusal: {
        code: 'EVIDENCE_PENDING',
        message: expect.stringContaining(`its evidence batch ${batch.name} is not written yet`),
      },
    });
    await expect(resendNow(ports, request)).rejects.toMatchObject({ refusal: { code: 'EVIDENCE_PENDING' } });
    expect(await notification('rec-8', 'SMS')).toMatchObject({ status: 'SENT', evidence: { batch: batch.name } });

    const r = await sweepAfter(DUE_MS + 1_000);
    expect(r.recovered).toMatchObject({ recovered: 1, rebuilt: 1, lost: [] });
    expect((await resendNow(ports, request))?.status).toBe('PENDING');
    // The first send's record, the one a dispute asks about, is in its batch.
    const written = decodeBatch((await store.get(batchObjectKey(batch.name))) as Uint8Array).records;
    expect(written.map((w) => w.entry.sha256)).toEqual([first?.sha256]);
  });

  it('a resend that took the send off its item before the rebuild (written past the check) is counted lost, never dropped unsaid', async () => {
    await ingest(transferEvent({ eventId: 'rec-9', channels: ['EMAIL', 'SMS'], recipient: { userId: 'cust-rec-9' } }));
    const { batch } = await invocationThatDies(['rec-9'], 'dying00000000000009');
    const sms = (await notification('rec-9', 'SMS')) as Record<string, unknown>;
    // The table's own resend write, as a resend that raced the intent's check would make it.
    const events = new DynamoEventStore(table.doc, table.tableName);
    const item = (await events.read('rec-9')).notifications.find((n) => n.notificationId === 'rec-9#SMS');
    const written = await events.resend(
      item as never,
      { by: ALICE_ID, reason: 'raced', accepted: String(sms.providerMessageId) },
      Date.now(),
    );
    expect(written.result).toBe('applied');
    const r = await sweepAfter(DUE_MS + 1_000);
    expect(r.recovered).toMatchObject({ recovered: 1, rebuilt: 1 });
    expect(r.recovered?.lost).toEqual([
      expect.objectContaining({
        notificationId: 'rec-9#SMS',
        batch: batch.name,
        providerMessageId: sms.providerMessageId,
        reason: 'RESENT',
      }),
    ]);
  });
});

describe('a dispatch invocation of few records that dies before its spool puts land', () => {
  it('is rebuilt into the spool once its intent is due, found by the operator before the roll-up, and rolled into its slice object after', async () => {
    await ingest(transferEvent({ eventId: 'spr-1', channels: ['EMAIL', 'SMS'], recipient: { userId: 'cust-spr-1' } }));
    const { batch, intents } = await invocationThatDies(['spr-1'], 'dyingspool0000000001', true);
    expect(batch.spooling).toBe(true);
    const slices = new Set<string>();
    for (const channel of ['EMAIL', 'SMS'])
      slices.add(String(((await notification('spr-1', channel))?.evidence as { batch?: string } | undefined)?.batch));
    expect(slices.size).toBe(1);
    const [slice] = [...slices] as [string];
    expect(slice).toMatch(/-sweeper-spooldays2557$/);
    const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName);
    expect(await spool.ofSlice(slice)).toEqual([]);

    const r = await sweepAfter(DUE_MS);
    expect(r.recovered).toMatchObject({ recovered: 1, rebuilt: 2, lost: [] });
    expect(await intents.overdue(Date.now() + 10 * DUE_MS, 10)).toEqual([]);
    const spooled = await spool.ofSlice(slice);
    expect(spooled.map((s) => s.notificationId).sort()).toEqual(['spr-1#EMAIL', 'spr-1#SMS']);
    for (const s of spooled) {
      const [eventId, channel] = s.notificationId.split('#') as [string, string];
      expect(((await notification(eventId, channel))?.evidence as { sha256?: string } | undefined)?.sha256).toBe(
        s.sha256,
      );
    }
    const locator = new DynamoEvidenceLocator(
      table.doc,
      table.tableName,
      new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName),
      table.evidenceSpoolTableName,
    );
    const beforeRoll = await evidenceOf(store, 'spr-1', locator);
    expect(beforeRoll.map((p) => p.send.notificationId).sort()).toEqual(['spr-1#EMAIL', 'spr-1#SMS']);
    expect((await locator.ofUser('cust-spr-1')).map((s) => s.batch)).toEqual([slice, slice]);

    const rolled = await sweepAfter(180_000);
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 2, objects: 1 });
    // Rolled: the cursor is past the slice (its items expire by the table's TTL, never deleted).
    expect((await spool.cursor()).rolledBefore).toBeGreaterThan(parseSliceBatch(slice)?.startMs ?? Infinity);
    const object = decodeBatch((await store.get(batchObjectKey(slice))) as Uint8Array);
    expect(object.records.map((w) => w.entry.sha256).sort()).toEqual(spooled.map((s) => s.sha256).sort());
    const afterRoll = await evidenceOf(store, 'spr-1', locator);
    expect(afterRoll.map((p) => [p.send.notificationId, p.key])).toEqual(
      beforeRoll.map((p) => [p.send.notificationId, batchObjectKey(slice)]),
    );
  });

  it("a customer's erasure waits while a send's record is on its way through the spool (its rebuild needs the data), and goes ahead once the spool holds it — the record kept, found after", async () => {
    await ingest(transferEvent({ eventId: 'spr-2', channels: ['EMAIL'], recipient: { userId: 'cust-spr-2' } }));
    await invocationThatDies(['spr-2'], 'dyingspool0000000002', true);
    const ports = operatorOn(table, { evidenceDir: dir, now: Date.now });
    const waiting = await apply(eraseCustomer, ports, { userId: 'cust-spr-2' }, ALICE);
    expect(waiting.erased).toEqual([]);
    expect(waiting.kept).toEqual([
      {
        notificationId: 'spr-2#EMAIL',
        status: 'SENT',
        waits: expect.stringMatching(/evidence batch .*-sweeper-spooldays2557 /),
      },
    ]);
    // The sweeper rebuilds it into the spool: held there, the erasure goes ahead and the record stays evidence.
    expect((await sweepAfter(DUE_MS)).recovered).toMatchObject({ rebuilt: 1, lost: [] });
    expect((await apply(eraseCustomer, ports, { userId: 'cust-spr-2' }, ALICE)).erased).toEqual(['spr-2#EMAIL']);
    await sweepAfter(180_000);
    const found = await evidenceFound(store, 'spr-2', locatorOn(table));
    expect(found.unfound).toEqual([]);
    expect(found.proofs.map((p) => p.send.notificationId)).toEqual(['spr-2#EMAIL']);
  });
});

/** A holder that dies at its SENT write: the provider accepted, and nothing after the spool put lands. */
class DiesAtSent extends DynamoNotificationStore {
  override async markSent(): Promise<never> {
    throw new Error('the holder died here');
  }
}

describe('a dispatch holder of few records that dies at its SENT write', () => {
  it("a holder that dies after the spool put is SENT by the sweeper with the spooled record's message id and digest, indexed", async () => {
    await ingest(transferEvent({ eventId: 'spf-1', channels: ['SMS'], recipient: { userId: 'cust-spf-1' } }));
    const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName);
    const { batch, intents } = await invocationThatDies(
      ['spf-1'],
      'dyingafterput0000001',
      spool,
      new DiesAtSent(table.doc, table.tableName),
    );
    expect(batch.spooling).toBe(true);
    // No intent: the record was put before the SENT write that never landed.
    expect(await intents.overdue(Date.now() + 10 * DUE_MS, 10)).toEqual([]);
    const dying = await notification('spf-1', 'SMS');
    expect(dying).toMatchObject({ status: 'SENDING' });
    // Its invocation's minute: this one, or the one before if a minute began since.
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const [spooled] = await spool
      .ofMinutes([minute - 60_000, minute])
      .then((rs) => rs.filter((r) => r.notificationId === 'spf-1#SMS'));
    expect(spooled).toBeDefined();

    const r = (await sweepAfter(130_000)) as { resolvedSent?: number; resolvedUnknown?: number };
    expect(r).toMatchObject({ resolvedSent: 1, resolvedUnknown: 0 });
    const sent = await notification('spf-1', 'SMS');
    const record = JSON.parse(String(spooled?.bytes)) as { providerMessageId: string; acceptedAt: string };
    expect(record.providerMessageId).toMatch(/^sns-/);
    expect(sent).toMatchObject({
      status: 'SENT',
      providerMessageId: record.providerMessageId,
      evidence: { batch: spooled?.slice, sha256: spooled?.sha256, acceptedAt: record.acceptedAt },
    });
    expect(sent?.leaseUntil).toBeUndefined();
    expect((await locatorOn(table).ofUser('cust-spf-1')).map((s) => [s.batch, s.notificationId])).toEqual([
      [spooled?.slice, 'spf-1#SMS'],
    ]);
  });

  it('a holder that dies before the spool put lands is UNKNOWN as before (at most once), its intent naming nothing sent', async () => {
    await ingest(transferEvent({ eventId: 'spf-2', channels: ['SMS'], recipient: { userId: 'cust-spf-2' } }));
    await invocationThatDies(['spf-2'], 'dyingbeforeput000001', true, new DiesAtSent(table.doc, table.tableName));
    const r = (await sweepAfter(130_000)) as { resolvedSent?: number; resolvedUnknown?: number };
    expect(r).toMatchObject({ resolvedSent: 0, resolvedUnknown: 1 });
    expect(await notification('spf-2', 'SMS')).toMatchObject({ status: 'UNKNOWN', lastError: 'LEASE_EXPIRED' });
  });
});
