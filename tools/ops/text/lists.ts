/** The operator's lists as text: quarantined records, refused notifications, suppressions, audited actions. */
import type { Channel } from '../../../functions/domain/channels.ts';
import type { RejectionReason } from '../../../functions/domain/event/contract.ts';
import { CURABLE_BY_REPLAY } from '../../../functions/domain/event/replay-cure.ts';
import {
  countBy,
  identityText,
  type ListedAuditRecord,
  producerText,
  type QuarantineView,
  type RefusedView,
  type SuppressionView,
} from '../../../functions/operator/index.ts';

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** "  3  INVALID_JSON" lines: an incident's shape at a glance. */
const counted = (title: string, counts: readonly { value: string; count: number }[]) => [
  `by ${title}:`,
  ...counts.map((c) => `  ${String(c.count).padStart(5)}  ${c.value}`),
];

export const quarantineText = (list: readonly QuarantineView[]) => {
  if (list.length === 0) return 'no quarantined records';
  const waiting = list.filter((q) => q.replayedAt === null);
  const open = waiting.filter((q) => CURABLE_BY_REPLAY.has(q.reason as RejectionReason)).map((q) => q.id);
  const asIsNoCure = waiting.filter((q) => !CURABLE_BY_REPLAY.has(q.reason as RejectionReason));
  return [
    `${plural(list.length, 'quarantined record')} (newest first)`,
    ...counted(
      'reason',
      countBy(list, (q) => q.reason),
    ),
    ...counted('producer (topic, record key, headers)', countBy(list, producerText)),
    ...list.map(
      (q) =>
        `${q.receivedAt}  ${q.id}  ${q.reason}${q.eventId === null ? '' : `  ${q.eventId}`}\n    ${q.detail}\n    from ${producerText(q)}${q.replayedAt === null ? '' : `\n    replayed ${q.replayedAt}`}`,
    ),
    ...(open.length === 0
      ? []
      : [
          `once the fix on our side is deployed, replay the ${plural(open.length, 'record')} a replay can cure (shown first, without --confirm):`,
          `  replay-quarantine ${open.join(' ')} --reason "…"`,
        ]),
    ...(asIsNoCure.length === 0
      ? []
      : [
          `${plural(asIsNoCure.length, 'record')} would land here again if replayed as they are (${[...new Set(asIsNoCure.map((q) => q.reason))].join(', ')}): the producer sends a corrected event, or replay-quarantine <id> --value-file FILE with a corrected value`,
        ]),
  ].join('\n');
};

export const refusedText = (list: readonly RefusedView[]) =>
  list.length === 0
    ? 'no refused notifications'
    : [
        `${plural(list.length, 'refused notification')} (newest first; once the producer fixes the contact point: repair <eventId> --value-file FILE)`,
        ...counted(
          'reason',
          countBy(list, (r) => r.reason),
        ),
        ...counted(
          'channel',
          countBy(list, (r) => r.channel),
        ),
        ...list.map((r) => `${r.createdAt}  ${r.notificationId}  ${r.reason}\n    ${r.detail}`),
      ].join('\n');

export function suppressionsText(items: readonly SuppressionView[], channel: Channel, all: boolean): string {
  return [
    `${items.length} ${all ? '' : 'active '}${channel} suppression(s)`,
    ...items.map((i) => {
      const lifted = i.state === 'LIFTED' ? `  LIFTED ${i.liftedAt ?? ''} by ${i.liftedBy ?? '?'}` : '';
      return `  ${i.addressHash}  ${i.cause.padEnd(10)} since ${i.since}  from ${i.notificationId}${lifted}`;
    }),
  ].join('\n');
}

/** What the operator is told after a lift: for email, SES keeps its own account-level list. */
export function liftedText(channel: Channel, hash: string): string {
  return `lifted ${channel} ${hash}: notifier sends to this address again${PROVIDER_LIST_NOTE[channel]}`;
}

/** What else holds the address after a lift, per channel: a new channel says whether its provider keeps a list too. */
const PROVIDER_LIST_NOTE: Readonly<Record<Channel, string>> = {
  EMAIL:
    ' — lift it from SES too (aws sesv2 delete-suppressed-destination --email-address …), or SES drops the next email as OnAccountSuppressionList and its bounce suppresses the address here again',
  PUSH: '',
  SMS: '',
};

export const auditText = (records: readonly ListedAuditRecord[]) =>
  records.length === 0
    ? 'no audited operator action'
    : records
        .map(
          (r) =>
            `${r.at}  ${r.action.padEnd(16)} ${(r.step ?? 'CONFIRM').padEnd(7)} ${r.target}  by ${identityText(r.by)}${r.proposal === undefined ? '' : `  (proposal ${r.proposal})`}\n    why: ${r.reason}${Object.keys(r.details).length ? `\n    ${JSON.stringify(r.details)}` : ''}\n    ${outcomeText(r)}${(r.warnings ?? []).map((w) => `\n    WARNING: ${w}`).join('')}`,
        )
        .join('\n');

function outcomeText(r: ListedAuditRecord): string {
  const o = r.outcome;
  if (o === undefined) return 'outcome: none recorded (the action did not finish, or its outcome could not be written)';
  const details = Object.keys(o.details).length ? ` ${JSON.stringify(o.details)}` : '';
  return `outcome: ${o.result} at ${o.at}${details}`;
}
