/**
 * Reading the evidence of sends (docs/evidence-and-privacy.md "Finding a record"), for the operator's commands, export
 * and a support console: what the customer received, byte for byte, with every report the provider made on it —
 * from the batches the table and the customers' index name (never a listing of the bucket), and, for sends recorded
 * before batches, from their own objects under the event's prefix. Every object is read as first written (its oldest
 * version), with a warning when its versions show it was written again or hidden (stores/evidence-versions.ts).
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Channel } from '../domain/channels.ts';
import { type FeedbackEvidence, parseEvidence, type SendEvidence, sendKey } from '../domain/evidence.ts';
import { batchObjectKey, decodeBatch, reportsPrefix, sha256Hex } from '../domain/evidence-batch.ts';
import { eventPk, isNotificationSk, parseNotificationId } from '../domain/keys.ts';
import type { EvidenceIndex } from './evidence-index.ts';
import type { EvidenceStore } from './evidence-store.ts';
import { readFirst } from './evidence-versions.ts';

export interface SendProof {
  /** The object the record is in: its batch, or (before batches) its own. */
  readonly key: string;
  /** The record's place in its batch (absent for an object of its own). */
  readonly record?: number;
  /** SHA-256 of the record's bytes as stored: what a dispute can check a copy against. */
  readonly sha256: string;
  readonly send: SendEvidence;
  readonly feedback: FeedbackEvidence[];
  /**
   * What the versions of its objects say beyond the record: a later version of a key (superseded) or a delete marker
   * over it (hidden). Both are denied by the bucket policy; a record is shown as first written either way.
   */
  readonly warnings?: string[];
}

/** A send as the table or the index names it: its batch and its notification. */
export interface SendRef {
  readonly batch: string;
  readonly notificationId: string;
}

/** Where sends are named: the notifications of an event (their SENT write), and the customers' index. */
export interface EvidenceLocator {
  /** The customers of an event's notifications, and the batches their SENT writes name. */
  ofEvent(eventId: string): Promise<{ userIds: string[]; refs: SendRef[] }>;
  /** Every send indexed for a customer. */
  ofUser(userId: string): Promise<SendRef[]>;
}

export class DynamoEvidenceLocator implements EvidenceLocator {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly index: EvidenceIndex,
  ) {}

  async ofEvent(eventId: string): Promise<{ userIds: string[]; refs: SendRef[] }> {
    const r = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': eventPk(eventId) },
        ConsistentRead: true,
      }),
    );
    const notifications = (r.Items ?? []).filter((i) => isNotificationSk(String(i.sk)));
    const userIds = [...new Set(notifications.map((n) => String(n.userId)))];
    const refs = notifications.flatMap((n) =>
      typeof n.evidence?.batch === 'string'
        ? [{ batch: n.evidence.batch, notificationId: String(n.notificationId) }]
        : [],
    );
    return { userIds, refs };
  }

  ofUser(userId: string): Promise<SendRef[]> {
    return this.index.sendsOf(userId);
  }
}

/** The sends an event's (or one notification's) batches hold: named by its notifications and its customers' index. */
export async function batchSendsOfEvent(
  store: EvidenceStore,
  locator: EvidenceLocator,
  eventId: string,
  channel?: Channel,
  userId?: string,
): Promise<SendProof[]> {
  const found = await locator.ofEvent(eventId);
  const users = userId === undefined ? found.userIds : [userId];
  const indexed = (await Promise.all(users.map((u) => locator.ofUser(u)))).flat();
  const wanted = (id: string) => {
    const ref = parseNotificationId(id);
    return ref?.eventId === eventId && (channel === undefined || ref.channel === channel);
  };
  return readSends(
    store,
    [...found.refs, ...indexed].filter((r) => wanted(r.notificationId)),
  );
}

/** Every send in the named batches, with the reports on it; each batch read once, each send once. */
export async function readSends(store: EvidenceStore, refs: readonly SendRef[]): Promise<SendProof[]> {
  const byBatch = new Map<string, Set<string>>();
  for (const r of refs) byBatch.set(r.batch, (byBatch.get(r.batch) ?? new Set()).add(r.notificationId));
  const proofs: SendProof[] = [];
  for (const [batch, ids] of byBatch) proofs.push(...(await sendsInBatch(store, batch, ids)));
  return proofs.sort((a, b) => a.send.acceptedAt.localeCompare(b.send.acceptedAt));
}

async function sendsInBatch(store: EvidenceStore, batch: string, ids: ReadonlySet<string>): Promise<SendProof[]> {
  const key = batchObjectKey(batch);
  const [object] = await store.history(key);
  // Named by the table or the index but not (yet) in the store: an invocation's batch still being written or rebuilt.
  if (object === undefined || object.key !== key) return [];
  const read = await readFirst(store, object);
  if (read === undefined) return [];
  const sends = decodeBatch(read.bytes)
    .records.map((r, record) => ({ ...r, record }))
    .filter((r) => r.entry.kind === 'SEND' && ids.has(r.entry.notificationId));
  if (sends.length === 0) return [];
  const reports = await reportsOn(store, batch);
  const proofs: SendProof[] = [];
  for (const { entry, bytes, record } of sends) {
    const send = parseEvidence(bytes) as SendEvidence;
    // A report whose send the feedback function could not place in its batch (a send an operator's resend took off
    // its notification, an item gone) is under the send's own key, as before batches.
    const own = dedupeReports([
      ...reports.filter((r) => r.report.providerMessageId === send.providerMessageId),
      ...(await reportsUnder(store, `${sendKey(send).slice(0, -'.json'.length)}.feedback/`)),
    ]);
    const warnings = [...read.warnings, ...own.flatMap((r) => r.warnings)];
    proofs.push({
      key,
      record,
      sha256: entry.sha256,
      send,
      feedback: own.map((r) => r.report),
      ...(warnings.length > 0 ? { warnings: [...new Set(warnings)] } : {}),
    });
  }
  return proofs;
}

type Report = { report: FeedbackEvidence; warnings: string[] };

/** Reports each once (a report written twice — a redelivery — is read once), in the order they happened. */
function dedupeReports(reports: Report[]): Report[] {
  const seen = new Set<string>();
  return reports
    .filter(({ report }) => {
      const same = JSON.stringify([report.providerMessageId, report.status, report.at]);
      if (seen.has(same)) return false;
      seen.add(same);
      return true;
    })
    .sort((a, b) => a.report.at.localeCompare(b.report.at));
}

/** Reports kept as objects of their own under a prefix (before batches, or on a send not placed in its batch). */
async function reportsUnder(store: EvidenceStore, prefix: string): Promise<Report[]> {
  const reports: Report[] = [];
  for (const object of await store.history(prefix)) {
    const read = await readFirst(store, object);
    const r = read === undefined ? undefined : parseEvidence(read.bytes);
    if (read !== undefined && r?.kind === 'FEEDBACK') reports.push({ report: r, warnings: read.warnings });
  }
  return reports;
}

/** Every report under a send batch's prefix (`<batch>.reports/`). */
async function reportsOn(store: EvidenceStore, batch: string): Promise<Report[]> {
  const reports: Report[] = [];
  for (const object of await store.history(reportsPrefix(batch))) {
    const read = await readFirst(store, object);
    if (read === undefined) continue;
    for (const { entry, bytes } of decodeBatch(read.bytes).records) {
      if (entry.kind === 'FEEDBACK')
        reports.push({ report: parseEvidence(bytes) as FeedbackEvidence, warnings: read.warnings });
    }
  }
  return reports;
}

/**
 * Every send recorded before batches under a prefix (an event, or one notification: `sends/<eventId>/…`), each an
 * object of its own with the reports appended to it under `<send>.feedback/`.
 */
export async function readEvidence(store: EvidenceStore, prefix: string): Promise<SendProof[]> {
  const objects = await store.history(prefix);
  const proofs: SendProof[] = [];
  for (const o of objects.filter((x) => x.key.endsWith('.json') && !x.key.includes('.feedback/'))) {
    const read = await readFirst(store, o);
    if (read === undefined) continue;
    const record = parseEvidence(read.bytes);
    if (record.kind !== 'SEND') continue;
    const feedbackPrefix = `${o.key.slice(0, -'.json'.length)}.feedback/`;
    const feedback: FeedbackEvidence[] = [];
    const warnings = [...read.warnings];
    for (const f of objects.filter((x) => x.key.startsWith(feedbackPrefix))) {
      const report = await readFirst(store, f);
      if (report === undefined) continue;
      warnings.push(...report.warnings);
      const r = parseEvidence(report.bytes);
      if (r.kind === 'FEEDBACK') feedback.push(r);
    }
    const sha256 = sha256Hex(read.bytes);
    proofs.push({ key: o.key, sha256, send: record, feedback, ...(warnings.length > 0 ? { warnings } : {}) });
  }
  return proofs.sort((a, b) => a.send.acceptedAt.localeCompare(b.send.acceptedAt));
}
