/**
 * Who may still be sent to: suppressed addresses and the customer's channel preferences, as items of the
 * one table, and the rule dispatch applies last before it sends a notification.
 *
 * - Suppression: pk `SUPPRESSION#<channel>#<first hex digit of the hash>`, sk the sha-256 of the normalised address.
 *   No address appears in clear in a key (or anywhere on the item); the hash is pseudonymous, not anonymous — whoever
 *   holds a list of addresses can hash it and compare. Every dispatch reads its address's item, so a channel's items
 *   are spread over 16 partition keys (at 10,000 sends/s about 625 reads/s each, under a partition's 3,000); an
 *   operator lists a channel with 16 Queries, never a Scan.
 *   Lifting keeps the item as LIFTED with its time, so a duplicate of the old bounce arriving after the lift does
 *   not suppress the address again.
 * - Preferences: pk `PREFS#<userId>`, sk `PREFS`: the whole opt-out set of the newest PreferencesUpdated event
 *   (occurredAt, then eventId as the tie-break, so every arrival order ends the same).
 * Pure: no AWS, no clock.
 */
import { createHash } from 'node:crypto';
import { optOutsApply } from './catalogue.ts';
import { type Channel, unknownChannel } from './channels.ts';
import type { EventType } from './event/contract.ts';
import type { SuppressionCause } from './feedback.ts';
import type { PREFS_SK } from './keys.ts';

/** The reason on a SUPPRESSED notification. */
export type SuppressedReason = SuppressionCause | 'OPTED_OUT';

/**
 * The address as a mailbox provider treats it: trimmed, Unicode NFC, lower case. (RFC 5321 lets a local part be
 * case-sensitive; no mailbox provider a bank's customers use treats it so, and SES's own suppression list does not.)
 * Phone numbers and endpoint ARNs are already canonical (E.164, ARN) and only trimmed.
 */
export function normaliseAddress(channel: Channel, address: string): string {
  const trimmed = address.trim();
  switch (channel) {
    case 'EMAIL':
      return trimmed.normalize('NFC').toLowerCase();
    case 'PUSH':
    case 'SMS':
      return trimmed;
    default:
      return unknownChannel(channel);
  }
}

/** sha-256 hex of the normalised address: the suppression item's sort key. */
export const addressHash = (channel: Channel, address: string) =>
  createHash('sha256').update(normaliseAddress(channel, address), 'utf8').digest('hex');

export interface SuppressionItem {
  pk: string;
  sk: string;
  kind: 'SUPPRESSION';
  channel: Channel;
  state: 'ACTIVE' | 'LIFTED';
  cause: SuppressionCause;
  /** When SES reported it (the first report: later ones do not move it). */
  since: string;
  /** The notification whose feedback suppressed the address: where an operator finds who it was. */
  notificationId: string;
  liftedAt?: string;
  /** The verified principal who lifted it, and how it was verified (functions/domain/identity.ts). */
  liftedBy?: string;
  liftedVerifiedBy?: string;
  liftReason?: string;
}

export interface PreferencesItem {
  pk: string;
  sk: typeof PREFS_SK;
  kind: 'PREFS';
  userId: string;
  optOut: Channel[];
  /** The event in force: its instant (epoch ms, the comparison), its occurredAt as given and its eventId (tie-break). */
  occurredAtMs: number;
  occurredAt: string;
  eventId: string;
  updatedAt: string;
  /** Set when an erasure forgot them: optOut is empty, userId and occurredAt are gone, the watermark stays. */
  erasedAt?: string;
}

/** What keeps one notification from being sent, or undefined when it may go. Suppression first: it is a fact. */
export function suppressedReason(
  n: { channel: Channel; template: EventType },
  suppression: Pick<SuppressionItem, 'state' | 'cause'> | undefined,
  prefs: Pick<PreferencesItem, 'optOut'> | undefined,
): SuppressedReason | undefined {
  if (suppression?.state === 'ACTIVE') return suppression.cause;
  // A notice a bank must deliver whatever the customer chose (a sign-in from a new device, a changed password): its
  // definition says `optOutsApply: false`. Suppression above still stops it: a bouncing address cannot be reached, a
  // complaint costs every customer's mail, and SMS STOP and a disabled endpoint arrive here as suppressions too.
  if (!optOutsApply(n.template)) return undefined;
  if (prefs?.optOut.includes(n.channel)) return 'OPTED_OUT';
  return undefined;
}
