/**
 * One customer's data and the evidence store, for the operator (docs/evidence-and-privacy.md):
 * - evidence: what the customer received for an event or a notification, from the evidence store (after the hot
 *   items are gone too), with what the provider reported.
 * - customer: each notice of a customer with what was sent or exactly why not (the byUser index, never a scan).
 * - export: everything notifier holds about a customer, as one JSON document.
 * - erase: the customer's personal data out of the hot store, except what must still be sent; evidence stays.
 * - audit: every deliberate operator action, written once to the evidence store (kept as long as the evidence).
 */
import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMA } from '../../functions/contracts/table-schema.ts';
import { addressHash } from '../../functions/domain/audience.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { ERASED_USER, isErased } from '../../functions/domain/erasure.ts';
import { evidencePrefixOf, userPrefix } from '../../functions/domain/evidence.ts';
import { type BatchEntry, batchNameOfKey, decodeBatch, isSendBatch } from '../../functions/domain/evidence-batch.ts';
import {
  eventIdOfPk,
  INBOX_SK,
  notificationIdOf,
  PREFS_SK,
  parseNotificationId,
  prefsPk,
  QUARANTINE_SK,
  quarantinePk,
  suppressionPk,
  userKeyOf,
} from '../../functions/domain/keys.ts';
import { TERMINAL_STATUSES } from '../../functions/domain/state-machine.ts';
import {
  batchSendsOfEvent,
  type EvidenceLocator,
  readEvidence,
  readSends,
  type SendProof,
  type SendRef,
} from '../../functions/stores/evidence-reader.ts';
import { type EvidenceStore, FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { readFirst } from '../../functions/stores/evidence-versions.ts';
import { type EventView, inspectEvent, OperatorError, parseQuarantineId, type TableDeps } from './operations.ts';

type Item = Record<string, unknown>;

// ── evidence ──

export { readEvidence, type SendProof } from '../../functions/stores/evidence-reader.ts';

/**
 * The sends of an event (`eventId`) or one notification (`eventId#CHANNEL`): from the batches its notifications and
 * its customers' index name (`user` when the table no longer holds the event), and the objects of sends recorded
 * before batches (under the event's prefix). Without the table, a local run's folder is read whole instead.
 */
export async function evidenceOf(
  store: EvidenceStore,
  id: string,
  locator?: EvidenceLocator,
  user?: string,
): Promise<SendProof[]> {
  const ref = parseNotificationId(id);
  const eventId = ref?.eventId ?? id;
  const scan = () =>
    scannedSends(store, (e) =>
      ref === undefined ? parseNotificationId(e.notificationId)?.eventId === id : e.notificationId === id,
    );
  let batched: SendProof[];
  try {
    batched =
      locator === undefined ? await scan() : await batchSendsOfEvent(store, locator, eventId, ref?.channel, user);
  } catch (error) {
    // A local run's table gone (DynamoDB Local stopped): its folder is read whole instead; never S3.
    if (!(store instanceof FileEvidenceStore)) throw error;
    batched = await scan();
  }
  return dedupe([...(await readEvidence(store, evidencePrefixOf(id))), ...batched]);
}

/** A local folder without its table: every batch's sends, filtered (S3 is never listed so: docs/evidence-and-privacy.md). */
async function scannedSends(store: EvidenceStore, wanted: (send: BatchEntry) => boolean): Promise<SendProof[]> {
  if (!(store instanceof FileEvidenceStore)) return [];
  const refs: SendRef[] = [];
  for (const key of await store.list('batches/')) {
    const name = batchNameOfKey(key);
    const object = name === undefined || !isSendBatch(name) ? undefined : await store.get(key);
    if (name === undefined || object === undefined) continue;
    for (const { entry } of decodeBatch(object).records) {
      if (entry.kind === 'SEND' && wanted(entry)) refs.push({ batch: name, notificationId: entry.notificationId });
    }
  }
  return readSends(store, refs);
}

/** One proof per send (a batch named by both the table and the index is read once). */
function dedupe(proofs: SendProof[]): SendProof[] {
  const seen = new Set<string>();
  return proofs
    .filter((p) => {
      const id = `${p.send.notificationId}@${p.send.providerMessageId}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    })
    .sort((a, b) => a.send.acceptedAt.localeCompare(b.send.acceptedAt));
}

/** The message as the provider received it: every field printed as stored, nothing re-rendered or trimmed. */
export function evidenceText(proofs: readonly SendProof[]): string {
  const out: string[] = [];
  for (const p of proofs) {
    const s = p.send;
    const r = s.request;
    out.push(
      `${s.notificationId}  accepted ${s.acceptedAt} by ${r.api} as message ${s.providerMessageId} (attempt ${s.attempt})`,
      `  kept until ${s.retainUntil}; object ${p.key}${p.record === undefined ? '' : ` record ${p.record}`} sha256 ${p.sha256}`,
      ...(p.warnings ?? []).map((w) => `  WARNING: ${w}`),
    );
    switch (r.channel) {
      case 'EMAIL':
        out.push(
          `From: ${r.source}`,
          `To: ${r.to.join(', ')}`,
          `Subject: ${r.subject}`,
          `--- text/plain; charset=${r.charset} ---`,
          r.text,
          `--- text/html; charset=${r.charset} ---`,
          r.html,
          '--- end ---',
        );
        break;
      case 'SMS':
        out.push(
          `To: ${r.phoneNumber}`,
          `Encoding: ${r.encoding}, ${r.segments} segment(s)`,
          '--- text ---',
          r.text,
          '--- end ---',
        );
        break;
      case 'PUSH':
        out.push(
          `To: ${r.targetArn}`,
          `--- payload (MessageStructure ${r.messageStructure}) ---`,
          r.payload,
          '--- end ---',
        );
        break;
    }
    for (const f of p.feedback) {
      out.push(
        `  provider reported ${f.status} at ${f.at}${f.bounceType ? ` (${f.bounceType}/${f.bounceSubType ?? ''})` : ''}${f.providerResponse ? `: ${f.providerResponse}` : ''}`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}

// ── customer ──

export interface NoticeView {
  readonly eventId: string;
  readonly type: string;
  readonly occurredAt: string;
  readonly channel: Channel | null;
  readonly status: string;
  /** What was sent, or exactly why not, in one line. */
  readonly why: string;
}

export interface CustomerView {
  readonly userId: string;
  readonly notices: NoticeView[];
  readonly preferences: Item | null;
  readonly suppressions: Item[];
  /** Sends proven by the evidence store whose hot items are gone (expired or erased). */
  readonly evidenceOnly: { notificationId: string; acceptedAt: string; providerMessageId: string }[];
}

/** The customer's events, newest first, through the sparse byUser index: one Query per page, never a scan. */
export async function eventIdsOfUser(deps: TableDeps, userId: string): Promise<string[]> {
  const ids: string[] = [];
  let start: Item | undefined;
  do {
    const page = await deps.doc.send(
      new QueryCommand({
        TableName: deps.tableName,
        IndexName: TABLE_SCHEMA.userIndex.indexName,
        KeyConditionExpression: '#u = :u',
        ExpressionAttributeNames: { '#u': TABLE_SCHEMA.userIndex.partitionKey },
        ExpressionAttributeValues: { ':u': userKeyOf(userId) },
        ScanIndexForward: false,
        ExclusiveStartKey: start,
      }),
    );
    for (const i of page.Items ?? []) {
      const eventId = eventIdOfPk(String(i.pk));
      if (eventId !== undefined) ids.push(eventId);
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return ids;
}

async function getItem(doc: DynamoDBDocumentClient, tableName: string, pk: string, sk: string) {
  const r = await doc.send(new GetCommand({ TableName: tableName, Key: { pk, sk }, ConsistentRead: true }));
  return r.Item as Item | undefined;
}

/** The suppression of a notification's address, if its address is still on the item. */
async function suppressionOf(deps: TableDeps, n: Item): Promise<Item | undefined> {
  const channel = n.channel as Channel;
  const recipient = typeof n.recipient === 'string' ? n.recipient : '';
  if (recipient === '') return undefined;
  const hash = addressHash(channel, recipient);
  return getItem(deps.doc, deps.tableName, suppressionPk(channel, hash), hash);
}

/**
 * What became of one notification, in one line: what was sent, or exactly why not. Pure: the item, its event's
 * inbox item, and the customer's preferences and the address's suppression as read now.
 */
export function whyOf(n: Item, prefs: Item | undefined, suppression: Item | undefined): string {
  const status = String(n.status);
  switch (status) {
    case 'SENT':
      return `sent ${n.updatedAt} to ${n.recipient}, provider message ${n.providerMessageId}${n.deliveryStatus ? `; provider reported ${n.deliveryStatus} at ${n.deliveryAt}${n.deliveryResponse ? ` (${n.deliveryResponse})` : ''}${n.bounceType ? ` (${n.bounceType}/${n.bounceSubType})` : ''}` : ''}`;
    case 'SUPPRESSED': {
      const reason = String(n.suppressedReason ?? '');
      if (reason === 'OPTED_OUT') {
        return `not sent: the customer opted out of ${n.channel}${prefs ? ` (preferences of ${prefs.occurredAt}, event ${prefs.eventId}${Array.isArray(prefs.optOut) && !prefs.optOut.includes(n.channel) ? '; opted in again since' : ''})` : ''}`;
      }
      return `not sent: the address is suppressed (${reason})${suppression ? ` since ${suppression.since}, from the provider's report on ${suppression.notificationId}${suppression.state === 'LIFTED' ? `; lifted ${suppression.liftedAt} by ${suppression.liftedBy}` : ''}` : ''}`;
    }
    case 'REFUSED':
      return `not sent: the contact point was refused (${n.refusedReason}): ${n.refusedDetail}`;
    case 'FAILED': {
      const error = String(n.lastError ?? '');
      if (error === 'EXPIRED') return `not sent: too old — not sent within the maximum age (${n.updatedAt})`;
      return `not sent: failed (${error})`;
    }
    case 'UNKNOWN':
      return `outcome unknown (${n.lastError}): the provider may have it${n.providerMessageId ? ` — it accepted message ${n.providerMessageId} after the lease` : ''}`;
    case 'PENDING':
    case 'SENDING':
      return `in flight (${status}${n.retryAt ? `, next try ${new Date(Number(n.retryAt)).toISOString()}` : ''}${n.lastError ? `, last ${n.lastError}` : ''})`;
    default:
      return status;
  }
}

/** The notices of one event, each with its reason; an event that made no notification says why. */
export async function explainEvent(deps: TableDeps, view: EventView, prefs: Item | undefined): Promise<NoticeView[]> {
  const inbox = view.inbox;
  const base = {
    eventId: view.eventId,
    type: String(inbox?.type ?? view.notifications[0]?.template ?? '?'),
    occurredAt: String(inbox?.occurredAt ?? view.notifications[0]?.occurredAt ?? ''),
  };
  if (view.notifications.length === 0) {
    const why =
      inbox?.skipped === 'TOO_OLD'
        ? 'not sent: too old when it arrived (recorded, never sent)'
        : inbox?.erasedAt !== undefined
          ? `erased ${inbox.erasedAt}`
          : `no notification: ${inbox?.skipped ?? 'the event named no channel to send'}`;
    return [{ ...base, channel: null, status: 'NONE', why }];
  }
  const notices: NoticeView[] = [];
  for (const n of view.notifications) {
    const suppression = String(n.status) === 'SUPPRESSED' ? await suppressionOf(deps, n) : undefined;
    notices.push({
      ...base,
      channel: n.channel as Channel,
      status: String(n.status),
      why:
        n.erasedAt !== undefined
          ? `${whyOf(n, prefs, suppression)} (erased ${n.erasedAt})`
          : whyOf(n, prefs, suppression),
    });
  }
  return notices;
}

export async function customerView(
  deps: TableDeps,
  store: EvidenceStore | undefined,
  userId: string,
  locator?: EvidenceLocator,
): Promise<CustomerView> {
  const prefs = await getItem(deps.doc, deps.tableName, prefsPk(userId), PREFS_SK);
  const notices: NoticeView[] = [];
  const hot = new Set<string>();
  const suppressions = new Map<string, Item>();
  for (const eventId of await eventIdsOfUser(deps, userId)) {
    const view = await inspectEvent(deps, eventId);
    for (const n of view.notifications) {
      hot.add(String(n.notificationId));
      const s = await suppressionOf(deps, n);
      if (s !== undefined) suppressions.set(`${s.pk}/${s.sk}`, s);
    }
    notices.push(...(await explainEvent(deps, view, prefs)));
  }
  const evidenceOnly: CustomerView['evidenceOnly'] = [];
  if (store !== undefined) {
    for (const proof of await userEvidence(store, userId, locator)) {
      if (!hot.has(proof.send.notificationId)) {
        evidenceOnly.push({
          notificationId: proof.send.notificationId,
          acceptedAt: proof.send.acceptedAt,
          providerMessageId: proof.send.providerMessageId,
        });
      }
    }
  }
  return { userId, notices, preferences: prefs ?? null, suppressions: [...suppressions.values()], evidenceOnly };
}

export function customerText(v: CustomerView): string {
  const lines = [`customer ${v.userId}: ${v.notices.length} notice(s) in the table, newest first`];
  for (const n of v.notices) {
    lines.push(
      `  ${n.occurredAt}  ${n.eventId}  ${n.type}  ${(n.channel ?? '-').padEnd(5)} ${n.status}`,
      `      ${n.why}`,
    );
  }
  lines.push(
    v.preferences === null
      ? 'preferences: none recorded (every channel allowed)'
      : `preferences: opted out of ${JSON.stringify(v.preferences.optOut)} since ${v.preferences.occurredAt} (event ${v.preferences.eventId})`,
  );
  for (const s of v.suppressions) {
    lines.push(`suppressed address: ${s.channel} ${String(s.sk).slice(0, 12)}… ${s.state} ${s.cause} since ${s.since}`);
  }
  if (v.evidenceOnly.length > 0) {
    lines.push(`sent earlier (the table no longer holds them; the evidence does — ops evidence <id>):`);
    for (const e of v.evidenceOnly)
      lines.push(`  ${e.acceptedAt}  ${e.notificationId}  message ${e.providerMessageId}`);
  }
  lines.push('quarantined records name no customer reliably (bad input): see ops quarantine');
  return lines.join('\n');
}

/**
 * Every send proven for a customer: their evidence index names each batch (also years after the table's items), and
 * the customer's pointers (users/<userId>/…) each send recorded before batches.
 */
export async function userEvidence(
  store: EvidenceStore,
  userId: string,
  locator?: EvidenceLocator,
): Promise<SendProof[]> {
  const proofs: SendProof[] =
    locator === undefined
      ? await scannedSends(store, (e) => e.userId === userId)
      : await readSends(store, await locator.ofUser(userId));
  // Every pointer ever written, also one superseded or hidden: the send it names is found all the same.
  for (const pointer of await store.history(userPrefix(userId))) {
    const read = await readFirst(store, pointer);
    if (read === undefined) continue;
    for (const proof of await readEvidence(store, Buffer.from(read.bytes).toString('utf8'))) {
      const warnings = [...read.warnings, ...(proof.warnings ?? [])];
      proofs.push(warnings.length > 0 ? { ...proof, warnings } : proof);
    }
  }
  return dedupe(proofs);
}

// ── export and erase ──

export async function exportCustomer(
  deps: TableDeps,
  store: EvidenceStore | undefined,
  userId: string,
  now: number,
  locator?: EvidenceLocator,
) {
  const events: EventView[] = [];
  for (const eventId of await eventIdsOfUser(deps, userId)) events.push(await inspectEvent(deps, eventId));
  const suppressions = new Map<string, Item>();
  for (const n of events.flatMap((e) => e.notifications)) {
    const s = await suppressionOf(deps, n);
    if (s !== undefined) suppressions.set(`${s.pk}/${s.sk}`, s);
  }
  return {
    userId,
    exportedAt: new Date(now).toISOString(),
    notifications: events.map((e) => ({ eventId: e.eventId, inbox: e.inbox ?? null, notifications: e.notifications })),
    preferences: (await getItem(deps.doc, deps.tableName, prefsPk(userId), PREFS_SK)) ?? null,
    suppressions: [...suppressions.values()],
    evidence: store === undefined ? null : await userEvidence(store, userId, locator),
  };
}

/** Statuses an erasure may touch: the notification is over. PENDING and SENDING must still be sent, so they stay. */
const FINISHED: readonly string[] = TERMINAL_STATUSES;

export interface ErasureResult {
  readonly userId: string;
  readonly erased: string[];
  /** Not erased: still to be sent (or moved while we looked); erase again once sent. */
  readonly kept: { notificationId: string; status: string }[];
  readonly preferences: 'deleted' | 'kept' | 'none';
}

/**
 * Removes a customer's personal data from the hot store (docs/evidence-and-privacy.md "Erasure"): each finished
 * notification loses its address, data and user id (conditionally: only if still finished, so a resend racing the
 * erasure keeps its address and is reported as kept), each inbox item leaves the byUser index, an empty preferences
 * item goes; an opt-out stays (honouring the objection needs it). Nothing still to be sent is touched; evidence under
 * retention is not touched.
 */
export async function eraseCustomer(deps: TableDeps, userId: string, now: number): Promise<ErasureResult> {
  const at = new Date(now).toISOString();
  const erased: string[] = [];
  const kept: ErasureResult['kept'] = [];
  for (const eventId of await eventIdsOfUser(deps, userId)) {
    const view = await inspectEvent(deps, eventId);
    let allFinished = true;
    for (const n of view.notifications) {
      if (isErased(n)) continue; // an earlier erasure's
      try {
        if (!FINISHED.includes(String(n.status)))
          throw Object.assign(new Error(), { name: 'ConditionalCheckFailedException' });
        await deps.doc.send(
          new UpdateCommand({
            TableName: deps.tableName,
            Key: { pk: n.pk, sk: n.sk },
            UpdateExpression: 'SET recipient = :empty, #data = :nothing, userId = :erased, erasedAt = :at',
            ConditionExpression: '#status IN (:s0, :s1, :s2, :s3, :s4) AND userId = :user',
            ExpressionAttributeNames: { '#data': 'data', '#status': 'status' },
            ExpressionAttributeValues: {
              ':empty': '',
              ':nothing': {},
              ':erased': ERASED_USER,
              ':at': at,
              ':user': userId,
              ...Object.fromEntries(FINISHED.map((s, i) => [`:s${i}`, s])),
            },
          }),
        );
        erased.push(String(n.notificationId));
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        allFinished = false;
        kept.push({ notificationId: String(n.notificationId), status: String(n.status) });
      }
    }
    // Out of the index only when nothing of the event is left to send: a kept one is found again by the next erasure.
    if (allFinished && view.inbox !== undefined) {
      await deps.doc.send(
        new UpdateCommand({
          TableName: deps.tableName,
          Key: { pk: view.inbox.pk, sk: INBOX_SK },
          UpdateExpression: 'REMOVE userKey SET erasedAt = :at',
          ExpressionAttributeValues: { ':at': at },
        }),
      );
    }
  }
  const prefs = await getItem(deps.doc, deps.tableName, prefsPk(userId), PREFS_SK);
  let preferences: ErasureResult['preferences'] = 'none';
  if (prefs !== undefined) {
    const optOut = Array.isArray(prefs.optOut) ? prefs.optOut : [];
    if (optOut.length === 0) {
      const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
      await deps.doc.send(new DeleteCommand({ TableName: deps.tableName, Key: { pk: prefsPk(userId), sk: PREFS_SK } }));
      preferences = 'deleted';
    } else preferences = 'kept';
  }
  return { userId, erased, kept, preferences };
}

// ── audit ──

export const AUDIT_ACTIONS = ['RESEND', 'REPLAY', 'SUPPRESSION_LIFT', 'EXPORT', 'ERASE'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditRecord {
  readonly kind: 'AUDIT';
  readonly action: AuditAction;
  readonly by: string;
  readonly at: string;
  readonly reason: string;
  readonly target: string;
  readonly details: Record<string, unknown>;
}

/**
 * Records a deliberate operator action, written once to the evidence store (`audit/<at>-<id>.json`), so it is kept
 * as long as the evidence and nobody — the operator included — can edit or remove it. Written before the action: an
 * action whose audit record cannot be written does not happen.
 */
export async function recordAudit(
  store: EvidenceStore,
  entry: Omit<AuditRecord, 'kind' | 'at'>,
  now: number,
): Promise<AuditRecord> {
  const record: AuditRecord = { kind: 'AUDIT', at: new Date(now).toISOString(), ...entry };
  const key = `audit/${record.at}-${randomUUID().slice(0, 8)}.json`;
  // The bucket's default retention applies (the writer need not know the stack's setting).
  await store.put(key, Buffer.from(`${JSON.stringify(record, null, 2)}\n`, 'utf8'), undefined);
  return record;
}

/** An audit record as first written, with what its versions say (superseded, hidden) when anything. */
export type ListedAuditRecord = AuditRecord & { readonly warnings?: string[] };

export async function listAudit(store: EvidenceStore, sinceIso?: string): Promise<ListedAuditRecord[]> {
  const records: ListedAuditRecord[] = [];
  for (const o of await store.history('audit/')) {
    if (sinceIso !== undefined && o.key.slice('audit/'.length) < sinceIso) continue;
    const read = await readFirst(store, o);
    if (read === undefined) continue;
    const record = JSON.parse(Buffer.from(read.bytes).toString('utf8')) as AuditRecord;
    records.push(read.warnings.length > 0 ? { ...record, warnings: read.warnings } : record);
  }
  return records.sort((a, b) => b.at.localeCompare(a.at));
}

export const auditText = (records: readonly ListedAuditRecord[]) =>
  records.length === 0
    ? 'no audited operator action'
    : records
        .map(
          (r) =>
            `${r.at}  ${r.action.padEnd(16)} ${r.target}  by ${r.by}\n    why: ${r.reason}${Object.keys(r.details).length ? `\n    ${JSON.stringify(r.details)}` : ''}${(r.warnings ?? []).map((w) => `\n    WARNING: ${w}`).join('')}`,
        )
        .join('\n');

// ── replay with an edited value ──

export interface ValueChange {
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** Every leaf that differs between two JSON values, by path (`data.amount`, `recipient.email`, `channels[1]`). */
export function jsonDiff(before: unknown, after: unknown, path = ''): ValueChange[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  if (isObject(before) && isObject(after) && Array.isArray(before) === Array.isArray(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) =>
      jsonDiff(before[k], after[k], Array.isArray(before) ? `${path}[${k}]` : path === '' ? k : `${path}.${k}`),
    );
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '(value)', before, after }];
}

export interface CorrectionReview {
  readonly id: string;
  readonly eventId: string | null;
  /** What the edited value changes against the quarantined record (its stored value, cut to 4 KB if it was longer). */
  readonly changes: ValueChange[];
  readonly quarantinedValueTruncated: boolean;
  /** Why the replay must not go ahead, or null. */
  readonly refusal: string | null;
}

/**
 * What a replay with an edited value would change, before it is made. The corrected event must keep the quarantined
 * record's eventId: a replay that sends under another eventId is a new event, which only its producer may publish.
 */
export function reviewCorrection(id: string, quarantined: Item, corrected: string): CorrectionReview {
  const raw = Buffer.from(String(quarantined.raw ?? ''), 'base64').toString('utf8');
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  const before = parse(raw);
  const after = parse(corrected);
  const storedId = typeof quarantined.eventId === 'string' ? quarantined.eventId : null;
  const newId =
    typeof after === 'object' && after !== null && typeof (after as Item).eventId === 'string'
      ? String((after as Item).eventId)
      : null;
  const refusal =
    newId === null
      ? 'the corrected value names no eventId'
      : storedId !== null && newId !== storedId
        ? `the corrected value changes the eventId (${storedId} → ${newId}): a replay keeps the quarantined record's eventId`
        : null;
  return {
    id,
    eventId: storedId ?? newId,
    changes: jsonDiff(before, after),
    quarantinedValueTruncated: quarantined.rawTruncated === true,
    refusal,
  };
}

export const reviewText = (r: CorrectionReview) =>
  [
    `${r.id} (eventId ${r.eventId ?? 'unknown'}): the edited value changes ${r.changes.length} field(s) against the quarantined record${r.quarantinedValueTruncated ? ' (whose stored value was cut to 4 KB)' : ''}:`,
    ...r.changes.map(
      (c) => `  ${c.path}: ${JSON.stringify(c.before) ?? '(absent)'} → ${JSON.stringify(c.after) ?? '(absent)'}`,
    ),
  ].join('\n');

export async function quarantinedItem(deps: TableDeps, id: string): Promise<Item> {
  const source = parseQuarantineId(id);
  const item = await getItem(deps.doc, deps.tableName, quarantinePk(source), QUARANTINE_SK);
  if (item === undefined) throw new OperatorError(`no quarantined record ${id}`, 'NOT_FOUND');
  return item;
}

/** inspect's reasons: each notification of the event with what was sent or exactly why not. */
export async function reasonsOf(deps: TableDeps, view: EventView): Promise<Map<string, string>> {
  const userId = view.notifications.find((n) => typeof n.userId === 'string')?.userId;
  const prefs =
    typeof userId === 'string' ? await getItem(deps.doc, deps.tableName, prefsPk(userId), PREFS_SK) : undefined;
  const notices = await explainEvent(deps, view, prefs);
  return new Map(
    notices.flatMap((n) => (n.channel === null ? [] : [[notificationIdOf(n.eventId, n.channel), n.why] as const])),
  );
}
