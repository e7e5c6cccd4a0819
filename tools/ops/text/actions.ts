/** What the operator's actions would do (their previews), what they did, and the proposals of four eyes, as text. */
import {
  type ErasureResult,
  identityText,
  type ParkedBatch,
  type PreviewAnswer,
  type ProposalView,
  type RepairResult,
  type ReplayResult,
} from '../../../functions/operator/index.ts';
import { heldPreviewText } from './held.ts';

/** What the edited value of a replay changes, field by field. */
const reviewText = (r: {
  id: string;
  eventId: string | null;
  changes: { path: string; before: unknown; after: unknown }[];
  quarantinedValueTruncated: boolean;
}) =>
  [
    `${r.id} (eventId ${r.eventId ?? 'unknown'}): the edited value changes ${r.changes.length} field(s) against the quarantined record${r.quarantinedValueTruncated ? ' (whose stored value was cut to 4 KB)' : ''}:`,
    ...r.changes.map(
      (c) => `  ${c.path}: ${JSON.stringify(c.before) ?? '(absent)'} → ${JSON.stringify(c.after) ?? '(absent)'}`,
    ),
  ].join('\n');

/** The preview of an action: what it found and what it would do, in the words of each action. */
export function previewText(a: Extract<PreviewAnswer, { ok: true }>): string {
  // biome-ignore lint/suspicious/noExplicitAny: each action shows its own fields (functions/operator)
  const s = a.shown as Record<string, any>;
  switch (a.action) {
    case 'RESEND': {
      const accepted = s.despiteAccepted as string | undefined;
      return (
        `${a.target} is ${s.fromStatus} (attempt ${s.attempt}${s.lastError ? `, last error ${s.lastError}` : ''}${accepted === undefined ? '' : `, accepted by the provider as message ${accepted}`}).\n` +
        `${s.fromStatus === 'UNKNOWN' && accepted === undefined ? 'UNKNOWN means the provider may have accepted it: check its records (SES events, SNS delivery logs) first.\n' : ''}` +
        `Resending sends it once more${accepted === undefined ? '' : ' — a second copy'}.`
      );
    }
    case 'REPLAY':
      return [
        ...(s.review === undefined ? [] : [reviewText(s.review)]),
        ...s.records.map(
          (r: { id: string; reason: string; eventId: string | null }) => `  ${r.id}  ${r.reason}  ${r.eventId ?? '-'}`,
        ),
        `Replaying ${s.records.length} record(s) through ingest with the ${s.value} value.`,
      ].join('\n');
    case 'REPLAY_BATCHES':
      return `${batchesText(s.batches, true)}\nReplaying feeds each batch to the ingest function, oldest first.`;
    case 'REPAIR':
      return [
        ...s.refused.map(
          (r: { channel: string; reason: string; detail: string }) =>
            `  ${r.channel.padEnd(5)} REFUSED (${r.reason}: ${r.detail}) → ${s.suppliedContactPoints[r.channel] ?? '(none supplied)'}`,
        ),
        `Repairing feeds the corrected event through ingest: these channels are sent to the contact points above.`,
      ].join('\n');
    case 'SUPPRESSION_LIFT':
      return s.stillBlocked === undefined
        ? `${a.target} is suppressed (${s.cause} since ${s.since}, from ${s.notificationId}).\nLifting it lets the next notification to this address be sent.`
        : `${a.target} is suppressed (${s.cause} since ${s.since}, from ${s.notificationId}).\n${s.stillBlocked}\nLifting it lets the next text to this number be tried.`;
    case 'EXPORT':
      return `Exporting everything above (${s.events} event(s), ${s.evidence} evidence record(s)) as one JSON document.`;
    case 'REVEAL':
      return `Showing the ${s.channel} contact point of ${a.target} in full, to you alone.`;
    case 'RELEASE_HELD':
    case 'SETTLE_HELD':
      return heldPreviewText(a.action, a.target, s);
    case 'ERASE':
      return `Erasing the personal data of ${s.erase.length} finished notification(s) from the table (in flight or their evidence not yet written, kept: ${s.keep.length}; evidence under retention stays).`;
  }
}

export const replayText = (results: readonly ReplayResult[]) =>
  results
    .map(
      (r) =>
        `${r.id}  ${r.outcome}${r.eventId === null ? '' : `  ${r.eventId}`}${r.why === undefined ? '' : `  (${r.why})`}`,
    )
    .join('\n');

export const batchesText = (batches: readonly ParkedBatch[], preview = false) =>
  batches.length === 0
    ? 'no parked batches'
    : batches
        .map(
          (b) => `${preview ? 'would replay' : 'replayed'} ${b.key} (${b.records} records, parked ${b.lastModified})`,
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
    ...result.kept.map(
      (k) => `  kept ${k.notificationId} (${k.status}: ${k.waits ?? 'still to be sent; erase again once it is'})`,
    ),
  ].join('\n');

export const proposalText = (p: ProposalView) =>
  [
    `${p.id}  ${p.status}  ${p.action} ${p.target}${p.userId === undefined ? '' : `  (customer ${p.userId})`}`,
    `  proposed by ${identityText(p.proposedBy)} at ${p.proposedAt}, approvable until ${p.approveBy}`,
    `  why: ${p.reason}`,
    `  shown: ${JSON.stringify(p.shown)}`,
    ...(p.decidedBy === undefined
      ? []
      : [`  ${p.state.toLowerCase()} by ${identityText(p.decidedBy)} at ${p.decidedAt}: ${p.decisionReason}`]),
    ...(p.outcome === undefined ? [] : [`  outcome: ${p.outcome.result} ${JSON.stringify(p.outcome.details)}`]),
  ].join('\n');

export const proposalsText = (list: readonly ProposalView[], status: string | undefined) =>
  list.length === 0 ? `no proposal${status === undefined ? '' : ` ${status}`}` : list.map(proposalText).join('\n');

export const approvalText = (p: ProposalView, outcome: unknown) =>
  `${proposalText(p)}\n${JSON.stringify(outcome, null, 2)}`;
