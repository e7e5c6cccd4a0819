/**
 * Scheduled Lambda (every minute): wakes deferred notifications whose retryAt came, re-drives stuck PENDING ones,
 * expires those past the maximum age, and resolves expired SENDING leases. Reports what it did and its rate.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { loadSweeperConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { count, countBy, logger, publishMetrics, traced } from '../commons/powertools.ts';
import { regionFenceOf } from '../commons/region-fence.ts';
import { CHANNELS } from '../domain/channels.ts';
import { parseNotificationId } from '../domain/keys.ts';
import { DynamoEvidenceGaps } from '../stores/evidence-gaps.ts';
import { DynamoEvidenceIndex } from '../stores/evidence-index.ts';
import { DynamoEvidenceIntents } from '../stores/evidence-intents.ts';
import { DynamoEvidenceSpool } from '../stores/evidence-spool.ts';
import { type EvidenceStore, evidenceStoreOf } from '../stores/evidence-store.ts';
import { DynamoLeaseCursors, type SavedLeasePass } from '../stores/lease-cursors.ts';
import type { SweepEntry } from '../stores/notification-store.ts';
import { DynamoSweepShardMark } from '../stores/sweep-shard-mark.ts';
import { DynamoSweepStore } from '../stores/sweep-store.ts';
import { fillEvidenceGaps } from './fill-evidence.ts';
import { keepRegion } from './keep-region.ts';
import type { LeasePassResult } from './lease-pass.ts';
import { type RecoverResult, recoverEvidenceBatches, respool } from './recover-evidence.ts';
import { checkSentFromItem } from './sent-from-item.ts';
import type { SpooledSends, SpoolLookups } from './spooled-send.ts';
import { type SweepResult, sweep } from './sweep.ts';

const config = loadSweeperConfig();
// Two regions: every sweeper write carries this region's epoch; a fenced region runs the keeper and rolls its own spool.
const fence = regionFenceOf();
const notificationStore = new DynamoSweepStore(documentClient, config.tableName, config.sweepShards, fence?.store);
const shardMark = new DynamoSweepShardMark(documentClient, config.tableName);
const leaseCursors = new DynamoLeaseCursors(documentClient, config.tableName);
/**
 * Time the due round leaves to the lease pass whatever its backlog: a dead holder's notice is found in the first run
 * after its lease under a backlog smaller than a run reads, within two of its rotation's cycles above that
 * (docs/guarantees.md, window 5).
 */
const LEASE_PASS_RESERVE_MS = 15_000;
const evidenceStore = evidenceStoreOf(config.evidence.store, () => traced(new S3Client({})));
const evidenceGaps = new DynamoEvidenceGaps(documentClient, config.tableName);
const evidenceIntents = new DynamoEvidenceIntents(documentClient, config.tableName);
const evidenceSpool = new DynamoEvidenceSpool(documentClient, config.evidence.spoolTableName ?? config.tableName, {
  formerTable: config.tableName,
});
/** The main table's spool, where an earlier version put its items: rolled too, until it is empty. */
const formerSpool = evidenceSpool.former();
/** Spooled records one run rolls at most per shard (whole slices): a backlog drains over a few runs. */
const EVIDENCE_SPOOL_PER_RUN = 5_000;
const evidenceIndex = {
  index: new DynamoEvidenceIndex(documentClient, config.evidenceIndexTableName),
  retentionDays: config.evidence.retentionDays,
};
/**
 * Spool records one run's look-ups of expired leases read at most (spooled-send.ts): about 4 minutes of a spool taking
 * 80 records a second (a record is decoded in about 25 µs: half a second of a core). Past it, or past the run's
 * deadline, a lease not found in what was read is left for a later run (SpoolLookupsDeferred: lease-pass.ts), for at most
 * SPOOL_LOOKUP_WAIT_MS after its lease's end; then decided by its channel's policy, counted (SpoolLookupsSkipped).
 */
const SPOOL_LOOKUP_RECORDS_PER_RUN = 20_000;
/** Gaps one run fills at most: a store outage's backlog drains over a few runs without crowding out the sweep. */
const EVIDENCE_GAPS_PER_RUN = 500;
/**
 * Dead invocations' intents one run reads at most; the work is bounded by time: recovery may use half of what the run
 * has left after the sweep, the gaps the rest (docs/evidence-and-privacy.md "When the evidence lands").
 */
const EVIDENCE_INTENTS_PER_RUN = 500;
const EVIDENCE_RECOVERY_SHARE = 0.5;
/**
 * Time the sweep leaves to the evidence whatever its backlog: dead invocations cluster in the incidents that make the
 * sweep run to its deadline, and their batches must not wait for the backlog to end.
 */
const EVIDENCE_RESERVE_MS = 15_000;

export const handler = async (_event: unknown, context: Context) => {
  logger.addContext(context);
  try {
    if (fence !== undefined && !(await keepRegion(fence, config.tableName))) return await fencedRun(context);
    // Every shard any deploy wrote keys to: max(the mark, this deploy's count), raising the mark to the latter.
    const shards = await shardMark.raise(config.sweepShards, Date.now());
    const savedLeaseCursors = await leaseCursors.load();
    const sweepBy =
      Date.now() +
      context.getRemainingTimeInMillis() -
      config.deadlineMarginMs -
      (evidenceStore === undefined ? 0 : EVIDENCE_RESERVE_MS);
    const spooled = spoolLookUps(sweepBy);
    const r = await sweep({
      store: notificationStore,
      now: Date.now,
      ...config,
      shards,
      ...(evidenceStore === undefined ? {} : { spooled }),
      leaseReserveMs: LEASE_PASS_RESERVE_MS,
      leaseCursors: savedLeaseCursors.cursors,
      leaseResumeAt: savedLeaseCursors.resumeAt,
      leaseWalkFirst: savedLeaseCursors.walkFirst,
      leaseAt: savedLeaseCursors.leaseAt,
      deadline: sweepBy,
    });
    const spoolLookups = await spooled.done();
    const perSecond = r.elapsedMs > 0 ? Math.round((r.examined * 1000) / r.elapsedMs) : r.examined;
    count('SweeperRedriven', r.redriven.length + r.resolvedRetry.length);
    count('SweeperWoken', r.woken.length);
    for (const channel of CHANNELS)
      countBy('NotificationsReleased', { channel }, r.released.filter((e) => e.channel === channel).length);
    count('SweeperResolvedUnknown', r.resolvedUnknown.length);
    count('SweeperResolvedSent', r.resolvedSent.length);
    count('SweeperExamined', r.examined);
    count('SweeperItemsPerSecond', perSecond, MetricUnit.CountPerSecond);
    count('SweeperUnfinished', r.unfinished);
    count('SweeperLeasePassUnfinished', r.leasePass.unfinished);
    count('SweeperLeaseCursorsDropped', r.leasePass.dropped.length);
    // Partitions whose Query failed this run, the due round's or the lease pass's, each once.
    count('SweeperLeasePartitionsFailed', new Set([...r.failed, ...r.leasePass.failed].map((f) => f.partition)).size);
    await keepLeasePass(savedLeaseCursors, r.leasePass, r.failed);
    count('SpoolLookupsSkipped', spoolLookups?.skipped ?? 0);
    count('SpoolSendsLeftForNextRun', spoolLookups?.later ?? 0);
    count('SpoolLookupsDeferred', spoolLookups?.deferred ?? 0);
    for (const channel of CHANNELS) {
      countBy('UnknownOutcomes', { channel }, r.resolvedUnknown.filter((e) => e.channel === channel).length);
      countBy('NotificationsExpired', { channel }, r.expired.filter((e) => e.channel === channel).length);
    }
    // The sweep's counts (SweeperFoundStuck reads them) before the evidence work, which may run to the deadline.
    publishMetrics();
    logSweep(r);
    const summary = {
      redriven: r.redriven.length,
      woken: r.woken.length,
      released: r.released.length,
      expired: r.expired.length,
      resolvedUnknown: r.resolvedUnknown.length,
      resolvedRetry: r.resolvedRetry.length,
      resolvedSent: r.resolvedSent.length,
      lostRaces: r.lostRaces,
      examined: r.examined,
      pages: r.pages,
      unfinished: r.unfinished,
      leasePages: r.leasePass.pages,
      leasePassUnfinished: r.leasePass.unfinished,
      // Partitions kept only for a lease left for the next run (a spool look-up cut, a SENT write failed): no backlog.
      leasePassDeferred: r.leasePass.deferred,
      elapsedMs: r.elapsedMs,
      itemsPerSecond: perSecond,
      shards,
      ...(spoolLookups === undefined ? {} : { spoolLookups }),
    };
    // After the sweep (the notifications first): the evidence writers could not store at once.
    const deadline = () => Date.now() + context.getRemainingTimeInMillis() - config.deadlineMarginMs;
    const recoveryBy = Date.now() + Math.max(0, deadline() - Date.now()) * EVIDENCE_RECOVERY_SHARE;
    const recovered = evidenceStore === undefined ? undefined : await recoverBatches(evidenceStore, recoveryBy);
    // After recovery (it spools what it rebuilt): the closed slices of the spool, each as one object.
    const rolledUp = evidenceStore === undefined ? undefined : await rollUp(evidenceStore, deadline());
    const evidence =
      evidenceStore === undefined ? undefined : await fillGaps(evidenceStore, deadline(), recovered?.open ?? 0);
    if (recovered !== undefined) await reportRecovered(recovered);
    // After recovery, the roll-up and the gaps, which index what they write: a send SENT from its item's message id —
    // but not one recovery counted lost in this run (its intent named it too): counted once, by one owner.
    const lostByRecovery = new Set(recovered?.lost.map((l) => l.notificationId));
    const fromItem =
      evidenceStore === undefined ? undefined : await reportSentFromItem(r.sentFromItem, lostByRecovery, evidenceStore);
    logger.info('sweep finished', { ...summary, evidence, recovered, rolledUp, ...fromItem });
    return {
      ...summary,
      ...fromItem,
      ...(rolledUp === undefined ? {} : { rolledUp }),
      ...(evidence === undefined ? {} : { evidence }),
      ...(recovered === undefined ? {} : { recovered }),
    };
  } finally {
    publishMetrics();
  }
};

/** The evidence gaps this run fills (at most EVIDENCE_GAPS_PER_RUN, by its deadline), counted and logged. */
async function fillGaps(store: EvidenceStore, deadline: number, recoveredOpen: number) {
  const evidence = await fillEvidenceGaps({
    gaps: evidenceGaps,
    store,
    index: evidenceIndex,
    now: Date.now,
    deadline,
    limit: EVIDENCE_GAPS_PER_RUN,
  });
  count('EvidenceGapsFilled', evidence.filled);
  count('EvidenceGapsOpen', evidence.open + recoveredOpen);
  if (evidence.removed.length > 0) {
    logger.warn('evidence gaps in parts never all written: removed', { removed: evidence.removed.slice(0, 10) });
  }
  if (evidence.damaged.length > 0) {
    logger.error('evidence gap filled with records that do not match their hash', {
      damaged: evidence.damaged.slice(0, 10),
    });
  }
  if (evidence.errors.length > 0) {
    logger.error('evidence gaps still open: the evidence store refused', { errors: evidence.errors.slice(0, 10) });
  }
  return evidence;
}
/**
 * A dead holder's sends SENT from the message id on their items (sent-from-item.ts): each names its record, kept or
 * rebuilt now; one nowhere that no rebuild matches is lost (EvidenceLost, alarmed, logged with its ids). One naming no
 * record (extended by an earlier version) that no index names is counted unconfirmed (EvidenceUnconfirmed, not
 * alarmed: lost with its holder, or not indexed yet). One the run could not check is counted EvidenceUnchecked (not
 * alarmed, never checked again: the log names it). What it found, for the run's answer.
 */
async function reportSentFromItem(sent: readonly SweepEntry[], lostByRecovery: Set<string>, store: EvidenceStore) {
  if (sent.length === 0) return { evidenceUnconfirmed: 0, evidenceLost: 0, evidenceKept: 0, evidenceUnchecked: 0 };
  const rebuild = lazyRebuilder();
  const checked = await checkSentFromItem(sent, {
    lostByRecovery,
    epoch: await fence?.store.claimEpoch().catch(() => undefined),
    notifications: notificationStore,
    index: evidenceIndex.index,
    keep: async (items) =>
      respool(
        items,
        {
          spool: evidenceSpool,
          outlets: { store, gaps: evidenceGaps, index: evidenceIndex },
          now: Date.now,
          timeoutMs: config.evidence.timeoutMs,
        },
        await rebuild(),
      ),
  });
  for (const e of checked.notKept) {
    countBy('EvidenceUnconfirmed', { channel: e.channel });
    logger.warn("a dead holder's send SENT from the message id on its item, naming no record: no index names one", {
      notificationId: e.notificationId,
      attempt: e.attempt,
    });
  }
  for (const e of checked.elsewhere) {
    countBy('EvidenceUnconfirmed', { channel: e.channel });
    logger.warn(
      "a dead holder's send SENT from its item, claimed at another epoch: its record may be in that region's spool",
      {
        notificationId: e.notificationId,
        attempt: e.attempt,
      },
    );
  }
  for (const lost of checked.lost) {
    countBy('EvidenceLost', { channel: parseNotificationId(lost.notificationId)?.channel ?? 'unknown' });
    logger.error(
      "evidence lost: a dead holder's send SENT from its item names a record neither the spool nor the store holds, and no rebuild matches its digest",
      lost,
    );
  }
  // One line each, as for the lost: never checked again, each is found by its line (operations.md).
  for (const u of checked.unchecked) {
    countBy('EvidenceUnchecked', { channel: parseNotificationId(u.notificationId)?.channel ?? 'unknown' });
    logger.error("a dead holder's send SENT from its item's message id: its record could not be checked", u);
  }
  return {
    evidenceUnconfirmed: checked.notKept.length + checked.elsewhere.length,
    evidenceLost: checked.lost.length,
    evidenceKept: checked.kept,
    evidenceUnchecked: checked.unchecked.length,
  };
}

/** How a SENT notification's record is rebuilt (rebuild-evidence.ts): loaded once, when first needed (the templates). */
function lazyRebuilder() {
  let rebuilder: ReturnType<typeof loadRebuilder> | undefined;
  return () => {
    rebuilder ??= loadRebuilder();
    return rebuilder;
  };
}

const loadRebuilder = async () =>
  (await import('./rebuild-evidence.ts')).rebuilderOf({
    ...config.rebuild,
    retentionDays: config.evidence.retentionDays,
  });

/**
 * Keeps where the lease pass stopped: written only while a backlog leaves partitions unfinished (their cursors and
 * where the rotation stopped) or a lease is left for the next run (its partition, walked first), and once more to
 * clear what an earlier run left. A cursor it set aside is logged, and the partitions whose Query failed.
 */
async function keepLeasePass(saved: SavedLeasePass, pass: LeasePassResult, dueFailed: SweepResult['failed']) {
  if (dueFailed.length > 0)
    logger.error('due round: Query failed; partitions left for the next run', { failed: dueFailed.slice(0, 10) });
  for (const d of pass.dropped)
    logger.warn("lease pass cursor set aside; its partition read from the due round's stop", d);
  if (pass.failed.length > 0)
    logger.error('lease pass: Query failed; partitions kept for the next run', { failed: pass.failed.slice(0, 10) });
  const leftOver = (p: Pick<SavedLeasePass, 'cursors' | 'resumeAt' | 'walkFirst'>) =>
    Object.keys(p.cursors).length > 0 || p.resumeAt !== undefined || p.walkFirst.length > 0;
  if (leftOver(pass) || leftOver(saved)) {
    await leaseCursors.save(pass.cursors, Date.now(), pass.resumeAt, pass.walkFirst, pass.leaseAt);
  }
}

/**
 * A fenced region's run, after the keeper: nothing that acts on a notification (no sweep, no rebuild, no gap filled:
 * the active region does those, on the global table). Only this region's own spool is rolled into this region's
 * evidence store, and its age and unread count published: the spool table is regional, so its last minutes before a
 * switchover or a failover are rolled by nobody else (docs/regions.md "Windows that remain"). Rolling sends nothing and
 * writes no notification: the objects (each once, If-None-Match) and this table's own cursor. The main table's former
 * spool is the active region's to drain (its cursor and deletes replicate).
 */
async function fencedRun(context: Context) {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - config.deadlineMarginMs;
  // A spool without a table of its own is the main table's, replicated: the active region's to roll.
  const own = evidenceStore !== undefined && config.evidence.spoolTableName !== undefined;
  const rolledUp = own ? await rollUp(evidenceStore, deadline, [evidenceSpool]) : undefined;
  if (rolledUp !== undefined) logger.info('fenced: the spool rolled', { rolledUp });
  return {
    fenced: true,
    redriven: 0,
    woken: 0,
    expired: 0,
    resolvedUnknown: 0,
    resolvedRetry: 0,
    ...(rolledUp === undefined ? {} : { rolledUp }),
  };
}

/**
 * An expired lease whose holder spooled its send's record before it died: SENT with it (spooled-send.ts). One per run
 * (the spool minutes it reads are shared by the run's look-ups, and dropped with it), loaded with the run's first
 * expired lease; `done` tells what its look-ups did (none: undefined).
 */
function spoolLookUps(deadline: number) {
  let lookUps: Promise<SpooledSends> | undefined;
  const spooled: Pick<SpooledSends, 'resolve'> & { done(): Promise<SpoolLookups | undefined> } = {
    resolve: async (e, now) => {
      lookUps ??= import('./spooled-send.ts').then((m) =>
        m.spooledSends({
          notifications: notificationStore,
          spool: evidenceSpool,
          outlets: { index: evidenceIndex },
          now: Date.now,
          deadline,
          maxRecords: SPOOL_LOOKUP_RECORDS_PER_RUN,
        }),
      );
      return (await lookUps).resolve(e, now);
    },
    done: async () => (await lookUps)?.lookups,
  };
  return spooled;
}

/** Every spool's closed slices, each as one object (roll-up-evidence.ts), reported. */
async function rollUp(
  store: EvidenceStore,
  deadline: number,
  spools = [evidenceSpool, ...(formerSpool === undefined ? [] : [formerSpool])],
) {
  // Loaded with the first roll-up, not at a cold start (the sweeper's bundle budget: test/tools/bundle-budget.test.ts).
  const { reportRolledUp, rollUpSpools } = await import('./roll-up-evidence.ts');
  const rolledUp = await rollUpSpools(spools, (spool) => ({
    spool,
    store,
    now: Date.now,
    deadline,
    limit: EVIDENCE_SPOOL_PER_RUN,
    timeoutMs: config.evidence.timeoutMs,
    index: evidenceIndex,
  }));
  await reportRolledUp(rolledUp, spools, Date.now());
  return rolledUp;
}

/** Dead dispatch invocations' batches (recover-evidence.ts), each record rebuilt and checked against its digest. */
function recoverBatches(store: EvidenceStore, deadline: number): Promise<RecoverResult> {
  return recoverEvidenceBatches({
    intents: evidenceIntents,
    notifications: notificationStore,
    outlets: { store, gaps: evidenceGaps, index: evidenceIndex },
    spool: evidenceSpool,
    // Rendering loads the templates: only when an intent is overdue.
    rebuilder: loadRebuilder,
    now: Date.now,
    deadline,
    limit: EVIDENCE_INTENTS_PER_RUN,
    index: evidenceIndex.index,
    timeoutMs: config.evidence.timeoutMs,
    // A partition further each minute: the oldest intents of one never hold the others back.
    start: Math.floor(Date.now() / 60_000),
  });
}

const LOST_WORDS: Record<RecoverResult['lost'][number]['reason'], string> = {
  ITEM_GONE: 'evidence not recoverable: the notification item was gone before the rebuild',
  MISMATCH: 'evidence not recoverable: the rebuilt record does not match its digest',
  RESENT: "evidence not recoverable: an operator's resend took the send off its notification before the rebuild",
  UNNAMED:
    'evidence not recoverable: the notification is SENT naming no record (its lease extended by an earlier version), and no index names one',
};

/**
 * Batches finished by the sweeper, records no rebuild could match (lost: alarmed, logged with ids only), and how late
 * the oldest intent still open is (0 when none is): the EvidenceIntentOldestAge alarm reads it.
 */
async function reportRecovered(r: RecoverResult): Promise<void> {
  try {
    const oldest = await evidenceIntents.oldestDueMs();
    const ageSeconds = oldest === undefined ? 0 : Math.max(0, Math.round((Date.now() - oldest) / 1000));
    count('EvidenceIntentOldestAge', ageSeconds, MetricUnit.Seconds);
  } catch (error) {
    // No datapoint this run (a missing one does not breach): a metric's read never fails the sweep's own work.
    logger.error('the oldest evidence intent could not be read', { error: (error as Error)?.name });
  }
  if (r.recovered > 0) logger.warn('evidence batches of ended invocations finished', { ...r, lost: r.lost.length });
  for (const lost of r.lost) {
    countBy('EvidenceLost', { channel: parseNotificationId(lost.notificationId)?.channel ?? 'unknown' });
    logger.error(LOST_WORDS[lost.reason], lost);
  }
  if (r.errors.length > 0) logger.error('evidence batches still open', { errors: r.errors.slice(0, 10) });
}

/** What the sweep did to each notification, one line each: the runbook finds a notice's re-drive or outcome by id. */
function logSweep(r: SweepResult): void {
  for (const e of r.redriven) logger.warn('stuck PENDING notification re-driven', { notificationId: e.notificationId });
  for (const e of r.resolvedRetry)
    logger.warn('expired lease; released for resend', { notificationId: e.notificationId });
  for (const e of r.resolvedUnknown)
    logger.error('expired lease; outcome UNKNOWN', { notificationId: e.notificationId });
  for (const e of r.resolvedSent)
    logger.warn('expired lease; the provider had accepted (recorded on the item or in the evidence spool): SENT', {
      notificationId: e.notificationId,
    });
  for (const e of r.expired)
    logger.error('notification expired before it could be sent', {
      notificationId: e.notificationId,
      reason: 'EXPIRED',
    });
}
