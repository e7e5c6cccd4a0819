/** The local run's summary: the report (one JSON document with --json) and the text a person reads. */

import { EQUATION_TERMS } from '../../functions/contracts/ingest-figures.ts';
import { parseNotificationId } from '../../functions/domain/keys.ts';
import { displayName } from '../../functions/domain/mailbox-name.ts';
import type { OutboxRow } from './outbox-page.ts';
import type { TableSummary } from './outcomes.ts';
import type { AcceptedSend } from './providers.ts';

export { EQUATION_TERMS };

export type Report = {
  interrupted?: boolean;
  recordsRead?: number;
  events: Record<string, number>;
  reconciled: boolean;
  notifications: Record<string, number>;
  outcomes: TableSummary['outcomes'];
  outcomesNotListed: number;
  feedback: { delivered: number; snsDeliveryStatus: number };
  preferences: TableSummary['preferences'];
  suppressions: TableSummary['suppressions'];
  pacing: { seconds: number; deferred: number; providerThrottled: { SES: number; SNS: number } };
  sends: ReturnType<typeof sendView>[];
  sendsNotListed: number;
  quarantined: number;
  quarantine: TableSummary['quarantine'];
  onFailure: number;
  outbox: string;
  /** The support console (tools/local/console.ts): sign in as one of the run's own users. */
  console: string;
  /** The run's DynamoDB Local: what `npm run ops -- --endpoint` names. */
  endpoint: string;
  /** This run's own folder: its log file, its evidence (npm start writes each run to a new one). */
  run: string;
  log: string | null;
  evidence: { dir: string; gaps: number; gapsFilled: number; lost: number };
};

export function sendView(s: AcceptedSend, notificationIdOfMessage: ReadonlyMap<string, string>) {
  // SMS carries no id of ours: the table's providerMessageId ties the provider's message back to the notification.
  const notificationId = s.notificationId ?? notificationIdOfMessage.get(s.messageId) ?? null;
  return {
    notificationId,
    eventId: notificationId === null ? null : (parseNotificationId(notificationId)?.eventId ?? null),
    channel: s.channel,
    to: s.to,
    from: s.from ?? null,
    subject: s.subject ?? null,
    text: s.text,
    html: s.html ?? null,
  };
}

/** The outcomes table's rows: each outcome with what its provider received (subject, or the text's first line). */
export function outboxRows(r: Report): OutboxRow[] {
  return r.outcomes.map((o) => {
    const send = r.sends.find((s) => s.notificationId === o.notificationId);
    const sent = send === undefined ? null : String(send.subject ?? String(send.text).split('\n')[0] ?? '');
    return { ...o, channel: parseNotificationId(o.notificationId)?.channel ?? '', sent };
  });
}

export function humanSummary(r: Report, seconds: number, viewer: string, keep: boolean): string {
  const lines = [
    '',
    r.interrupted
      ? `notifier local run — INTERRUPTED after ${seconds.toFixed(1)} s and ${r.recordsRead} records read: a partial summary`
      : `notifier local run — converged in ${seconds.toFixed(1)} s`,
    '',
    `events         delivered ${r.events.delivered} = ${EQUATION_TERMS.map((t) => `${t} ${r.events[t]}`).join(' + ')}${r.reconciled ? '' : '  ← DOES NOT RECONCILE'}`,
    `               of the accepted: without a channel to send ${r.events.withoutNotifications}  too old to send ${r.events.tooOld}  display text cleaned ${r.events.displayTextSanitised}  card numbers masked ${r.events.cardNumbersMasked}`,
    `               with a channel refused ${r.events.withRefusedChannels}  spellings normalised ${r.events.spellingsNormalised}  language fell back ${r.events.localeFallbacks}  time zone fell back ${r.events.timeZoneFallbacks}  of the duplicates: repairs ${r.events.repairs}`,
    `notifications  created ${r.notifications.created}  sent ${r.notifications.sent}  failed ${r.notifications.failed}  unknown ${r.notifications.unknown}  suppressed ${r.notifications.suppressed}  refused ${r.notifications.refused} (repaired since ${r.notifications.repaired})${r.interrupted ? `  still pending ${r.notifications.pending}  sending ${r.notifications.sending}` : ''}`,
    `               the right moment: held for their window ${r.notifications.held}  expired ${r.notifications.expired}  superseded ${r.notifications.superseded}  throttled ${r.notifications.throttled}`,
    `feedback       to the feedback function: SES events ${r.feedback.delivered}, SNS delivery status log entries ${r.feedback.snsDeliveryStatus}`,
    `stream         records given up to the on-failure queue: ${r.onFailure}`,
    `pacing         deferred ${r.pacing.deferred}  throttled by SES ${r.pacing.providerThrottled.SES}, by SNS ${r.pacing.providerThrottled.SNS}`,
    '',
    'sends (what SES and SNS received):',
    ...r.sends.slice(0, 20).map((s) => {
      const sender = s.from === null ? undefined : displayName(s.from);
      // An email's text alternative has several lines: the first sentence after the bank's name says what happened.
      const text = String(s.text)
        .split('\n')
        .filter((line) => line !== '' && line !== sender);
      return `  ${String(s.channel).padEnd(5)} ${String(s.notificationId).padEnd(22)} ${sender === undefined ? '' : `from ${sender} `}${s.subject ? `"${s.subject}" ` : ''}${(text[0] ?? '').slice(0, 70)}`;
    }),
    ...(r.sends.length + r.sendsNotListed > 20 ? [`  … and ${r.sends.length + r.sendsNotListed - 20} more`] : []),
    '',
    'outcomes (status · what the provider said after accepting · why not sent or not delivered):',
    ...r.outcomes
      .slice(0, 40)
      .map(
        (o) =>
          `  ${o.notificationId.padEnd(32)} ${o.status.padEnd(10)} ${(o.deliveryStatus ?? '-').padEnd(10)} ${o.reason ?? ''}`,
      ),
    ...(r.outcomes.length + r.outcomesNotListed > 40
      ? [`  … and ${r.outcomes.length + r.outcomesNotListed - 40} more`]
      : []),
    '',
    ...momentLines(r),
    ...(r.preferences.length + r.suppressions.length === 0
      ? []
      : [
          'preferences (newest occurredAt wins):',
          ...r.preferences.map(
            (p) =>
              `  ${p.eventId.padEnd(22)} occurred ${p.occurredAt}  ${p.applied ? 'applied' : 'older than the one in force: changed nothing'}`,
          ),
          ...r.suppressions.map(
            (x) =>
              `suppressed     ${x.channel} ${x.addressHash.slice(0, 12)}… ${x.cause} since ${x.since} (from ${x.notificationId})`,
          ),
          '',
        ]),
    `quarantine (${r.quarantined}):`,
    ...r.quarantine
      .slice(0, 20)
      .map(
        (q) =>
          `  offset ${String(q.offset).padEnd(6)} ${String(q.reason).padEnd(18)} ${q.eventId === null ? '' : `${q.eventId}: `}${q.detail ?? ''}`,
      ),
    ...(r.quarantined > 20
      ? [
          `  … and ${r.quarantined - 20} more (--json lists ${r.quarantined > r.quarantine.length ? `the first ${r.quarantine.length} by offset` : 'them all'})`,
        ]
      : []),
    '',
    `outbox page:  ${r.outbox} — what each customer got${keep ? '' : ' (up while the run lasts; add --keep to browse it)'}`,
    `support console: ${r.console} — look a customer up, propose a resend, approve it${keep ? '' : ' (with --keep)'}`,
    `email viewer: ${viewer}`,
    ...(r.log === null ? [] : [`handler logs and metrics: ${r.log}`]),
    `this run:     ${r.run} — its own evidence and log, apart from every other run's`,
    `evidence:     ${r.evidence.dir} (gaps ${r.evidence.gaps}, filled ${r.evidence.gapsFilled}, lost ${r.evidence.lost}) — npm run ops -- evidence <eventId> --endpoint ${r.endpoint}`,
    '',
  ];
  return lines.join('\n');
}

const MOMENT_STATUSES = new Set(['HELD', 'EXPIRED', 'SUPERSEDED', 'THROTTLED']);

/**
 * The notices the right moment stopped, each with why and until when (docs/dispatch.md "The right moment"): a held one
 * is waiting for its window, not lost, and the run converged with it.
 */
function momentLines(r: Report): string[] {
  const stopped = r.outcomes.filter((o) => MOMENT_STATUSES.has(o.status));
  if (stopped.length === 0) return [];
  return [
    'the right moment (held until the window opens, or not sent: expired, superseded, throttled):',
    ...stopped.slice(0, 20).map((o) => `  ${o.notificationId.padEnd(32)} ${o.status.padEnd(10)} ${o.reason ?? ''}`),
    ...(stopped.length > 20 ? [`  … and ${stopped.length - 20} more (--json lists them)`] : []),
    '',
  ];
}
