/** What the operator's actions would do (their previews) and what they did, as text. */
import type {
  CorrectionReview,
  ErasureResult,
  ParkedBatch,
  RepairResult,
  ReplayResult,
  ResendPlan,
} from '../../../functions/operator/index.ts';

export const reviewText = (r: CorrectionReview) =>
  [
    `${r.id} (eventId ${r.eventId ?? 'unknown'}): the edited value changes ${r.changes.length} field(s) against the quarantined record${r.quarantinedValueTruncated ? ' (whose stored value was cut to 4 KB)' : ''}:`,
    ...r.changes.map(
      (c) => `  ${c.path}: ${JSON.stringify(c.before) ?? '(absent)'} → ${JSON.stringify(c.after) ?? '(absent)'}`,
    ),
  ].join('\n');

export const confirmText = (what: string, by: string, reason: string) =>
  `${what}, recorded as by ${by}: "${reason}". Add --confirm to do it.\n`;

export function resendPreviewText(id: string, plan: ResendPlan, by: string, reason: string): string {
  const { status, attempt, lastError, accepted } = plan;
  return (
    `${id} is ${status} (attempt ${attempt}${lastError ? `, last error ${lastError}` : ''}${accepted === undefined ? '' : `, accepted by the provider as message ${accepted}`}).\n` +
    `${status === 'UNKNOWN' && accepted === undefined ? 'UNKNOWN means the provider may have accepted it: check its records (SES events, SNS delivery logs) first.\n' : ''}` +
    confirmText(`Resending sends it once more${accepted === undefined ? '' : ' — a second copy'}`, by, reason)
  );
}

export const replayText = (results: readonly ReplayResult[]) =>
  results.map((r) => `${r.id}  ${r.outcome}${r.eventId === null ? '' : `  ${r.eventId}`}`).join('\n');

export const batchesText = (batches: readonly ParkedBatch[], dryRun: boolean) =>
  batches.length === 0
    ? 'no parked batches'
    : batches
        .map(
          (b) =>
            `${dryRun ? 'would replay' : 'replayed'} ${b.key} (${b.records} records, parked ${b.lastModified.toISOString()})`,
        )
        .join('\n');

export const repairText = (result: RepairResult) =>
  [
    `${result.eventId}  ${result.outcome}`,
    ...result.channels.map((c) => `  ${c.channel.padEnd(5)} ${c.status}${c.reason === null ? '' : ` (${c.reason})`}`),
    ...(result.quarantine === null
      ? []
      : [`  quarantined ${result.quarantine.id}: ${result.quarantine.reason} ${result.quarantine.detail}`]),
  ].join('\n');

export const erasureText = (result: ErasureResult) =>
  [
    `${result.userId}: erased ${result.erased.length} notification(s); preferences ${result.preferences}`,
    ...result.kept.map((k) => `  kept ${k.notificationId} (${k.status}: still to be sent; erase again once it is)`),
  ].join('\n');
