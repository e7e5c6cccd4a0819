/**
 * One customer's data on DynamoDB Local, through the real ingest handler: cust-1 with a sent email (and its evidence),
 * an opted-out SMS, a refused SMS and a pending push; cust-2 with one event. For the customer's use cases and the
 * operator CLI's tests alike.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  evidenceBody,
  sendEvidence,
  sendKey,
  uniformRetention,
  userPointerKey,
} from '../../functions/domain/evidence.ts';
import type { IngestInvoker, OperatorPorts } from '../../functions/operator/index.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import { preferencesEvent, transferEvent } from './events.ts';
import { type LocalTable, newLocalTable } from './local-table.ts';
import { operatorOn } from './operator.ts';

export const NOW = Date.parse('2026-12-02T05:00:00Z');

export interface CustomerFixture {
  readonly table: LocalTable;
  readonly ingest: IngestInvoker;
  readonly evidenceDir: string;
  readonly store: FileEvidenceStore;
  readonly ports: OperatorPorts;
  /** Publishes one record value on the fixture's topic, at the next offset; answers its quarantine id. */
  publish(value: string | object): Promise<string>;
  /** The CLI's arguments that name this table and evidence folder. */
  readonly where: string[];
}

export async function customerFixture(endpoint: string, topic: string): Promise<CustomerFixture> {
  const table = await newLocalTable(endpoint);
  const ingest = await localIngest(table.endpoint, table.tableName);
  const evidenceDir = mkdtempSync(join(tmpdir(), 'evidence-'));
  const store = new FileEvidenceStore(evidenceDir);
  let offset = 0;
  const publish = async (value: string | object) => {
    const at = offset++;
    await ingest(mskEvent([{ topic, partition: 0, offset: at, value }]));
    return `${topic}#0#${at}`;
  };
  const cust = (eventId: string, over: Record<string, unknown> = {}) =>
    transferEvent({ eventId, recipient: { userId: 'cust-1' }, ...over });
  await publish(cust('c1-sent', { channels: ['EMAIL', 'SMS'], occurredAt: '2026-12-01T10:00:00Z' }));
  await publish(
    cust('c1-refused', {
      channels: ['EMAIL', 'SMS'],
      recipient: { userId: 'cust-1', phoneNumber: '090-1234-5678' },
      occurredAt: '2026-12-01T11:00:00Z',
    }),
  );
  await publish(cust('c1-pending', { channels: ['PUSH'], occurredAt: '2026-12-01T12:00:00Z' }));
  await publish(transferEvent({ eventId: 'c2-other', recipient: { userId: 'cust-2' } }));
  await publish(preferencesEvent('c1-prefs', '2026-12-01T09:00:00Z', ['SMS'], 'cust-1'));
  await setStatus(table, 'c1-sent', 'EMAIL', {
    status: 'SENT',
    attempt: 1,
    providerMessageId: 'ses-c1',
    updatedAt: '2026-12-01T10:00:02Z',
  });
  await setStatus(table, 'c1-sent', 'SMS', { status: 'SUPPRESSED', attempt: 1, suppressedReason: 'OPTED_OUT' });
  await keepEmailEvidence(store);
  return {
    table,
    ingest,
    evidenceDir,
    store,
    ports: operatorOn(table, { evidenceDir, invokeIngest: ingest, now: () => NOW }),
    publish,
    where: ['--endpoint', table.endpoint, '--table', table.tableName, '--evidence-dir', evidenceDir],
  };
}

/** A notification's status as the pipeline would have left it (out of the sweep index). */
function setStatus(table: LocalTable, eventId: string, channel: string, values: Record<string, unknown>) {
  return table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { pk: `EVENT#${eventId}`, sk: `NOTIFICATION#${channel}` },
      UpdateExpression: `SET ${Object.keys(values)
        .map((_k, i) => `#k${i} = :v${i}`)
        .join(', ')} REMOVE sweepKey, sweepAt`,
      ExpressionAttributeNames: Object.fromEntries(Object.keys(values).map((k, i) => [`#k${i}`, k])),
      ExpressionAttributeValues: Object.fromEntries(Object.values(values).map((v, i) => [`:v${i}`, v])),
    }),
  );
}

/** The evidence of the email, as dispatch writes it (the record and the customer's pointer). */
async function keepEmailEvidence(store: FileEvidenceStore) {
  const record = sendEvidence(
    {
      notificationId: 'c1-sent#EMAIL',
      eventId: 'c1-sent',
      channel: 'EMAIL',
      userId: 'cust-1',
      template: 'TransferCompleted',
      locale: 'ja',
      attempt: 1,
    },
    {
      channel: 'EMAIL',
      api: 'ses:SendEmail',
      source: 'bank <n@example.com>',
      to: ['hanako@example.com'],
      subject: 'お振込み',
      text: 't',
      html: '<p>h</p>',
      charset: 'UTF-8',
      tags: [],
    },
    'ses-c1',
    NOW,
    uniformRetention(3650),
  );
  const key = sendKey(record);
  await store.put(key, evidenceBody(record), new Date(record.retainUntil));
  await store.put(userPointerKey('cust-1', key), Buffer.from(key), new Date(record.retainUntil));
}
