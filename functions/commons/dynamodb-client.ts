/**
 * The DynamoDB document client, created once at module scope. The endpoint comes from the SDK's own
 * AWS_ENDPOINT_URL_DYNAMODB, so the local run and the tests use the same code as Lambda.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { traced } from './powertools.ts';

export const documentClient = DynamoDBDocumentClient.from(traced(new DynamoDBClient({})), {
  marshallOptions: { removeUndefinedValues: true },
});
