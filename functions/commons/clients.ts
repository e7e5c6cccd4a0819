/**
 * AWS SDK clients, created once at module scope. Endpoints come from the SDK's own AWS_ENDPOINT_URL_<SERVICE>
 * variables, so the local run and the tests use the same code as Lambda.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESClient } from '@aws-sdk/client-ses';
import { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tracer } from './powertools.ts';

export const documentClient = DynamoDBDocumentClient.from(tracer.captureAWSv3Client(new DynamoDBClient({})), {
  marshallOptions: { removeUndefinedValues: true },
});

/**
 * Senders run with SDK retries off: neither SES nor SNS takes an idempotency key, so an SDK retry after a lost reply
 * could deliver a second copy. Retries happen in the notification state machine, each recorded before the call.
 */
export const sesClient = tracer.captureAWSv3Client(new SESClient({ maxAttempts: 1 }));
export const snsClient = tracer.captureAWSv3Client(new SNSClient({ maxAttempts: 1 }));
