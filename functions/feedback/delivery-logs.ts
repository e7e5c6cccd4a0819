/**
 * The CloudWatch Logs subscription's event, decoded: `awslogs.data` is base64 of gzip of one JSON document with the
 * log group and its log events (CloudWatch Logs User Guide, "Using CloudWatch Logs subscription filters"). A
 * CONTROL_MESSAGE (sent once when the subscription is created, to check the destination) carries no log events.
 */
import { gunzipSync } from 'node:zlib';
import * as z from 'zod/mini';

const logsEvent = z.object({ awslogs: z.object({ data: z.string() }) });
const logsData = z.object({
  messageType: z.string(),
  logGroup: z.string(),
  logEvents: z.array(z.object({ id: z.string(), message: z.string() })),
});

export interface DeliveryLogBatch {
  readonly logGroup: string;
  readonly messages: string[];
}

/** Whether the event is a CloudWatch Logs subscription's (else it is EventBridge's). */
export const isLogsEvent = (event: unknown): boolean => logsEvent.safeParse(event).success;

export class MalformedLogsEventError extends Error {
  override name = 'MalformedLogsEventError';
}

/** The batch's log group and messages; none for a control message. */
export function decodeLogsEvent(event: unknown): DeliveryLogBatch {
  const parsed = logsEvent.safeParse(event);
  if (!parsed.success) throw new MalformedLogsEventError('not a CloudWatch Logs subscription event');
  let json: unknown;
  try {
    json = JSON.parse(gunzipSync(Buffer.from(parsed.data.awslogs.data, 'base64')).toString('utf8'));
  } catch (error) {
    throw new MalformedLogsEventError(`awslogs.data is not gzip of JSON: ${(error as Error).message}`);
  }
  const data = logsData.safeParse(json);
  if (!data.success) throw new MalformedLogsEventError('awslogs.data has no logGroup and logEvents');
  if (data.data.messageType !== 'DATA_MESSAGE') return { logGroup: data.data.logGroup, messages: [] };
  return { logGroup: data.data.logGroup, messages: data.data.logEvents.map((e) => e.message) };
}
