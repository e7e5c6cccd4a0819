/**
 * A dispatch invocation of few records spools them (domain/evidence-spool.ts) and dies before its spool puts land, on
 * DynamoDB Local with the real ingest and sweeper handlers and the local folder store: its SENT writes already name
 * the spool slices, its intent is open. The sweeper's next run after the intent's due time rebuilds each record,
 * checks it against its SENT digest, puts it in the spool and indexes it; a later run rolls the slice into its one
 * object — and the operator's `evidence` finds every send before and after the roll-up.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { neverHeld } from '../../functions/dispatch/channel-breaker.ts';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { unpaced } from '../../functions/dispatch/pacer.ts';
import { InvocationEvidence } from '../../functions/dispatch/record-evidence.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { uniformRetention } from '../../functions/domain/evidence.ts';
import { batchObjectKey, decodeBatch } from '../../functions/domain/evidence-batch.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { apply, eraseCustomer, evidenceFound, evidenceOf } from '../../functions/operator/index.ts';
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
import { ALICE, operatorOn } from '../support/operator.ts';

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
  dir = mkdtempSync(join(tmpdir(), 'evidence-spool-recovery-'));
  handlers = await handlersOn(table, { EVIDENCE_DIR: dir, EVIDENCE_SPOOL_BELOW: '25' });
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
/** The batch and digest a notification's SENT write carried. */
const sentEvidence = async (eventId: string, channel: string) =>
  (await table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`)?.evidence as
    | { batch: string; sha256: string }
    | undefined;

/** A spool whose puts never land: the invocation dies before they would have. */
const neverLands = Object.assign(Object.create(DynamoEvidenceSpool.prototype) as DynamoEvidenceSpool, {
  put: () => new Promise<void>(() => undefined),
});

/** One dispatch invocation of few records that sends every notification of `eventIds` and dies before its spool puts land. */
async function invocationThatDies(eventIds: readonly string[], id: string) {
  const intents = new DynamoEvidenceIntents(table.doc, table.tableName);
  const batch = new InvocationEvidence(
    {
      store,
      gaps: new DynamoEvidenceGaps(table.doc, table.tableName),
      intents,
      index: { index: new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName), retentionDays: RETENTION_DAYS },
      spool: neverLands,
    },
    { now: Date.now(), id, dueMs: Date.now() + DUE_MS, spoolBelow: 25 },
  );
  const sender = new ProviderSender(new SESClient({}), new SNSClient({}), { senderEmail: SENDER });
  const notifications = new DynamoNotificationStore(table.doc, table.tableName);
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
    recovered?: { recovered: number; rebuilt: number; lost: unknown[] };
    rolledUp?: { slices: number; records: number; objects: number };
  };
};

describe('a dispatch invocation of few records that dies before its spool puts land', () => {
  it('is rebuilt into the spool once its intent is due, found by the operator before the roll-up, and rolled into its slice object after', async () => {
    await ingest(transferEvent({ eventId: 'spr-1', channels: ['EMAIL', 'SMS'], recipient: { userId: 'cust-spr-1' } }));
    const { batch, intents } = await invocationThatDies(['spr-1'], 'dyingspool0000000001');
    expect(batch.spooling).toBe(true);
    const slices = new Set<string>();
    for (const channel of ['EMAIL', 'SMS']) slices.add(String((await sentEvidence('spr-1', channel))?.batch));
    expect(slices.size).toBe(1);
    const [slice] = [...slices] as [string];
    expect(slice).toMatch(/-sweeper-spooldays2557$/);
    const spool = new DynamoEvidenceSpool(table.doc, table.tableName);
    expect(await spool.ofSlice(slice)).toEqual([]);

    const r = await sweepAfter(DUE_MS);
    expect(r.recovered).toMatchObject({ recovered: 1, rebuilt: 2, lost: [] });
    expect(await intents.overdue(Date.now() + 10 * DUE_MS, 10)).toEqual([]);
    const spooled = await spool.ofSlice(slice);
    expect(spooled.map((s) => s.notificationId).sort()).toEqual(['spr-1#EMAIL', 'spr-1#SMS']);
    for (const s of spooled) {
      const [eventId, channel] = s.notificationId.split('#') as [string, string];
      expect((await sentEvidence(eventId, channel))?.sha256).toBe(s.sha256);
    }
    const locator = new DynamoEvidenceLocator(
      table.doc,
      table.tableName,
      new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName),
    );
    const beforeRoll = await evidenceOf(store, 'spr-1', locator);
    expect(beforeRoll.map((p) => p.send.notificationId).sort()).toEqual(['spr-1#EMAIL', 'spr-1#SMS']);
    expect((await locator.ofUser('cust-spr-1')).map((s) => s.batch)).toEqual([slice, slice]);

    const rolled = await sweepAfter(180_000);
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 2, objects: 1 });
    expect(await spool.ofSlice(slice)).toEqual([]);
    const object = decodeBatch((await store.get(batchObjectKey(slice))) as Uint8Array);
    expect(object.records.map((w) => w.entry.sha256).sort()).toEqual(spooled.map((s) => s.sha256).sort());
    const afterRoll = await evidenceOf(store, 'spr-1', locator);
    expect(afterRoll.map((p) => [p.send.notificationId, p.key])).toEqual(
      beforeRoll.map((p) => [p.send.notificationId, batchObjectKey(slice)]),
    );
  });

  it("a customer's erasure waits while a send's record is on its way through the spool (its rebuild needs the data), and goes ahead once the spool holds it — the record kept, found after", async () => {
    await ingest(transferEvent({ eventId: 'spr-2', channels: ['EMAIL'], recipient: { userId: 'cust-spr-2' } }));
    await invocationThatDies(['spr-2'], 'dyingspool0000000002');
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
    const found = await evidenceFound(store, 'spr-2', locatorOn());
    expect(found.unfound).toEqual([]);
    expect(found.proofs.map((p) => p.send.notificationId)).toEqual(['spr-2#EMAIL']);
  });
});

const locatorOn = () =>
  new DynamoEvidenceLocator(
    table.doc,
    table.tableName,
    new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName),
  );
