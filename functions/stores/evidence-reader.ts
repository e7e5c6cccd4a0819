/**
 * Reading the evidence of sends (docs/evidence-and-privacy.md "Finding a record"), for the operator's commands, export
 * and a support console: what the customer received, byte for byte, with every report the provider made on it —
 * from the batches the table and the customers' index name (never a listing of the bucket), and, for sends recorded
 * before batches, from their own objects under the event's prefix. Every object is read as first written (its oldest
 * version), with a warning when its versions show it was written again or hidden (stores/evidence-versions.ts).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { attemptEvidence } from '../domain/attempt-evidence.ts';
import type { Channel } from '../domain/channels.ts';
import { type FeedbackEvidence, parseEvidence, type SendEvidence, sendKey } from '../domain/evidence.ts';
import { batchObjectKey, digestMatches, readBatch, reportsPrefix, sha256Hex } from '../domain/evidence-batch.ts';
import { parseSliceBatch } from '../domain/evidence-spool.ts';
import { eventPk, isNotificationSk, parseNotificationId } from '../domain/keys.ts';
import type { NotificationItem } from '../domain/notification.ts';
import { DynamoEvidenceGaps } from './evidence-gaps.ts';
import type { DayRange, EvidenceIndex, IndexedRef } from './evidence-index.ts';
import { DynamoEvidenceIntents, type EvidenceIntent } from './evidence-intents.ts';
import {
  addDigest,
  eachNamed,
  type SendProof,
  type SendsFound,
  type UnfoundSend,
  unnamedDigest,
} from './evidence-proof.ts';
import { DynamoEvidenceReports } from './evidence-reports.ts';
import { type SliceReading, sendsInSlice, sliceUnfound } from './evidence-slice-reader.ts';
import { DynamoEvidenceSpool, type SpooledRecord } from './evidence-spool.ts';
import type { EvidenceStore } from './evidence-store.ts';
import { readFirst } from './evidence-versions.ts';
import { queryAll } from './paged-query.ts';

export type { SendProof, UnfoundSend } from './evidence-proof.ts';

/** A send as the table or the index names it: its batch, its notification, and the digest carried with the name. */
export type SendRef = IndexedRef;

/** What the table says of a batch not in the store: a gap waiting to be written, an intent open for recovery. */
export interface BatchState {
  readonly gap?: { readonly since: string };
  readonly intent?: EvidenceIntent;
}

/** Where sends are named: the notifications of an event (their SENT write), and the evidence index. */
export interface EvidenceLocator {
  /** The customers of an event's notifications, and the batches their SENT writes and the event's index name. */
  ofEvent(eventId: string): Promise<{ userIds: string[]; refs: SendRef[] }>;
  /** Every send indexed for a customer (within `range`). */
  ofUser(userId: string, range?: DayRange): Promise<SendRef[]>;
  /** The table's word on a batch not (yet) in the store. */
  stateOf(batch: string): Promise<BatchState>;
  /** The feedback batches holding reports on sends of a send batch (stores/evidence-reports.ts). */
  reportsOf(sendBatch: string): Promise<string[]>;
  /** Every record a spool slice holds, rolled or not (whether a send's record is kept yet: stores/evidence-spool.ts). */
  spooled(slice: string): Promise<SpooledRecord[]>;
  /**
   * The records of a spool slice the roll-up has not rolled yet: what a reader shows from the spool. A rolled slice is
   * read from its objects only — never its spool copy, which a court-ordered erasure's removal would not reach.
   */
  unrolled(slice: string): Promise<SpooledRecord[]>;
}

export class DynamoEvidenceLocator implements EvidenceLocator {
  private readonly gaps: DynamoEvidenceGaps;
  private readonly intents: DynamoEvidenceIntents;
  private readonly reports: DynamoEvidenceReports;
  private readonly spool: DynamoEvidenceSpool;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly index: EvidenceIndex,
    /** The spool's own table (absent: the main table); the main table's spool is read too, for earlier items. */
    spoolTableName?: string,
  ) {
    this.gaps = new DynamoEvidenceGaps(client, tableName);
    this.intents = new DynamoEvidenceIntents(client, tableName);
    this.reports = new DynamoEvidenceReports(client, tableName);
    this.spool = new DynamoEvidenceSpool(client, spoolTableName ?? tableName, { formerTable: tableName });
  }

  spooled(slice: string): Promise<SpooledRecord[]> {
    return this.spool.ofSlice(slice);
  }

  unrolled(slice: string): Promise<SpooledRecord[]> {
    return this.spool.unrolled(slice);
  }

  async ofEvent(eventId: string): Promise<{ userIds: string[]; refs: SendRef[] }> {
    const [items, indexed] = await Promise.all([
      queryAll(this.client, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': eventPk(eventId) },
        ConsistentRead: true,
      }),
      // Kept as long as the evidence: the event's sends are found after its table items expired.
      this.index.sendsOfEvent(eventId),
    ]);
    const notifications = items.filter((i) => isNotificationSk(String(i.sk)));
    const userIds = [...new Set(notifications.map((n) => String(n.userId)))];
    // The item's reference only when it is its attempt's: one a resend left names an earlier send, which the index
    // names (dispatch indexes its records) — never shown as the item's (domain/attempt-evidence.ts).
    const refs = notifications.flatMap((n) => {
      const evidence = attemptEvidence(n as Pick<NotificationItem, 'evidence' | 'createdAt' | 'attempt'>);
      return typeof evidence?.batch === 'string'
        ? [
            {
              batch: evidence.batch,
              notificationId: String(n.notificationId),
              ...(typeof evidence.sha256 === 'string' ? { sha256: evidence.sha256 } : {}),
            },
          ]
        : [];
    });
    return { userIds, refs: [...refs, ...indexed] };
  }

  ofUser(userId: string, range?: DayRange): Promise<SendRef[]> {
    return this.index.sendsOf(userId, range);
  }

  reportsOf(sendBatch: string): Promise<string[]> {
    return this.reports.of(sendBatch);
  }

  async stateOf(batch: string): Promise<BatchState> {
    const [gap, intent] = await Promise.all([this.gaps.find(batchObjectKey(batch)), this.intents.find(batch)]);
    return { ...(gap === undefined ? {} : { gap }), ...(intent === undefined ? {} : { intent }) };
  }
}

export type { SendsFound } from './evidence-proof.ts';

export interface ReadOptions {
  /**
   * Asked of the table for a named batch the store does not hold, and for the feedback batches holding reports on a
   * send batch's sends (without it, only reports under the send batch's own prefix are read, as written before).
   */
  readonly locator?: Partial<Pick<EvidenceLocator, 'stateOf' | 'reportsOf' | 'unrolled'>>;
  /** Each record's exact bytes too (base64): a dispute's export. */
  readonly raw?: boolean;
}

/** The sends an event's (or one notification's) batches hold: named by its notifications and the evidence index. */
export async function batchSendsOfEvent(
  store: EvidenceStore,
  locator: EvidenceLocator,
  eventId: string,
  channel?: Channel,
  userId?: string,
): Promise<SendsFound> {
  const found = await locator.ofEvent(eventId);
  const users = userId === undefined ? found.userIds : [userId];
  const indexed = (await Promise.all(users.map((u) => locator.ofUser(u)))).flat();
  const wanted = (id: string) => {
    const ref = parseNotificationId(id);
    return ref?.eventId === eventId && (channel === undefined || ref.channel === channel);
  };
  return findSends(
    store,
    [...found.refs, ...indexed].filter((r) => wanted(r.notificationId)),
    { locator },
  );
}

/** Every send in the named batches, with the reports on it; each batch read once, each send once. */
export async function readSends(
  store: EvidenceStore,
  refs: readonly SendRef[],
  options: ReadOptions = {},
): Promise<SendProof[]> {
  return (await findSends(store, refs, options)).proofs;
}

/** Every send in the named batches, and every named send not shown (its batch missing, or its record damaged). */
export async function findSends(
  store: EvidenceStore,
  refs: readonly SendRef[],
  options: ReadOptions = {},
): Promise<SendsFound> {
  const byBatch = new Map<string, Map<string, Set<string>>>();
  for (const r of refs) {
    const ids = byBatch.get(r.batch) ?? new Map<string, Set<string>>();
    const digests = ids.get(r.notificationId) ?? new Set<string>();
    if (r.sha256 !== undefined) addDigest(digests, r.sha256);
    byBatch.set(r.batch, ids.set(r.notificationId, digests));
  }
  const proofs: SendProof[] = [];
  const unfound: UnfoundSend[] = [];
  // A feedback batch holds reports on several send batches: each read once.
  const feedbackBatches: FeedbackBatches = new Map();
  for (const [batch, ids] of byBatch) {
    const found =
      parseSliceBatch(batch) === undefined
        ? await sendsInBatch(store, batch, ids, options, feedbackBatches)
        : await sendsInSlice(store, batch, ids, sliceReading(store, batch, options, feedbackBatches));
    proofs.push(...found.proofs);
    unfound.push(...found.unfound);
  }
  // A record named under its slice and under its late object's name (the recovery's index entry) is read by both.
  const once = [...new Map(proofs.map((p) => [`${p.key} ${p.sha256}`, p])).values()];
  return { proofs: once.sort((a, b) => a.send.acceptedAt.localeCompare(b.send.acceptedAt)), unfound };
}

/** How a spool slice's sends are read: its objects as batches, the spool, the reports named by the slice. */
function sliceReading(
  store: EvidenceStore,
  slice: string,
  options: ReadOptions,
  feedbackBatches: FeedbackBatches,
): SliceReading {
  const { locator } = options;
  return {
    inObject: (name, ids) => sendsInBatch(store, name, ids, options, feedbackBatches, slice, true),
    ...(locator?.unrolled === undefined
      ? {}
      : { unrolled: (s: string) => locator.unrolled?.(s) ?? Promise.resolve([]) }),
    reportsOf: async (send) => {
      const reports = await reportsOn(store, slice, options, feedbackBatches);
      const own = dedupeReports(reports.found.filter((r) => r.report.providerMessageId === send.providerMessageId));
      const warnings = [...own.flatMap((r) => r.warnings), ...reports.warnings];
      return { feedback: own.map((r) => r.report), ...(warnings.length > 0 ? { warnings } : {}) };
    },
    // Without the table it is not known whether the spool holds it; with it, how long it has been on its way.
    notInStore: async (ids) =>
      locator?.unrolled === undefined ? notInStore(slice, ids, options) : sliceUnfound(slice, ids, Date.now()),
    ...(options.raw === undefined ? {} : { raw: options.raw }),
  };
}

async function sendsInBatch(
  store: EvidenceStore,
  batch: string,
  ids: ReadonlyMap<string, ReadonlySet<string>>,
  options: ReadOptions,
  feedbackBatches: FeedbackBatches,
  /** The batch the SENT writes name, when the record is in another object (a spool slice's): its reports are found by it. */
  named: string = batch,
  /** One of a slice's objects: a named record it lacks may be in another, and the slice's reader reports it. */
  ofSlice = false,
): Promise<SendsFound> {
  const key = batchObjectKey(batch);
  const [object] = await store.history(key);
  const read = object === undefined || object.key !== key ? undefined : await readFirst(store, object);
  // Named by the table or the index but not (yet) in the store: never "not sent".
  if (read === undefined) return { proofs: [], unfound: await notInStore(batch, ids, options) };
  const decoded = readBatch(read.bytes);
  const unfound: UnfoundSend[] = [];
  for (const bad of decoded.bad.filter((b) => b.entry.kind === 'SEND' && ids.has(b.entry.notificationId))) {
    const { notificationId, sha256 } = bad.entry;
    const why = `record ${bad.record} of ${key}: ${bad.reason}`;
    unfound.push(unfoundOf(notificationId, batch, namedAs(ids, notificationId, sha256), 'damaged', why));
  }
  const sends = decoded.records
    .map((r) => ({ ...r, record: decoded.header.records.indexOf(r.entry) }))
    .filter((r) => r.entry.kind === 'SEND' && ids.has(r.entry.notificationId));
  // Each named record the batch does not list: by its digest (two attempts of a notification are two records).
  for (const [id, digest] of ofSlice ? [] : eachNamed(ids)) {
    const listed = decoded.header.records.some(
      (e) => e.kind === 'SEND' && e.notificationId === id && (digest === undefined || digestMatches(digest, e.sha256)),
    );
    const which = digest === undefined ? '' : ` with this digest`;
    if (!listed) unfound.push(unfoundOf(id, batch, digest, 'notInBatch', `${key} holds no record of it${which}: lost`));
  }
  if (sends.length === 0) return { proofs: [], unfound };
  const reports = await reportsOn(store, named, options, feedbackBatches);
  const proofs: SendProof[] = [];
  for (const { entry, bytes, record } of sends) {
    let send: SendEvidence;
    try {
      send = parseEvidence(bytes) as SendEvidence;
    } catch (e) {
      const why = `record ${record} of ${key}: ${(e as Error).message}`;
      unfound.push(
        unfoundOf(entry.notificationId, batch, namedAs(ids, entry.notificationId, entry.sha256), 'damaged', why),
      );
      continue;
    }
    // A report whose send the feedback function could not place in its batch (a send an operator's resend took off
    // its notification, an item gone) is under the send's own key, as before batches.
    const own = dedupeReports([
      ...reports.found.filter((r) => r.report.providerMessageId === send.providerMessageId),
      ...(await reportsUnder(store, `${sendKey(send).slice(0, -'.json'.length)}.feedback/`)),
    ]);
    // Only a record no named digest matches: the others are other attempts' records of the notification.
    const mismatch = unnamedDigest("stored record's", entry.sha256, ids.get(entry.notificationId));
    const warnings = [...read.warnings, ...own.flatMap((r) => r.warnings), ...reports.warnings, ...mismatch];
    const versionId = object?.versions[0]?.versionId;
    proofs.push({
      key,
      record,
      sha256: entry.sha256,
      send,
      feedback: own.map((r) => r.report),
      ...(warnings.length > 0 ? { warnings: [...new Set(warnings)] } : {}),
      ...(versionId === undefined ? {} : { versionId }),
      entry,
      ...(options.raw === true ? { bytes: bytes.toString('base64') } : {}),
    });
  }
  return { proofs, unfound };
}

function unfoundOf(
  notificationId: string,
  batch: string,
  sha256: string | undefined,
  state: UnfoundSend['state'],
  why: string,
): UnfoundSend {
  return { notificationId, batch, ...(sha256 === undefined ? {} : { sha256 }), state, says: why };
}

/** The digest named for a notification that a record of it (its digest) is, else the first named. */
function namedAs(ids: ReadonlyMap<string, ReadonlySet<string>>, notificationId: string, sha256: string) {
  const named = [...(ids.get(notificationId) ?? [])];
  return named.find((d) => digestMatches(d, sha256)) ?? named[0];
}

/** The sends of a batch the store does not hold, with what the table says of it: a gap, an open intent, or neither. */
async function notInStore(
  batch: string,
  ids: ReadonlyMap<string, ReadonlySet<string>>,
  options: ReadOptions,
): Promise<UnfoundSend[]> {
  const state = await options.locator?.stateOf?.(batch);
  const [kind, why] = batchStateText(state);
  return eachNamed(ids).map(([id, sha256]) => {
    const named = `named in batch ${batch}${sha256 === undefined ? '' : ` (sha256 ${sha256})`}`;
    const says = `${named}; not in the store yet: a gap, pending recovery, or lost — ${why}`;
    return unfoundOf(id, batch, sha256, kind, says);
  });
}

function batchStateText(state: BatchState | undefined): [UnfoundSend['state'], string] {
  if (state?.gap !== undefined) {
    return [
      'gap',
      `its bytes wait in the table as an evidence gap since ${state.gap.since}; the sweeper writes them once the store accepts`,
    ];
  }
  const intent = state?.intent;
  if (intent !== undefined) {
    const failing =
      intent.attempts === undefined
        ? ''
        : `; ${intent.attempts} recovery attempt(s) failed (${intent.lastError ?? '?'}), next after ${new Date(intent.retryAt ?? 0).toISOString()}`;
    return [
      'pending',
      `its intent is open (due ${new Date(intent.dueMs).toISOString()}${failing}): the sweeper rebuilds it`,
    ];
  }
  if (state === undefined)
    return ['unknown', 'without the table, whether it is a gap or pending recovery is not known'];
  return [
    'lost',
    'no gap and no open intent: lost, unless its invocation had not yet opened one (EvidenceLost names a lost record)',
  ];
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

/** The feedback batches a read has opened: their reports, or why not (not in the store yet). */
type FeedbackBatches = Map<string, Promise<{ reports: Report[]; missing?: string }>>;

/**
 * Every report on a send batch's sends: in the feedback batches the table names for it (one object per feedback
 * invocation, whatever send batches its reports are on), and — as written before — under the batch's own prefix
 * (`<batch>.reports/`). A named feedback batch not in the store (a gap the sweeper writes) is said as a warning.
 */
async function reportsOn(
  store: EvidenceStore,
  batch: string,
  options: ReadOptions,
  feedbackBatches: FeedbackBatches,
): Promise<{ found: Report[]; warnings: string[] }> {
  const found: Report[] = [];
  for (const object of await store.history(reportsPrefix(batch))) {
    const read = await readFirst(store, object);
    if (read !== undefined) found.push(...reportsIn(read.bytes, read.warnings));
  }
  const warnings: string[] = [];
  for (const name of (await options.locator?.reportsOf?.(batch)) ?? []) {
    let opened = feedbackBatches.get(name);
    if (opened === undefined) {
      opened = feedbackBatch(store, name, options);
      feedbackBatches.set(name, opened);
    }
    const { reports, missing } = await opened;
    found.push(...reports);
    if (missing !== undefined) warnings.push(missing);
  }
  return { found, warnings };
}

/** The reports of one feedback batch, or why they cannot be read yet. */
async function feedbackBatch(
  store: EvidenceStore,
  name: string,
  options: ReadOptions,
): Promise<{ reports: Report[]; missing?: string }> {
  if (parseSliceBatch(name) !== undefined) return reportsInSlice(store, name, options);
  const key = batchObjectKey(name);
  const [object] = await store.history(key);
  const read = object === undefined || object.key !== key ? undefined : await readFirst(store, object);
  if (read !== undefined) return { reports: reportsIn(read.bytes, read.warnings) };
  const [, why] = batchStateText(await options.locator?.stateOf?.(name));
  return { reports: [], missing: `reports in ${name} are not in the store yet: ${why}` };
}

/** The reports a spool slice holds: in its objects once rolled (its own, late ones), before that in the spool. */
async function reportsInSlice(
  store: EvidenceStore,
  slice: string,
  options: ReadOptions,
): Promise<{ reports: Report[]; missing?: string }> {
  // The spool first (its cursor, then its items): a slice rolled meanwhile is then in the objects listed after.
  const spooled = (await options.locator?.unrolled?.(slice)) ?? [];
  const reports: Report[] = [];
  for (const object of await store.history(slice)) {
    if (object.key !== batchObjectKey(slice) && !isLateOf(object.key, slice)) continue;
    const read = await readFirst(store, object);
    if (read !== undefined) reports.push(...reportsIn(read.bytes, read.warnings));
  }
  // A report both rolled and still spooled (the roll-up between the two reads) is read once (dedupeReports).
  for (const s of spooled) {
    if (s.recordKind !== 'FEEDBACK') continue;
    reports.push({ report: parseEvidence(s.bytes) as FeedbackEvidence, warnings: [] });
  }
  return reports.length > 0 || options.locator?.unrolled === undefined
    ? { reports }
    : { reports, missing: `reports in ${slice} are neither in the store nor in the spool` };
}

const isLateOf = (key: string, slice: string) => key.startsWith(`${slice}late`) && key.endsWith('.jsonl.gz');

/** The reports of a batch object; a damaged one is left out, its neighbours read. */
function reportsIn(bytes: Uint8Array, warnings: string[]): Report[] {
  return readBatch(bytes).records.flatMap(({ entry, bytes: record }) =>
    entry.kind === 'FEEDBACK' ? [{ report: parseEvidence(record) as FeedbackEvidence, warnings }] : [],
  );
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
