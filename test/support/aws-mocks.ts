/**
 * The AWS SDK mocks the tests share (aws-sdk-client-mock): one place that says which clients a test replaces. Each
 * test file gets its own module instance (vitest isolates files), so the mocks are per file; reset them in beforeEach
 * as before.
 */
import { SESClient } from '@aws-sdk/client-ses';
import { SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';

/** SES and SNS replaced for every client of their classes: the providers a dispatch test must never reach. */
export function providerMocks() {
  return { ses: mockClient(SESClient), sns: mockClient(SNSClient) };
}

/** Every DynamoDB document client replaced: unit tests of the adapters, answering what DynamoDB would. */
export const documentClientMock = () => mockClient(DynamoDBDocumentClient);
