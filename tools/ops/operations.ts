/**
 * What an operator does to a running notifier, as functions over the AWS clients they need (so each is tested on
 * DynamoDB Local, or with aws-sdk-client-mock for S3 and CloudWatch Logs). The command line is tools/ops/cli.ts.
 *
 * - inspect: everything the table knows about one event (one Query on its partition).
 * - quarantine: the quarantined records, with reason and detail, newest first.
 * - replayQuarantine / replayFailedBatches: records fed back through the ingest function, as the MSK mapping would
 *   deliver them. The inbox makes anything already processed a duplicate: a replay never sends twice.
 * - resend: the one deliberate way to send a FAILED or UNKNOWN notification again: recorded on the item (who, when,
 *   why, what it was), refused for anything in flight or erased, and refused for any notification whose acceptance by
 *   the provider is known (SENT, or an UNKNOWN that learnt its message id late) unless the operator names that message
 *   id (functions/domain/resend.ts).
 * - trace: the Logs Insights query over the three log groups for one event, run and printed.
 */

import { type CloudWatchLogsClient, GetQueryResultsCommand, StartQueryCommand } from '@aws-sdk/client-cloudwatch-logs';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import type { Channel } from '../../functions/domain/channels.ts';
import { decodeRecordValue } from '../../functions/domain/event/decode.ts';
import {
  eventPk,
  INBOX_SK,
  type KafkaSource,
  parseNotificationId as notificationOfId,
  notificationSk,
  QUARANTINE_SK,
  quarantineId,
  quarantinePk,
  parseQuarantineId as quarantineSourceOf,
} from '../../functions/domain/keys.ts';
import { buildEarlierSend, pendingSweepKey } from '../../functions/domain/notification.ts';
import { acceptedMessageId, resendRefusal } from '../../functions/domain/resend.ts';
import { moveCondition, type NotificationStatus } from '../../functions/domain/state-machine.ts';
import { isConditionFailure } from '../../functions/stores/condition-failure.ts';
import { CLUSTER_ARN, mskRecord } from '../local/msk.ts';

/** An operator's mistake (unknown id, refused transition): exit 2 or 3, never a stack trace. */
export class OperatorError extends Error {
  override name = 'OperatorError';
  constructor(
    message: string,
    readonly code: 'NOT_FOUND' | 'REFUSED' | 'INVALID',
  ) {
    super(message);
  }
}

/** Feeds one MSK event to the ingest function: the deployed function (Lambda Invoke) or the local handler. */
export type IngestInvoker = (event: MSKEvent) => Promise<void>;

export interface TableDeps {
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
}

type Item = Record<string, unknown>;

// ── inspect ──

export interface EventView {
  readonly eventId: string;
  readonly inbox: Item | undefined;
  readonly notifications: Item[];
}

export async function inspectEvent(deps: TableDeps, eventId: string): Promise<EventView> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await deps.doc.send(
      new QueryCommand({
        TableName: deps.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': eventPk(eventId) },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return {
    eventId,
    inbox: items.find((i) => i.sk === INBOX_SK),
    notifications: items.filter((i) => i.kind === 'NOTIFICATION'),
  };
}

// ── quarantine ──

export interface QuarantineView {
  /** What replay-quarantine takes: <topic>#<partition>#<offset>. */
  readonly id: string;
  readonly reason: string;
  readonly detail: string;
  readonly eventId: string | null;
  readonly receivedAt: string;
  readonly source: KafkaSource;
  readonly rawTruncated: boolean;
  readonly replayedAt: string | null;
}

/** The record an operator's quarantine id names; a typo is refused with the form it should have. */
export function parseQuarantineId(id: string): KafkaSource {
  const source = quarantineSourceOf(id);
  if (source === undefined) {
    throw new OperatorError(`"${id}" is not a quarantine id (<topic>#<partition>#<offset>)`, 'INVALID');
  }
  return source;
}

export async function listQuarantine(
  deps: TableDeps,
  filter: { sinceIso?: string; reason?: string } = {},
): Promise<QuarantineView[]> {
  const conditions = ['kind = :q'];
  const values: Item = { ':q': 'QUARANTINE' };
  if (filter.sinceIso !== undefined) {
    conditions.push('receivedAt >= :since');
    values[':since'] = filter.sinceIso;
  }
  if (filter.reason !== undefined) {
    conditions.push('reason = :reason');
    values[':reason'] = filter.reason;
  }
  // A Scan with a filter: quarantine items are few (each one raised an alarm), and this is a tool, never a Lambda.
  const items = await scanWhere(deps, conditions, values);
  return items
    .map((q) => ({
      id: quarantineId(q.source as KafkaSource),
      reason: String(q.reason),
      detail: String(q.detail ?? ''),
      eventId: (q.eventId as string | undefined) ?? null,
      receivedAt: String(q.receivedAt),
      source: q.source as KafkaSource,
      rawTruncated: q.rawTruncated === true,
      replayedAt: (q.replayedAt as string | undefined) ?? null,
    }))
    .sort((a, b) => b.receivedAt.localeCompare(a.receivedAt) || a.source.offset - b.source.offset);
}

/** Every item matching the conditions (ANDed), all pages. For the operator's lists of rare items, never a Lambda. */
export async function scanWhere(
  deps: TableDeps,
  conditions: string[],
  values: Item,
  names?: Record<string, string>,
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await deps.doc.send(
      new ScanCommand({
        TableName: deps.tableName,
        FilterExpression: conditions.join(' AND '),
        ExpressionAttributeValues: values,
        ...(names === undefined ? {} : { ExpressionAttributeNames: names }),
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

// ── replay ──

export interface ReplayResult {
  readonly id: string;
  /**
   * What the table says after the replay: ACCEPTED (the inbox has the event from this record), DUPLICATE (the inbox
   * already had it from another record: nothing was sent again), or STILL_QUARANTINED.
   */
  readonly outcome: 'ACCEPTED' | 'DUPLICATE' | 'STILL_QUARANTINED';
  readonly eventId: string | null;
}

/**
 * Replays quarantined records through ingest, each at its own topic, partition and offset, with its stored value — or
 * `corrected` (the producer's fixed event, one record at a time). A record whose value was truncated when it was
 * quarantined can only be replayed corrected.
 */
export async function replayQuarantine(
  deps: TableDeps & { invokeIngest: IngestInvoker; now: () => number },
  ids: string[],
  corrected?: string,
): Promise<ReplayResult[]> {
  if (corrected !== undefined && ids.length !== 1) {
    throw new OperatorError('a corrected value replaces one record: name exactly one quarantine id', 'INVALID');
  }
  const results: ReplayResult[] = [];
  for (const id of ids) {
    const source = parseQuarantineId(id);
    const key = { pk: quarantinePk(source), sk: QUARANTINE_SK };
    const found = await deps.doc.send(new GetCommand({ TableName: deps.tableName, Key: key, ConsistentRead: true }));
    const item = found.Item;
    if (item === undefined) throw new OperatorError(`no quarantined record ${id}`, 'NOT_FOUND');
    if (corrected === undefined && item.rawTruncated === true) {
      throw new OperatorError(
        `${id} was quarantined with its value cut to 4 KB: replay it with --value-file (the corrected event)`,
        'REFUSED',
      );
    }
    const value = corrected === undefined ? Buffer.from(String(item.raw), 'base64') : Buffer.from(corrected, 'utf8');
    await deps.invokeIngest(mskEventOf([{ source, value }]));
    const eventId = corrected === undefined ? ((item.eventId as string | undefined) ?? null) : eventIdOf(corrected);
    const inbox =
      eventId === null
        ? undefined
        : (
            await deps.doc.send(
              new GetCommand({
                TableName: deps.tableName,
                Key: { pk: eventPk(eventId), sk: INBOX_SK },
                ConsistentRead: true,
              }),
            )
          ).Item;
    const accepted = inbox !== undefined && isSameSource(inbox.source as KafkaSource | undefined, source);
    if (accepted) {
      await deps.doc.send(
        new UpdateCommand({
          TableName: deps.tableName,
          Key: key,
          UpdateExpression: 'SET replayedAt = :now',
          ExpressionAttributeValues: { ':now': new Date(deps.now()).toISOString() },
        }),
      );
    }
    // Already in the inbox from another record: a duplicate if it means the same (the payload hash), else a conflict.
    const decoded =
      inbox === undefined || accepted ? undefined : decodeRecordValue(value.toString('base64'), RAW_BYTES_MAX);
    const duplicate = decoded?.ok === true && decoded.payloadHash === inbox?.payloadHash;
    const outcome = accepted ? 'ACCEPTED' : duplicate ? 'DUPLICATE' : 'STILL_QUARANTINED';
    results.push({ id, outcome, eventId });
  }
  return results;
}

/** Only to compare meanings: the ingest function applies its own MAX_EVENT_BYTES. */
const RAW_BYTES_MAX = 1_048_576;

const isSameSource = (a: KafkaSource | undefined, b: KafkaSource) =>
  a !== undefined && a.topic === b.topic && a.partition === b.partition && a.offset === b.offset;

export function eventIdOf(json: string): string | null {
  try {
    const id = (JSON.parse(json) as { eventId?: unknown }).eventId;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

export function mskEventOf(records: { source: KafkaSource; value: Buffer }[]): MSKEvent {
  const grouped: MSKEvent['records'] = {};
  for (const { source, value } of records) {
    const key = `${source.topic}-${source.partition}`;
    grouped[key] ??= [];
    grouped[key].push(mskRecord({ ...source, value }));
  }
  return {
    eventSource: 'aws:kafka',
    eventSourceArn: CLUSTER_ARN,
    bootstrapServers: 'notifier-ops-replay.invalid:9098',
    records: grouped,
  } as MSKEvent;
}

export interface ParkedBatch {
  readonly key: string;
  readonly lastModified: Date;
  readonly records: number;
}

/**
 * The invocation record Lambda parked in S3 for a failed MSK batch: the metadata, and the whole original event
 * under `payload` (AWS: "For Amazon S3 destinations, Lambda also sends the entire invocation record"). Taken as a
 * JSON object or a JSON string, whichever the object holds; anything else is refused, never guessed at.
 */
export function parkedEvent(objectText: string, key: string): MSKEvent {
  let doc: unknown;
  try {
    doc = JSON.parse(objectText);
  } catch {
    throw new OperatorError(`s3 object ${key} is not JSON`, 'INVALID');
  }
  let payload = (doc as { payload?: unknown }).payload;
  if (typeof payload === 'string') {
    try {
      payload = JSON.parse(payload);
    } catch {
      throw new OperatorError(`s3 object ${key}: payload is not JSON`, 'INVALID');
    }
  }
  const event = payload as Partial<MSKEvent> | undefined;
  if (event?.eventSource !== 'aws:kafka' || typeof event.records !== 'object' || event.records === null) {
    throw new OperatorError(`s3 object ${key} holds no MSK invocation record under "payload"`, 'INVALID');
  }
  return event as MSKEvent;
}

/** Replays every batch parked in the bucket since `since` (oldest first), each as one ingest invocation. */
export async function replayFailedBatches(
  deps: { s3: S3Client; bucket: string; invokeIngest: IngestInvoker },
  since: Date | undefined,
  options: { dryRun?: boolean } = {},
): Promise<ParkedBatch[]> {
  const objects: { key: string; lastModified: Date }[] = [];
  let token: string | undefined;
  do {
    const page = await deps.s3.send(new ListObjectsV2Command({ Bucket: deps.bucket, ContinuationToken: token }));
    for (const o of page.Contents ?? []) {
      if (o.Key === undefined || o.LastModified === undefined) continue;
      if (since !== undefined && o.LastModified < since) continue;
      objects.push({ key: o.Key, lastModified: o.LastModified });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  objects.sort((a, b) => a.lastModified.getTime() - b.lastModified.getTime());
  const done: ParkedBatch[] = [];
  for (const o of objects) {
    const answer = await deps.s3.send(new GetObjectCommand({ Bucket: deps.bucket, Key: o.key }));
    const text = (await answer.Body?.transformToString('utf8')) ?? '';
    const event = parkedEvent(text, o.key);
    if (!options.dryRun) await deps.invokeIngest(event);
    done.push({ ...o, records: Object.values(event.records).flat().length });
  }
  return done;
}

// ── resend ──

export interface ResendRequest {
  readonly notificationId: string;
  readonly by: string;
  readonly reason: string;
  /**
   * The provider's message id of the send the operator knows about and resends despite: required, and must match,
   * when the provider's acceptance is on the item. A second copy is then deliberate, never an accident.
   */
  readonly despiteAccepted?: string;
}

/** The notification an operator's id names; a typo is refused with the form it should have. */
export function parseNotificationId(id: string): { eventId: string; channel: Channel } {
  const ref = notificationOfId(id);
  if (ref === undefined) {
    throw new OperatorError(`"${id}" is not a notification id (<eventId>#EMAIL|PUSH|SMS)`, 'INVALID');
  }
  return ref;
}

/**
 * Puts a FAILED or UNKNOWN notification back to PENDING for one more send — or, named by its message id, one the
 * provider is known to have accepted — and records the resend on the item
 * (manualResends: by, at, reason, and the status, attempt, lastError and providerMessageId it had). The MODIFY to
 * PENDING reaches dispatch through the stream trigger, as any retry does. Its budget and its maximum age start again
 * (deferrals catch up with attempt, createdAt moves to now; firstCreatedAt keeps the original): the operator decided
 * this send is wanted now. One conditional write: it is refused if the item moved since it was read, and a SENT
 * notification can never be resent by it.
 */
export async function resendNotification(
  deps: TableDeps & { now: () => number },
  request: ResendRequest,
  expected?: { status: string; attempt: number },
): Promise<Item> {
  const { eventId, channel } = parseNotificationId(request.notificationId);
  const key = { pk: eventPk(eventId), sk: notificationSk(channel) };
  const found = await deps.doc.send(new GetCommand({ TableName: deps.tableName, Key: key, ConsistentRead: true }));
  const item = found.Item;
  if (item === undefined) throw new OperatorError(`no notification ${request.notificationId}`, 'NOT_FOUND');
  const status = String(item.status);
  const accepted = acceptedMessageId(item);
  const refusal = resendRefusal(request.notificationId, item, request.despiteAccepted);
  if (refusal !== undefined) throw new OperatorError(refusal, 'REFUSED');
  if (expected !== undefined && (expected.status !== status || expected.attempt !== item.attempt)) {
    throw new OperatorError(`${request.notificationId} changed since it was shown: look again`, 'REFUSED');
  }
  const move = moveCondition(status as NotificationStatus, 'PENDING', 'operator');
  const now = deps.now();
  const iso = new Date(now).toISOString();
  if (accepted !== undefined) {
    // First, the send this resend takes off the item stays findable by its message id: a late report about it (a dead
    // number) is still ours. Harmless if the resend below is refused: it names the same notification.
    await deps.doc.send(
      new PutCommand({
        TableName: deps.tableName,
        Item: buildEarlierSend({ eventId, channel, expiresAt: item.expiresAt }, accepted, now),
      }),
    );
  }
  const record = {
    by: request.by,
    at: iso,
    reason: request.reason,
    fromStatus: status,
    attempt: item.attempt,
    ...(item.lastError === undefined ? {} : { lastError: item.lastError }),
    ...(item.providerMessageId === undefined ? {} : { providerMessageId: item.providerMessageId }),
    ...(accepted === undefined ? {} : { despiteAccepted: true }),
    // The earlier send's feedback stays in the record; the new send's feedback starts afresh on the item.
    ...(typeof (item as { deliveryStatus?: unknown }).deliveryStatus === 'string'
      ? { deliveryStatus: (item as { deliveryStatus?: string }).deliveryStatus }
      : {}),
    ...(typeof (item as { deliveryResponse?: unknown }).deliveryResponse === 'string'
      ? { deliveryResponse: (item as { deliveryResponse?: string }).deliveryResponse }
      : {}),
  };
  try {
    const r = await deps.doc.send(
      new UpdateCommand({
        TableName: deps.tableName,
        Key: key,
        // Nothing moved since the read — nor did a provider's acceptance land on the item, nor an erasure, meanwhile.
        ConditionExpression: `${move.expression} AND attempt = :attempt AND attribute_not_exists(erasedAt) AND ${
          accepted === undefined ? 'attribute_not_exists(providerMessageId)' : 'providerMessageId = :accepted'
        }`,
        UpdateExpression:
          'SET #status = :pending, updatedAt = :iso, deferrals = :attempt, firstCreatedAt = if_not_exists(firstCreatedAt, createdAt), createdAt = :iso, sweepKey = :sweepKey, sweepAt = :sweepAt, manualResends = list_append(if_not_exists(manualResends, :empty), :record) REMOVE lastError, providerMessageId, retryAt, leaseUntil, claimId, deliveryStatus, deliveryRank, deliveryAt, deliveryAtMs, deliveryMessageId, deliveryResponse, bounceType, bounceSubType',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ...move.values,
          ':attempt': item.attempt,
          ':pending': 'PENDING',
          ':iso': iso,
          ':sweepKey': pendingSweepKey(String(item.template), channel, request.notificationId),
          // Due for the sweeper a minute from now, should the stream record never reach dispatch.
          ':sweepAt': now + 60_000,
          ':empty': [],
          ':record': [record],
          ...(accepted === undefined ? {} : { ':accepted': accepted }),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return r.Attributes as Item;
  } catch (error) {
    if (isConditionFailure(error)) {
      throw new OperatorError(`${request.notificationId} changed while being resent: look again`, 'REFUSED');
    }
    throw error;
  }
}

// ── trace ──

/** The Logs Insights query that follows one event through the three functions. */
export const traceQuery = (eventId: string) =>
  [
    'fields @timestamp, @log, level, message, notificationId, channel, attempt, status, reason, code',
    `| filter eventId = ${JSON.stringify(eventId)} or notificationId like ${JSON.stringify(`${eventId}#`)}`,
    '| sort @timestamp asc',
    '| limit 1000',
  ].join('\n');

export async function traceEvent(
  deps: { logs: CloudWatchLogsClient; logGroups: string[]; sleep: (ms: number) => Promise<void>; now: () => number },
  eventId: string,
  sinceMs: number,
  timeoutMs = 60_000,
): Promise<Record<string, string>[]> {
  const now = deps.now();
  const started = await deps.logs.send(
    new StartQueryCommand({
      logGroupNames: deps.logGroups,
      startTime: Math.floor((now - sinceMs) / 1000),
      endTime: Math.ceil(now / 1000),
      queryString: traceQuery(eventId),
    }),
  );
  if (started.queryId === undefined) throw new Error('StartQuery returned no queryId');
  const deadline = now + timeoutMs;
  for (;;) {
    const r = await deps.logs.send(new GetQueryResultsCommand({ queryId: started.queryId }));
    if (r.status === 'Complete') {
      return (r.results ?? []).map((row) =>
        Object.fromEntries(row.filter((f) => f.field !== '@ptr').map((f) => [f.field ?? '', f.value ?? ''])),
      );
    }
    if (r.status === 'Failed' || r.status === 'Cancelled' || r.status === 'Timeout') {
      throw new Error(`the Logs Insights query ended ${r.status}`);
    }
    if (deps.now() > deadline) throw new Error('the Logs Insights query did not complete in time');
    await deps.sleep(1000);
  }
}
