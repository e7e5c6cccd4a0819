/**
 * Kill points on the spool path (docs/evidence-and-privacy.md "A spooling invocation writes no intent"), on DynamoDB
 * Local with the real sweeper handler: a dispatch holder of few records — each send's record put in the spool before
 * its SENT write, indexed at the invocation's end — dies at each point, the environment whole (tools/chaos/faults.ts:
 * every DynamoDB call after the kill fails, and so does its evidence store), or freezes there while its lease runs out.
 * Then the sweeper and its roll-up run, and each test asserts what the customer received (one message, never a second)
 * and what the evidence holds: the record stored byte for byte as the holder built it, in its slice's object, found by
 * its customer and its event, and any index item the holder missed counted and filled.
 *
 * Where another test holds a point already: test/integration/evidence-recovery.test.ts "a holder that dies before the
 * spool put lands is UNKNOWN as before (at most once)" reaches (a)'s outcome by a put that never lands and a late
 * intent; here the environment dies before the put, and no record is anywhere nor sent again on redelivery.
 * evidence-recovery.test.ts "a holder that dies after the spool put …" makes the SENT write alone throw (the sweeper's
 * SENT from the record); here the whole environment dies after the put, and the roll-up and the index are followed to
 * the end. spool-pipeline.test.ts "a send whose index
 * write never landed" deletes the index items of a holder that lived; here the holder dies at its index write.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { logger, metrics } from '../../functions/commons/powertools.ts';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { InvocationEvidence } from '../../functions/dispatch/record-evidence.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { uniformRetention } from '../../functions/domain/evidence.ts';
import { SPOOL_CLOSED_AFTER_MS } from '../../functions/domain/evidence-spool.ts';
import { DynamoEvidenceGaps } from '../../functions/stores/evidence-gaps.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';
import { DynamoEvidenceIntents } from '../../functions/stores/evidence-intents.ts';
import { DynamoEvidenceSpool, type SpooledRecord } from '../../functions/stores/evidence-spool.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import {
  clock,
  InjectedCrash,
  injectDynamoFaults,
  invocation,
  type SpoolCrashPoint,
  spoolCrashPointsFor,
} from '../../tools/chaos/faults.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { type Handlers, KafkaMapping, lambdaContext } from '../../tools/local/pipeline.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { dispatchDeps } from '../support/dispatch-deps.ts';
import { transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { expectEvidenceComplete, type SweepSummary } from '../support/spool-evidence.ts';

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let kafka: KafkaMapping;
let dir: string;
let store: FileEvidenceStore;
/** The holders' own DynamoDB client, its calls through the chaos faults: the test's reads and the sweeper's are not. */
let holderDoc: DynamoDBDocumentClient;
/** The kill point armed for the next holder call that can meet it (undefined: none). */
let armed: SpoolCrashPoint | undefined;
let offset = 0;
let invocations = 0;

const SENDER = 'notifications@bank.example';
const RETENTION_DAYS = 2_557;
/** The holders' lease: short, so a frozen holder's lease runs out well inside its spool slice's minutes. */
const LEASE_MS = 10_000;
/** Past any holder's lease: the sweeper resolves it. */
const PAST_THE_LEASE_MS = LEASE_MS + 30_000;
const AT_MOST_ONCE = { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' } as const;

beforeAll(async () => {
  clock.install();
  table = await newLocalTable(inject('dynamoEndpoint'));
  dir = mkdtempSync(join(tmpdir(), 'spool-kill-points-'));
  // At most once everywhere: a holder dead before its record was kept is UNKNOWN, never sent a second time.
  handlers = await handlersOn(table, {
    EVIDENCE_DIR: dir,
    CHANNEL_POLICIES: 'EMAIL=AT_MOST_ONCE,PUSH=AT_MOST_ONCE,SMS=AT_MOST_ONCE',
  });
  kafka = new KafkaMapping(handlers.ingest);
  store = new FileEvidenceStore(dir);
  holderDoc = DynamoDBDocumentClient.from(localClient(table.endpoint), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const tables = { spool: table.evidenceSpoolTableName, index: table.evidenceIndexTableName };
  injectDynamoFaults(holderDoc, {
    dynamo(command, input) {
      if (armed === undefined || !spoolCrashPointsFor(command, input, tables).includes(armed)) return undefined;
      const point = armed;
      armed = undefined;
      return point;
    },
  });
});

beforeEach(() => {
  armed = undefined;
  ses.reset();
  sns.reset();
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

const ingest = (eventId: string, channels: string[]) =>
  kafka.deliver(
    mskEvent([
      {
        topic: 'kill-points',
        partition: 0,
        offset: offset++,
        value: transferEvent({ eventId, channels, recipient: { userId: `cust-${eventId}` } }),
      },
    ]),
  );
const notification = async (eventId: string, channel: string) =>
  (await table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`);
const sends = () => ses.commandCalls(SendEmailCommand).length + sns.commandCalls(PublishCommand).length;

/** The evidence store as the holder's environment sees it: a dead one writes nothing there either. */
class DiesWithItsHolder extends FileEvidenceStore {
  override put(...args: Parameters<FileEvidenceStore['put']>) {
    if (invocation.getStore()?.crashed === true) throw new InjectedCrash('the execution environment is dead');
    return super.put(...args);
  }
}

interface Holding {
  /** The records the holder handed its spool, as it built them (byte for byte what the evidence must hold). */
  readonly records: SpooledRecord[];
  /** The environment died at the armed kill point. */
  readonly died: boolean;
}

/** The outcome of the holder's lease extension, once it landed (keepLeasePast: only a lease near its end is extended). */
type Extension = Promise<Awaited<ReturnType<DynamoNotificationStore['extendLease']>>>;

/**
 * Where a holder stands still in its spool put: before the put goes, or after it landed and before it hears so.
 * `beforePut` is handed the holder's lease extension, to await when the test needs it landed first.
 */
interface Freeze {
  readonly beforePut?: (extension: Extension) => Promise<void>;
  readonly afterPut?: () => Promise<void>;
}

/**
 * The holder's store, telling how its lease extension ended (the extension runs beside the spool put, which does not
 * await it): `extension` settles as the first extendLease does, a refusal or a throw included.
 */
class TellsItsExtension extends DynamoNotificationStore {
  private started: (t: Extension) => void = () => undefined;
  readonly extension: Extension = new Promise((resolve) => {
    this.started = resolve;
  });

  override extendLease(...args: Parameters<DynamoNotificationStore['extendLease']>) {
    const t = super.extendLease(...args);
    this.started(t);
    return t;
  }
}

/**
 * One dispatch invocation of few records, as the handler runs it: its batch opened (spooling: no intent), each
 * notification of `eventId` dispatched (its record put in the spool before its SENT write), then closed (the puts
 * awaited, the index written). A crash anywhere fails the rest of it, as a dying Lambda does.
 */
async function holder(eventId: string, freeze: Freeze = {}): Promise<Holding> {
  const records: SpooledRecord[] = [];
  const spool = new DynamoEvidenceSpool(holderDoc, table.evidenceSpoolTableName);
  const ctx = { crashed: false, id: `holder ${eventId} ${invocations}` };
  const id = `killpoint${String(invocations++).padStart(11, '0')}`;
  const keys = (await table.eventItems(eventId))
    .filter((i) => String(i.sk).startsWith('NOTIFICATION#'))
    .map((i) => ({ pk: String(i.pk), sk: String(i.sk) }));
  const sender = new ProviderSender(new SESClient({}), new SNSClient({}), { senderEmail: SENDER });
  const notifications = new TellsItsExtension(holderDoc, table.tableName);
  const batch = new InvocationEvidence(
    {
      store: new DiesWithItsHolder(dir),
      gaps: new DynamoEvidenceGaps(holderDoc, table.tableName),
      intents: new DynamoEvidenceIntents(holderDoc, table.tableName),
      index: { index: new DynamoEvidenceIndex(holderDoc, table.evidenceIndexTableName), retentionDays: RETENTION_DAYS },
      spool: {
        put: async (rs, nowMs) => {
          records.push(...rs);
          if (freeze.beforePut !== undefined) {
            // The put starts inside the holder's `sent`, which goes on in the same turn to check its lease
            // (keepLeasePast) and, near the lease's end, to start its extension: the holder freezes after that turn.
            await Promise.resolve();
            await freeze.beforePut(notifications.extension);
          }
          await spool.put(rs, nowMs);
          await freeze.afterPut?.();
        },
      },
    },
    // A frozen holder's timers stand still with it: its put is never taken as unanswered (putFirstMs).
    { now: Date.now(), id, dueMs: Date.now() + 90_000, spoolBelow: 25, putFirstMs: 600_000 },
  );
  // What fails after the kill is the dead environment's: a living holder's failure fails the test.
  const unlessDead = (error: unknown) => {
    if (!ctx.crashed) throw error;
  };
  await invocation.run(ctx, async () => {
    const opened = await batch.open(keys.map((k) => `${eventId}#${k.sk.slice('NOTIFICATION#'.length)}`));
    expect(opened).toEqual({ kept: false, spooling: true });
    for (const key of keys) {
      await dispatchNotification(
        { key, retryAt: undefined },
        dispatchDeps({
          store: notifications,
          sender,
          now: Date.now,
          policies: AT_MOST_ONCE,
          leaseMs: LEASE_MS,
          maxAgeMs: 86_400_000 * 3650,
          evidence: { retention: uniformRetention(RETENTION_DAYS), requestOf: (n, m) => sender.request(n, m), batch },
        }),
        { finishBy: Date.now() + 50_000, maxWaitMs: 1_000 },
      ).catch(unlessDead);
    }
    await batch.close(10_000, 2_000, Date.now()).catch(unlessDead);
  });
  return { records, died: ctx.crashed };
}

const sweep = async () => (await handlers.sweeper({}, lambdaContext('sweeper'))) as SweepSummary;
/** The event's SMS SENT from its one spooled record: the record's message id, and its slice, digest and time as evidence. */
async function expectSentFromRecord(eventId: string, records: readonly SpooledRecord[]): Promise<void> {
  const [record] = records as [SpooledRecord];
  const bytes = JSON.parse(record.bytes.toString('utf8')) as { providerMessageId: string; acceptedAt: string };
  expect(await notification(eventId, 'SMS')).toMatchObject({
    status: 'SENT',
    providerMessageId: bytes.providerMessageId,
    evidence: { batch: record.slice, sha256: record.sha256, acceptedAt: bytes.acceptedAt },
  });
}
const sweepAfter = async (ms: number) => {
  clock.advance(ms);
  return sweep();
};
/** Past the slice's closing: the next run rolls it. */
const rollUp = () => sweepAfter(SPOOL_CLOSED_AFTER_MS + 60_000);

// Each test starts with every earlier slice rolled, whatever became of the test before it: its roll-up counts its own.
afterEach(async () => {
  await rollUp();
});

const evidenceComplete = (eventId: string, held: readonly SpooledRecord[]) =>
  expectEvidenceComplete({ table, store }, eventId, held);

/** Nothing more reaches the customer: a redelivery of the holder's records and a later sweep send nothing. */
async function expectNoSecondSend(eventId: string, sent: number) {
  await holder(eventId);
  await sweepAfter(PAST_THE_LEASE_MS);
  expect(sends()).toBe(sent);
}

describe('a spooling dispatch holder killed on the spool path', () => {
  it('(a) after the provider accepted, before the spool put: UNKNOWN (at most once), sent once, and no record anywhere — none was ever written', async () => {
    await ingest('kp-a', ['SMS']);
    armed = 'beforeSpoolPut';
    const { records, died } = await holder('kp-a');
    expect(died).toBe(true);
    expect(sends()).toBe(1);
    // The record was built, and died in memory: the send's outcome was never recorded either.
    expect(records).toHaveLength(1);
    expect(await notification('kp-a', 'SMS')).toMatchObject({ status: 'SENDING' });

    const swept = await sweepAfter(PAST_THE_LEASE_MS);
    expect(swept).toMatchObject({ resolvedSent: 0, resolvedUnknown: 1, resolvedRetry: 0 });
    const item = await notification('kp-a', 'SMS');
    expect(item).toMatchObject({ status: 'UNKNOWN', lastError: 'LEASE_EXPIRED' });
    expect(item?.evidence).toBeUndefined();
    await rollUp();
    // Not in the spool, the store, the index nor a gap: the evidence of an unknown outcome is its absence.
    const [record] = records as [SpooledRecord];
    expect(await new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName).ofSlice(record.slice)).toEqual([]);
    expect(await store.list(record.slice)).toEqual([]);
    expect(await new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName).sendsOfEvent('kp-a')).toEqual([]);
    await expectNoSecondSend('kp-a', 1);
  });

  it('(b) after the put landed, before the SENT write: SENT by the sweeper from the record, indexed by it, rolled byte for byte; the roll-up finds nothing to fill', async () => {
    await ingest('kp-b', ['SMS']);
    armed = 'afterSpoolPut';
    const { records, died } = await holder('kp-b');
    expect(died).toBe(true);
    expect(sends()).toBe(1);
    expect(await notification('kp-b', 'SMS')).toMatchObject({ status: 'SENDING' });

    const swept = await sweepAfter(PAST_THE_LEASE_MS);
    // SENT from its spooled record, not from the item's message id: nothing unconfirmed.
    expect(swept).toMatchObject({ resolvedSent: 1, resolvedUnknown: 0, resolvedRetry: 0, evidenceUnconfirmed: 0 });
    await expectSentFromRecord('kp-b', records);
    const rolled = await rollUp();
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 1, objects: 1, indexFilled: 0, errors: [] });
    await evidenceComplete('kp-b', records);
    await expectNoSecondSend('kp-b', 1);
  });

  it('(c) after SENT, before the index items: SENT as the holder wrote it, and the roll-up counts and fills both sends of the event', async () => {
    await ingest('kp-c', ['EMAIL', 'SMS']);
    armed = 'beforeEvidenceIndex';
    const { records, died } = await holder('kp-c');
    expect(died).toBe(true);
    expect(sends()).toBe(2);
    expect(records).toHaveLength(2);
    for (const r of records) {
      const channel = r.notificationId.split('#')[1] as string;
      expect(await notification('kp-c', channel)).toMatchObject({
        status: 'SENT',
        evidence: { batch: r.slice, sha256: r.sha256 },
      });
    }
    const index = new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName);
    expect(await index.sendsOfEvent('kp-c')).toEqual([]);
    expect(await index.sendsOf('cust-kp-c')).toEqual([]);

    // Nothing for the lease pass: both SENT.
    expect(await sweepAfter(PAST_THE_LEASE_MS)).toMatchObject({ resolvedSent: 0, resolvedUnknown: 0 });
    const rolled = await rollUp();
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 2, objects: 1, indexFilled: 2, errors: [] });
    await evidenceComplete('kp-c', records);
    await expectNoSecondSend('kp-c', 2);
  });
});

describe('a spooling dispatch holder frozen at its spool put while its lease runs out', () => {
  it('(d) the sweeper decides first (UNKNOWN: no record yet); the put lands late and the acceptance goes on the UNKNOWN item; the record is rolled and indexed, sent once', async () => {
    await ingest('kp-d1', ['SMS']);
    let decided: SweepSummary | undefined;
    const { records, died } = await holder('kp-d1', {
      beforePut: async () => {
        decided = await sweepAfter(PAST_THE_LEASE_MS);
      },
    });
    expect(died).toBe(false);
    expect(decided).toMatchObject({ resolvedSent: 0, resolvedUnknown: 1 });
    expect(sends()).toBe(1);
    const [record] = records as [SpooledRecord];
    const bytes = JSON.parse(record.bytes.toString('utf8')) as { providerMessageId: string };
    // The holder's SENT write was fenced; its message id is on the UNKNOWN item, so a resend needs it told.
    expect(await notification('kp-d1', 'SMS')).toMatchObject({
      status: 'UNKNOWN',
      providerMessageId: bytes.providerMessageId,
    });
    const rolled = await rollUp();
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 1, objects: 1, indexFilled: 0, errors: [] });
    await evidenceComplete('kp-d1', records);
    await expectNoSecondSend('kp-d1', 1);
  });

  it("(d) the put lands late, and the sweeper looks before the frozen holder hears so: SENT from the record, the holder's SENT write fenced, the record rolled and indexed, sent once", async () => {
    await ingest('kp-d2', ['SMS']);
    let decided: SweepSummary | undefined;
    const { records, died } = await holder('kp-d2', {
      beforePut: async () => clock.advance(PAST_THE_LEASE_MS),
      afterPut: async () => {
        decided = await sweep();
      },
    });
    expect(died).toBe(false);
    expect(decided).toMatchObject({ resolvedSent: 1, resolvedUnknown: 0 });
    expect(sends()).toBe(1);
    await expectSentFromRecord('kp-d2', records);
    const rolled = await rollUp();
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 1, objects: 1, indexFilled: 0, errors: [] });
    await evidenceComplete('kp-d2', records);
    await expectNoSecondSend('kp-d2', 1);
  });
});

/**
 * A holder whose send ended within PUT_FIRST_MS + LEASE_GUARD_MS of its lease's end extends its lease before its spool
 * put (dispatch-notification.ts `keepLeasePast`) with the message id and the record's slice and digest — what its SENT
 * write would name. If its lease runs out before that write, the sweeper looks the record up by that key and writes
 * SENT with it, or — not there — SENT from the id, keeping the reference: the item names its record either way. Then
 * the record is kept (rebuilt to its digest when the put never landed) or, when nothing can rebuild it, counted lost
 * and alarmed (EvidenceLost) — never left unsaid (docs/evidence-and-privacy.md "Where such an invocation dies").
 */
describe('a spooling holder whose lease was extended with the message id and its record before its put', () => {
  /** A slow provider call: accepted 8 s into a 10 s lease, so the holder extends its lease, with the id, before its put. */
  const slowProvider = (messageId: string) =>
    sns.on(PublishCommand).callsFake(async () => {
      clock.advance(8_000);
      return { MessageId: messageId };
    });

  /** The counts written the moment they are counted (what an alarm reads) while `run` runs, by name. */
  async function countedNow<T>(run: () => Promise<T>): Promise<{ result: T; counted: string[] }> {
    const counted: string[] = [];
    const single = metrics.singleMetric.bind(metrics);
    const spy = vi.spyOn(metrics, 'singleMetric').mockImplementation(() => {
      const m = single();
      const add = m.addMetric.bind(m);
      m.addMetric = (name, unit, value) => {
        counted.push(name);
        return add(name, unit, value);
      };
      return m;
    });
    try {
      return { result: await run(), counted };
    } finally {
      spy.mockRestore();
    }
  }

  /** The event's SMS SENT from the id the extension put on it, naming the record the holder built. */
  async function expectSentNaming(eventId: string, messageId: string, records: readonly SpooledRecord[]) {
    const [record] = records as [SpooledRecord];
    expect(await notification(eventId, 'SMS')).toMatchObject({
      status: 'SENT',
      providerMessageId: messageId,
      evidence: { batch: record.slice, sha256: record.sha256 },
    });
  }

  it('(d) frozen at its put: SENT from the id naming its record; the sweeper rebuilds the record to its digest and keeps it, the late put lands on it, sent once', async () => {
    await ingest('kp-d3', ['SMS']);
    slowProvider('sns-slow');
    let decided: SweepSummary | undefined;
    const { records, died } = await holder('kp-d3', {
      beforePut: async (extension) => {
        // The extension landed before the holder froze: the sweeper finds the id and the reference on the item.
        expect(await extension).toBe('applied');
        decided = await sweepAfter(PAST_THE_LEASE_MS);
      },
    });
    expect(died).toBe(false);
    expect(decided).toMatchObject({ resolvedSent: 1, resolvedUnknown: 0, evidenceKept: 1, evidenceLost: 0 });
    expect(sends()).toBe(1);
    await expectSentNaming('kp-d3', 'sns-slow', records);
    const rolled = await rollUp();
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 1, objects: 1, errors: [] });
    await evidenceComplete('kp-d3', records);
    await expectNoSecondSend('kp-d3', 1);
  });

  it('(e) dead after the extension, before its put lands: SENT from the id naming its record, which the sweeper rebuilds to its digest and keeps — nothing lost, sent once', async () => {
    await ingest('kp-e', ['SMS']);
    slowProvider('sns-slow-e');
    const { records, died } = await holder('kp-e', {
      beforePut: async (extension) => {
        expect(await extension).toBe('applied');
        armed = 'beforeSpoolPut';
      },
    });
    expect(died).toBe(true);
    expect(sends()).toBe(1);
    expect(records).toHaveLength(1);

    const { result: swept, counted } = await countedNow(() => sweepAfter(PAST_THE_LEASE_MS));
    expect(swept).toMatchObject({ resolvedSent: 1, resolvedUnknown: 0, evidenceKept: 1, evidenceLost: 0 });
    expect(counted).not.toContain('EvidenceLost');
    await expectSentNaming('kp-e', 'sns-slow-e', records);
    const rolled = await rollUp();
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 1, objects: 1, errors: [] });
    await evidenceComplete('kp-e', records);
    await expectNoSecondSend('kp-e', 1);
  });

  it('(e) dead after the extension, before its put lands, and the spool refuses the sweeper while it keeps the rebuilt record: neither kept nor lost — counted unchecked (EvidenceUnchecked), sent once', async () => {
    await ingest('kp-e4', ['SMS']);
    slowProvider('sns-slow-e4');
    const { died } = await holder('kp-e4', {
      beforePut: async (extension) => {
        expect(await extension).toBe('applied');
        armed = 'beforeSpoolPut';
      },
    });
    expect(died).toBe(true);

    const refused = vi
      .spyOn(DynamoEvidenceSpool.prototype, 'claimUnrolled')
      .mockRejectedValue(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    const logged = vi.spyOn(logger, 'error');
    try {
      const { result: swept, counted } = await countedNow(() => sweepAfter(PAST_THE_LEASE_MS));
      expect(swept).toMatchObject({ resolvedSent: 1, evidenceKept: 0, evidenceLost: 0, evidenceUnchecked: 1 });
      expect(refused).toHaveBeenCalled();
      expect(counted.filter((n) => n === 'EvidenceUnchecked')).toHaveLength(1);
      expect(counted).not.toContain('EvidenceLost');
      // Never checked again: its own line names it (operations.md), however many the run could not check.
      expect(logged).toHaveBeenCalledWith(
        expect.stringContaining('could not be checked'),
        expect.objectContaining({ notificationId: 'kp-e4#SMS' }),
      );
    } finally {
      refused.mockRestore();
      logged.mockRestore();
    }
    await expectNoSecondSend('kp-e4', 1);
  });

  it('(e) a one-time code dead after the extension, before its put lands: its record is nowhere and nothing can rebuild it (the secret is forgotten) — counted lost and alarmed, sent once', async () => {
    await kafka.deliver(
      mskEvent([
        {
          topic: 'kill-points',
          partition: 0,
          offset: offset++,
          value: transferEvent({
            eventId: 'kp-otp',
            type: 'OneTimePasscode',
            occurredAt: new Date(Date.now()).toISOString(),
            channels: ['SMS'],
            recipient: { userId: 'cust-kp-otp' },
            data: { code: '204816', purpose: 'SIGN_IN' },
          }),
        },
      ]),
    );
    slowProvider('sns-slow-otp');
    const { records, died } = await holder('kp-otp', {
      beforePut: async (extension) => {
        expect(await extension).toBe('applied');
        armed = 'beforeSpoolPut';
      },
    });
    expect(died).toBe(true);
    expect(sends()).toBe(1);

    const { result: swept, counted } = await countedNow(() => sweepAfter(PAST_THE_LEASE_MS));
    expect(swept).toMatchObject({ resolvedSent: 1, resolvedUnknown: 0, evidenceKept: 0, evidenceLost: 1 });
    expect(counted.filter((n) => n === 'EvidenceLost')).toHaveLength(1);
    await expectSentNaming('kp-otp', 'sns-slow-otp', records);
    const rolled = await rollUp();
    expect(rolled.rolledUp).toMatchObject({ records: 0, errors: [] });
    const [record] = records as [SpooledRecord];
    expect(await new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName).ofSlice(record.slice)).toEqual([]);
    expect(await store.list(record.slice)).toEqual([]);
    await expectNoSecondSend('kp-otp', 1);
  });

  it('(b) dead after its put landed: the sweeper reads the record by the key the extension named (no minute scanned) and writes SENT with it — nothing lost', async () => {
    await ingest('kp-b2', ['SMS']);
    slowProvider('sns-slow-b2');
    const { records, died } = await holder('kp-b2', {
      beforePut: async (extension) => {
        expect(await extension).toBe('applied');
        armed = 'afterSpoolPut';
      },
    });
    expect(died).toBe(true);
    const { result: swept, counted } = await countedNow(() => sweepAfter(PAST_THE_LEASE_MS));
    expect(swept).toMatchObject({
      resolvedSent: 1,
      resolvedUnknown: 0,
      evidenceLost: 0,
      spoolLookups: { found: 1, byKey: 1, recordsRead: 0 },
    });
    expect(counted).not.toContain('EvidenceLost');
    await expectSentFromRecord('kp-b2', records);
    const rolled = await rollUp();
    expect(rolled.rolledUp).toMatchObject({ slices: 1, records: 1, objects: 1, errors: [] });
    await evidenceComplete('kp-b2', records);
    await expectNoSecondSend('kp-b2', 1);
  });
});
