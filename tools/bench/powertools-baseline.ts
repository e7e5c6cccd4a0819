/**
 * The baseline a team would otherwise write, measured beside notifier: Powertools Idempotency keyed on eventId
 * (DynamoDB persistence) around a function that validates the event and puts each notification item. Its writes are
 * its own, to the bench's table: the one item write of the tools apart from the bench's fixtures (seed.ts).
 */
import './env.ts';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { contactFor, route } from '../../functions/domain/routing.ts';
import type { eventValue } from './workload.ts';

export function powertoolsBaseline(client: DynamoDBClient, table: string, idemTable: string) {
  const doc = DynamoDBDocumentClient.from(client);
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'event.eventId' });
  config.registerLambdaContext({ getRemainingTimeInMillis: () => 60_000 } as never);
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName: idemTable, awsSdkV3Client: client });
  const putNotifications = makeIdempotent(
    async (record: { event: ReturnType<typeof eventValue> }) => {
      const decoded = decodeRecordValue(Buffer.from(JSON.stringify(record.event)).toString('base64'), 65_536);
      if (!isTransfer(decoded)) return 'bad';
      const routed = route(decoded.event, decoded.contactRefusals);
      if (!routed.ok) return 'bad';
      for (const channel of routed.channels) {
        const address = contactFor(decoded.event.recipient, channel) as string;
        const item = buildNotification(decoded.event, channel, address, Date.now(), { retentionDays: 35 });
        await doc.send(new PutCommand({ TableName: table, Item: item }));
      }
      return 'ok';
    },
    { persistenceStore, config },
  );
  return async (batches: MSKEvent[], concurrency: number) => {
    const limit = pLimit(concurrency);
    for (const b of batches) {
      await Promise.all(
        Object.values(b.records)
          .flat()
          .map((r) =>
            limit(() =>
              putNotifications({ event: JSON.parse(Buffer.from(r.value, 'base64').toString('utf8')) }).catch(
                (error) => {
                  // A duplicate racing its original inside one batch: the baseline answers "in progress", which a
                  // real handler turns into a redelivery. Counted here as handled, in the baseline's favour.
                  if (!(error instanceof IdempotencyAlreadyInProgressError)) throw error;
                },
              ),
            ),
          ),
      );
    }
  };
}
