/**
 * SES and SNS clients for sending, created once per execution environment (endpoints from AWS_ENDPOINT_URL_SES / _SNS).
 *
 * Senders run with SDK retries off: neither SES nor SNS takes an idempotency key, so an SDK retry after a lost reply
 * could deliver a second copy. Retries happen in the notification state machine, each recorded before the call.
 * A connect timeout well under the send timeout makes "the connection never opened" (nothing sent, safe to retry)
 * an error of its own instead of an abort at the send timeout, which could not be told apart from "sent, no answer".
 */
import { SESClient } from '@aws-sdk/client-ses';
import { SNSClient } from '@aws-sdk/client-sns';
import { traced } from '../commons/powertools.ts';

export function createProviderClients(options: { connectTimeoutMs: number }) {
  const requestHandler = { connectionTimeout: options.connectTimeoutMs };
  return {
    ses: traced(new SESClient({ maxAttempts: 1, requestHandler })),
    sns: traced(new SNSClient({ maxAttempts: 1, requestHandler })),
  };
}
