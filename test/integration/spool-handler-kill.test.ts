/**
 * A kill on the spool path while send slots are free (docs/evidence-and-privacy.md "A spooling invocation writes no
 * intent"; functions/dispatch/send-slots.ts): the real dispatch handler, two send slots, an invocation of four
 * notifications of four events, few enough to spool. Each send's record is put in the spool before its SENT write, and
 * its slot is free once the put lands — so the next notification is claimed and sent while the first one's SENT write
 * is still pending. The whole invocation dies at its first SENT write (tools/chaos/faults.ts: every later DynamoDB call
 * of it fails), once every send's record has landed and none of their SENT writes. Then the real sweeper and its
 * roll-up run, and the test asserts what the customers received (each notification once), what the table holds (SENT,
 * from the spooled records, nothing counted lost) and what the evidence holds (each record byte for byte in its slice's
 * object, found by its customer and its event), and that a redelivery sends nothing more.
 *
 * spool-kill-points.test.ts holds the kill points of one record, driven through dispatchNotification without slots;
 * this file holds the handler's slots, where several records stand between their put and their SENT write at once.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, beforeAll, expect, inject, it, vi } from 'vitest';
import { SPOOL_CLOSED_AFTER_MS } from '../../functions/domain/evidence-spool.ts';
import { messageIdAttribute } from '../../functions/domain/message-id.ts';
import { DynamoEvidenceSpool, type SpooledRecord } from '../../functions/stores/evidence-spool.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { chaosInvoke } from '../../tools/chaos/converge.ts';
import {
  clock,
  crashPointsFor,
  injectDynamoFaults,
  invocation,
  spoolCrashPointsFor,
} from '../../tools/chaos/faults.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { type Handlers, KafkaMapping, lambdaContext } from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { expectEvidenceComplete, type SweepSummary } from '../support/spool-evidence.ts';

// The handler waits for each spool put as long as it takes (test/support/patient-spool.ts says why).
vi.mock('../../functions/dispatch/record-evidence.ts', async (importOriginal) =>
  (await import('../support/patient-spool.ts')).patientSpoolPuts(await importOriginal()),
);

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let reader: StreamReader;
let dir: string;
let store: FileEvidenceStore;

/** The dispatch invocation's send slots: two, so a freed slot is taken while the other still sends. */
const SLOTS = 2;
const LEASE_MS = 10_000;
/** Past every holder's lease: the sweeper resolves them. */
const PAST_THE_LEASE_MS = LEASE_MS + 30_000;
/** The killed invocation's name in its crash context: the watch below acts on its DynamoDB calls alone. */
const KILLED = 'dispatch killed at its first SENT write';

/**
 * What the killed invocation's DynamoDB calls did, as the watch saw them: its SENT writes are held until the record of
 * every send has landed in the spool (the slots being free at the put is what lets the later records get that far),
 * and then the first SENT write kills it.
 */
interface Watch {
  /** The records whose spool puts must land before the kill. */
  readonly records: number;
  putsLanded: number;
  sentWritesHeld: number;
  /** Claims made while a SENT write of the invocation was pending: records that took a slot freed at a put. */
  claimsWhileSentPending: number;
  readonly allPutsLanded: Promise<void>;
  readonly release: () => void;
}
let watch: Watch | undefined;

function watching(records: number): Watch {
  let release = () => {};
  const allPutsLanded = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { records, putsLanded: 0, sentWritesHeld: 0, claimsWhileSentPending: 0, allPutsLanded, release };
}

beforeAll(async () => {
  clock.install();
  table = await newLocalTable(inject('dynamoEndpoint'));
  dir = mkdtempSync(join(tmpdir(), 'spool-handler-kill-'));
  store = new FileEvidenceStore(dir);
  // SMS at least once: a send the sweeper did not find recorded would be sent again, which the test would see.
  handlers = await handlersOn(table, {
    EVIDENCE_DIR: dir,
    EVIDENCE_SPOOL_BELOW: '25',
    DISPATCH_CONCURRENCY: String(SLOTS),
    LEASE_SECONDS: String(LEASE_MS / 1000),
    CHANNEL_POLICIES: 'EMAIL=AT_MOST_ONCE,PUSH=AT_MOST_ONCE,SMS=AT_LEAST_ONCE',
  });
  reader = new StreamReader(table.endpoint, table.tableName);
  const { documentClient } = await import('../../functions/commons/dynamodb-client.ts');
  const tables = { spool: table.evidenceSpoolTableName, index: table.evidenceIndexTableName };
  // The watch, outside the faults (added first at the same step and priority: the outer one): it holds the SENT
  // writes, so the kill lands where the test says, not where the machine's speed puts it. Were a slot kept until its
  // SENT write landed, the third record would never be claimed, nor the kill come: the test would time out.
  documentClient.middlewareStack.add(
    (next, context) => async (args) => {
      const w = watch;
      if (w === undefined || invocation.getStore()?.id !== KILLED) return next(args);
      const command = String(context.commandName ?? '');
      const input = args.input as Record<string, unknown>;
      if (crashPointsFor(command, input).includes('afterClaim')) {
        if (w.sentWritesHeld > 0) w.claimsWhileSentPending++;
        return next(args);
      }
      if (crashPointsFor(command, input).includes('afterProviderAccepted')) {
        w.sentWritesHeld++;
        await w.allPutsLanded;
        return next(args);
      }
      if (!spoolCrashPointsFor(command, input, tables).includes('afterSpoolPut')) return next(args);
      const answer = await next(args);
      if (++w.putsLanded === w.records) w.release();
      return answer;
    },
    { step: 'initialize', name: 'spoolHandlerKillWatch', priority: 'high' },
  );
  // The kill: the first SENT write of the killed invocation, once the watch lets it go (every put landed).
  let killed = false;
  injectDynamoFaults(documentClient, {
    dynamo(command, input) {
      if (killed || invocation.getStore()?.id !== KILLED) return undefined;
      if (!crashPointsFor(command, input).includes('afterProviderAccepted')) return undefined;
      killed = true;
      return 'afterProviderAccepted';
    },
  });
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});
afterAll(() => reader.close());

/** Four events, each one notification to a customer of its own: two emails, two SMS. */
const EVENTS = [0, 1, 2, 3].map((i) => ({
  eventId: `hk-${i}`,
  channel: (i % 2 === 0 ? 'EMAIL' : 'SMS') as 'EMAIL' | 'SMS',
  email: `customer-${i}@example.com`,
  phoneNumber: `+81901234567${i}`,
}));

/** How many messages each address received, SES and SNS together. */
function received(): Record<string, number> {
  const to = [
    ...ses.commandCalls(SendEmailCommand).map((c) => c.args[0].input.Destination?.ToAddresses?.[0]),
    ...sns.commandCalls(PublishCommand).map((c) => c.args[0].input.PhoneNumber),
  ];
  const counts: Record<string, number> = {};
  for (const address of to) counts[String(address)] = (counts[String(address)] ?? 0) + 1;
  return counts;
}
const notification = async (eventId: string, channel: string) =>
  (await table.eventItems(eventId)).find((i) => i.sk === `NOTIFICATION#${channel}`);
const sweepAfter = async (ms: number) => {
  clock.advance(ms);
  return (await handlers.sweeper({}, lambdaContext('sweeper'))) as SweepSummary;
};
const dispatch = (records: DynamoDBRecord[], label?: string) =>
  chaosInvoke(() => handlers.dispatch({ Records: records }, lambdaContext('dispatch')), label);

it('an invocation killed at its first SENT write, while later records sent in slots freed at their puts: each customer received once, every send SENT from its spooled record, its evidence complete, nothing lost, nothing sent on redelivery', async () => {
  await new KafkaMapping(handlers.ingest).deliver(
    mskEvent(
      EVENTS.map((e, offset) => ({
        topic: 'spool-handler-kill',
        partition: 0,
        offset,
        value: transferEvent({
          eventId: e.eventId,
          channels: [e.channel],
          recipient: { userId: `cust-${e.eventId}`, email: e.email, phoneNumber: e.phoneNumber },
        }),
      })),
    ),
  );
  const records = (await reader.poll()).filter(
    (r) => r.eventName === 'INSERT' && String(r.dynamodb?.NewImage?.sk?.S).startsWith('NOTIFICATION#'),
  );
  expect(records).toHaveLength(EVENTS.length);

  watch = watching(EVENTS.length);
  const killed = await dispatch(records, KILLED);
  const seen = watch;
  watch = undefined;
  expect(killed.functionError).toBe(true);
  // Every record was put and sent; its SENT write held until then, and the first of them killed the invocation.
  expect(seen).toMatchObject({ putsLanded: EVENTS.length, sentWritesHeld: EVENTS.length });
  // The two records past the first two slots were claimed while a SENT write was pending: in slots freed at a put.
  expect(seen.claimsWhileSentPending).toBe(EVENTS.length - SLOTS);
  const addresses = EVENTS.map((e) => (e.channel === 'EMAIL' ? e.email : e.phoneNumber));
  const once = Object.fromEntries(addresses.map((a) => [a, 1]));
  expect(received()).toEqual(once);
  for (const e of EVENTS) expect(await notification(e.eventId, e.channel)).toMatchObject({ status: 'SENDING' });

  // The sweeper finds each send's record in the spool: SENT from it, none lost, none resent nor left unknown.
  const swept = await sweepAfter(PAST_THE_LEASE_MS);
  expect(swept).toMatchObject({
    resolvedSent: EVENTS.length,
    resolvedUnknown: 0,
    resolvedRetry: 0,
    evidenceUnconfirmed: 0,
  });
  const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName);
  const spooled: SpooledRecord[] = [];
  for (const e of EVENTS) {
    const item = await notification(e.eventId, e.channel);
    const evidence = item?.evidence as { batch: string; sha256: string };
    const record = (await spool.ofSlice(evidence.batch)).find((r) => r.notificationId === `${e.eventId}#${e.channel}`);
    expect(record).toBeDefined();
    const bytes = JSON.parse(String(record?.bytes.toString('utf8'))) as { providerMessageId: string };
    // The message id from the record, in the attribute its channel keeps it in (an email's: sesMessageId).
    expect(item).toMatchObject({
      status: 'SENT',
      [messageIdAttribute(e.channel)]: bytes.providerMessageId,
      evidence: { sha256: record?.sha256 },
    });
    spooled.push(record as SpooledRecord);
  }

  // Past the slice's closing: one object of the four records; the sweeper indexed them as it wrote SENT.
  const rolled = await sweepAfter(SPOOL_CLOSED_AFTER_MS + 60_000);
  expect(rolled.rolledUp).toMatchObject({ slices: 1, records: EVENTS.length, objects: 1, indexFilled: 0, errors: [] });
  for (const e of EVENTS)
    await expectEvidenceComplete(
      { table, store },
      e.eventId,
      spooled.filter((r) => r.notificationId.startsWith(`${e.eventId}#`)),
    );

  // The stream delivers the same records again: nothing is sent, and a later sweep sends nothing either.
  const again = await dispatch(records, 'dispatch redelivered');
  expect(again.functionError).toBe(false);
  await sweepAfter(PAST_THE_LEASE_MS);
  expect(received()).toEqual(once);
  for (const e of EVENTS) expect(await notification(e.eventId, e.channel)).toMatchObject({ status: 'SENT' });
});
