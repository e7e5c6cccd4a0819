/** `ops customer` and `ops inspect`: each notice with what was sent or exactly why not. */

import { messageIdOf } from '../../../functions/domain/message-id.ts';
import type { CustomerView, inspectEvent } from '../../../functions/operator/index.ts';

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

export function inspectText({ view, reasons }: Awaited<ReturnType<typeof inspectEvent>>): string {
  const i = view.inbox;
  const lines = [
    `event ${view.eventId}`,
    i === undefined
      ? '  inbox: none (notifications without an inbox item: this should not happen)'
      : `  inbox: ${i.type}, received ${i.receivedAt} from ${JSON.stringify(i.source)}, channels ${JSON.stringify(i.channels)}${i.skipped ? `, not sent: ${i.skipped}` : ''}${Array.isArray(i.refusedChannels) ? `, refused ${JSON.stringify(i.refusedChannels)}` : ''}`,
  ];
  for (const n of view.notifications) {
    lines.push(
      `  ${String(n.channel).padEnd(5)} ${String(n.status).padEnd(8)} attempt ${n.attempt}  to ${n.recipient}  updated ${n.updatedAt}`,
    );
    const why = reasons.get(String(n.notificationId));
    if (why !== undefined) lines.push(`        ${why}`);
    if (messageIdOf(n))
      lines.push(
        `        provider message id ${messageIdOf(n)}${n.acceptedLateAt ? ' (accepted after its lease expired)' : ''}`,
      );
    if (n.lastError) lines.push(`        last error ${n.lastError}`);
    if (n.refusedReason) lines.push(`        refused ${n.refusedReason}: ${n.refusedDetail}`);
    if (n.repairedAt) lines.push(`        repaired ${n.repairedAt} (first created ${n.firstCreatedAt})`);
    for (const r of (n.manualResends as Record<string, unknown>[] | undefined) ?? []) {
      lines.push(`        manual resend ${r.at} by ${r.by} from ${r.fromStatus}: ${r.reason}`);
    }
  }
  return lines.join('\n');
}
