/**
 * The real handlers on a fresh DynamoDB Local table behind the emulated event source mappings (tools/local/pipeline.ts), as
 * the integration tests drive them: records in through the MSK mapping, then the stream and the sweeper until
 * nothing is in flight. Providers are the tests' own (aws-sdk-client-mock on the SES and SNS clients).
 */
import { inject } from 'vitest';
import { mskEvent } from '../../tools/local/msk.ts';
import {
  converge,
  type Handlers,
  KafkaMapping,
  type LocalEnvironment,
  loadHandlers,
  StreamMapping,
} from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { type LocalTable, newLocalTable } from './local-table.ts';

export interface LocalPipeline {
  readonly table: LocalTable;
  readonly handlers: Handlers;
  readonly reader: StreamReader;
  readonly stream: StreamMapping;
  readonly kafka: KafkaMapping;
  /** Delivers the values as one MSK batch at the next offsets, then runs dispatch and the sweeper to convergence. */
  ingest(values: object[]): Promise<void>;
  /** Dispatch and the sweeper until no notification is PENDING or SENDING. */
  converge(): Promise<void>;
}

export async function localPipeline(extra: LocalEnvironment['extra'] = {}): Promise<LocalPipeline> {
  const table = await newLocalTable(inject('dynamoEndpoint'));
  const handlers = await loadHandlers({
    dynamoEndpoint: table.endpoint,
    // Never reached: the tests mock the SES and SNS clients.
    sesEndpoint: 'http://127.0.0.1:9',
    snsEndpoint: 'http://127.0.0.1:9',
    tableName: table.tableName,
    extra: { PENDING_THRESHOLD_SECONDS: '1', ...extra },
  });
  const reader = new StreamReader(table.endpoint, table.tableName);
  const stream = new StreamMapping(reader, handlers.dispatch);
  const kafka = new KafkaMapping(handlers.ingest);
  const env = { dynamoEndpoint: table.endpoint, tableName: table.tableName };
  let offset = 0;
  const settle = () => converge(stream, handlers, env);
  return {
    table,
    handlers,
    reader,
    stream,
    kafka,
    converge: settle,
    ingest: async (values) => {
      await kafka.deliver(
        mskEvent(values.map((value) => ({ topic: 'banking.transfers', partition: 0, offset: offset++, value }))),
      );
      await settle();
    },
  };
}
