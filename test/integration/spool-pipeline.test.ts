/**
 * The spool end to end, as a deployed low-rate stage runs it (EVIDENCE_SPOOL_BELOW 25): the real dispatch handler,
 * handed a stream batch of few notifications, puts each record in the spool's own table on DynamoDB Local and no
 * object; the real sweeper handler, once the minute is closed, rolls them into ONE object in the store, each record
 * byte for byte the digest its SENT write carried, and moves its cursor past the minute.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import { DeleteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { batchObjectKey, decodeBatch } from '../../functions/domain/evidence-batch.ts';
import { parseSliceBatch, SPOOL_CLOSED_AFTER_MS } from '../../functions/domain/evidence-spool.ts';
import { customerIndexPk, eventIndexPk } from '../../functions/domain/keys.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';
import { DynamoEvidenceSpool } from '../../functions/stores/evidence-spool.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { clock } from '../../tools/chaos/faults.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { type Handlers, KafkaMapping, lambdaContext } from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let reader: StreamReader;
let dir: string;

beforeAll(async () => {
  clock.install();
  table = await newLocalTable(inject('dynamoEndpoint'));
  dir = mkdtempSync(join(tmpdir(), 'spool-pipeline-'));
  handlers = await handlersOn(table, { EVIDENCE_DIR: dir, EVIDENCE_SPOOL_BELOW: '25' });
  reader = new StreamReader(table.endpoint, table.tableName);
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});
afterAll(() => reader.close());

const objectsIn = (d: string) =>
  readdirSync(d, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl.gz'));

it('the dispatch handler spools an invocation of two sends in its own table, and the sweeper handler rolls their minute into one object holding both, byte for byte', async () => {
  await new KafkaMapping(handlers.ingest).deliver(
    mskEvent([
      {
        topic: 'spool',
        partition: 0,
        offset: 0,
        value: transferEvent({ eventId: 'sp-e2e', channels: ['EMAIL', 'SMS'] }),
      },
    ]),
  );
  const records = (await reader.poll()).filter((r) => r.eventName === 'INSERT');
  await handlers.dispatch({ Records: records }, lambdaContext('dispatch'));

  const sent = (await table.eventItems('sp-e2e')).filter((i) => String(i.sk).startsWith('NOTIFICATION#'));
  expect(sent.map((i) => i.status)).toEqual(['SENT', 'SENT']);
  const evidence = sent.map((i) => i.evidence as { batch: string; sha256: string });
  const [slice] = [...new Set(evidence.map((e) => e.batch))];
  expect(evidence.every((e) => e.batch === slice)).toBe(true);
  expect(parseSliceBatch(slice ?? '')).toBeDefined();
  // In the spool's own table, not the main table; no object yet.
  const spool = new DynamoEvidenceSpool(table.doc, table.evidenceSpoolTableName);
  expect((await spool.ofSlice(slice ?? '')).map((r) => r.sha256).sort()).toEqual(evidence.map((e) => e.sha256).sort());
  expect(await new DynamoEvidenceSpool(table.doc, table.tableName).ofSlice(slice ?? '')).toEqual([]);
  expect(objectsIn(dir).filter((f) => f.includes('-dispatch-'))).toEqual([]);

  clock.advance(SPOOL_CLOSED_AFTER_MS + 60_000);
  const swept = (await handlers.sweeper({}, lambdaContext('sweeper'))) as { rolledUp?: object };
  // Its sends were indexed by the dispatch invocation: the roll-up's check finds nothing to fill.
  expect(swept.rolledUp).toMatchObject({ slices: 1, records: 2, objects: 1, errors: [], indexFilled: 0 });
  const object = await new FileEvidenceStore(dir).get(batchObjectKey(slice ?? ''));
  const held = decodeBatch(object as Uint8Array).records.map((r) => r.entry.sha256);
  expect(held.sort()).toEqual(evidence.map((e) => e.sha256).sort());
  expect((await spool.cursor()).rolledBefore).toBeGreaterThan(parseSliceBatch(slice ?? '')?.startMs ?? Infinity);
});

it('a send whose index write never landed (its invocation died after its SENT write) is indexed by the roll-up of its slice: found by customer and by event again, counted', async () => {
  await new KafkaMapping(handlers.ingest).deliver(
    mskEvent([
      {
        topic: 'spool',
        partition: 0,
        offset: 1,
        value: transferEvent({ eventId: 'sp-gap', channels: ['EMAIL', 'SMS'], recipient: { userId: 'cust-sp-gap' } }),
      },
    ]),
  );
  const records = (await reader.poll()).filter((r) => r.eventName === 'INSERT');
  await handlers.dispatch({ Records: records }, lambdaContext('dispatch'));
  const index = new DynamoEvidenceIndex(table.doc, table.evidenceIndexTableName);
  const found = async () => ({
    byCustomer: (await index.sendsOf('cust-sp-gap')).map((r) => r.notificationId).sort(),
    byEvent: (await index.sendsOfEvent('sp-gap')).map((r) => r.notificationId).sort(),
  });
  expect(await found()).toEqual({
    byCustomer: ['sp-gap#EMAIL', 'sp-gap#SMS'],
    byEvent: ['sp-gap#EMAIL', 'sp-gap#SMS'],
  });
  // As if the invocation had died between its SENT writes and its index write: no index item of the event.
  const items = await table.doc.send(new ScanCommand({ TableName: table.evidenceIndexTableName }));
  for (const { pk, sk } of items.Items ?? []) {
    if (pk === customerIndexPk('cust-sp-gap') || pk === eventIndexPk('sp-gap'))
      await table.doc.send(new DeleteCommand({ TableName: table.evidenceIndexTableName, Key: { pk, sk } }));
  }
  expect(await found()).toEqual({ byCustomer: [], byEvent: [] });

  clock.advance(SPOOL_CLOSED_AFTER_MS + 60_000);
  const swept = (await handlers.sweeper({}, lambdaContext('sweeper'))) as { rolledUp?: object };
  expect(swept.rolledUp).toMatchObject({ slices: 1, records: 2, objects: 1, errors: [], indexFilled: 2 });
  expect(await found()).toEqual({
    byCustomer: ['sp-gap#EMAIL', 'sp-gap#SMS'],
    byEvent: ['sp-gap#EMAIL', 'sp-gap#SMS'],
  });
});
