/** A document client on DynamoDB Local that records the name of every command it sends: what a store asked, in order. */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localClient } from '../../tools/local/dynamodb-local.ts';

export function countingClient(endpoint: string): { doc: DynamoDBDocumentClient; sent: string[] } {
  const sent: string[] = [];
  const doc = DynamoDBDocumentClient.from(localClient(endpoint));
  const send = doc.send.bind(doc) as (command: unknown) => Promise<unknown>;
  doc.send = ((command: { constructor: { name: string } }) => {
    sent.push(command.constructor.name);
    return send(command);
  }) as typeof doc.send;
  return { doc, sent };
}
