/** What the local run reports about each notification and about the audience items (issue 16). */
import { scanAll } from './dynamodb-local.ts';

export interface Outcome {
  notificationId: string;
  status: string;
  /** What SES reported after accepting it (DELIVERED, BOUNCED …); null when nothing was reported. */
  deliveryStatus: string | null;
  /** Why it was not sent (SUPPRESSED: BOUNCED / COMPLAINED / OPTED_OUT), or the failure's reason. */
  reason: string | null;
}

export function outcomesOf(notifications: Record<string, unknown>[]): Outcome[] {
  return notifications
    .map((n) => ({
      notificationId: String(n.notificationId),
      status: String(n.status),
      deliveryStatus: typeof n.deliveryStatus === 'string' ? n.deliveryStatus : null,
      reason:
        typeof n.suppressedReason === 'string'
          ? n.suppressedReason
          : n.status !== 'SENT' && typeof n.lastError === 'string'
            ? n.lastError
            : null,
    }))
    .sort((a, b) => (a.notificationId < b.notificationId ? -1 : a.notificationId > b.notificationId ? 1 : 0));
}

export async function readAudience(endpoint: string, tableName: string) {
  const items = await scanAll(endpoint, tableName);
  const preferences = items
    .filter((i) => i.kind === 'INBOX' && i.type === 'PreferencesUpdated')
    .map((i) => ({
      eventId: String(i.eventId),
      occurredAt: String(i.occurredAt),
      applied: i.skipped !== 'STALE',
      offset: Number((i.source as { offset?: number } | undefined)?.offset ?? 0),
    }))
    .sort((a, b) => a.offset - b.offset);
  const inForce = items
    .filter((i) => i.kind === 'PREFS')
    .map((i) => ({ userId: String(i.userId), optOut: i.optOut as string[], eventId: String(i.eventId) }));
  const suppressions = items
    .filter((i) => i.kind === 'SUPPRESSION')
    .map((i) => ({
      channel: String(i.channel),
      addressHash: String(i.sk),
      state: String(i.state),
      cause: String(i.cause),
      since: String(i.since),
      notificationId: String(i.notificationId),
    }));
  return { preferences: preferences.map(({ offset: _, ...p }) => p), inForce, suppressions };
}
