/**
 * SES and SNS clients for sending, created once at module scope (endpoints from AWS_ENDPOINT_URL_SES / _SNS).
 *
 * Senders run with SDK retries off: neither SES nor SNS takes an idempotency key, so an SDK retry after a lost reply
 * could deliver a second copy. Retries happen in the notification state machine, each recorded before the call.
 */
import { SESClient } from '@aws-sdk/client-ses';
import { SNSClient } from '@aws-sdk/client-sns';
import { tracer } from './powertools.ts';

export const sesClient = tracer.captureAWSv3Client(new SESClient({ maxAttempts: 1 }));
export const snsClient = tracer.captureAWSv3Client(new SNSClient({ maxAttempts: 1 }));
