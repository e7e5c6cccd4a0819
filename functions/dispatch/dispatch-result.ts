/**
 * What dispatching one notification came to (dispatch-notification.ts): the handler reports and counts it, the tests
 * read it. Plain types, no behaviour.
 */

import type { SuppressedReason } from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import type { NotificationItem } from '../domain/notification.ts';
import type { NotificationKey } from '../stores/notification-store.ts';
import type { MomentResult } from './moment-checks.ts';

/** Why a claimed notification went back to PENDING without using its attempt budget. */
export type DeferReason =
  | 'THROTTLED'
  | 'NOT_SENT'
  | 'RATE_LIMITED'
  | 'CHANNEL_HELD'
  | 'ACCOUNT_BLOCKED'
  /** The push endpoint's platform application is held (disabled): other applications go on. */
  | 'APPLICATION_HELD'
  /** The provider said the platform application is disabled: that application is now held. */
  | 'APPLICATION_BLOCKED'
  /** Too little of the invocation or the lease was left to finish a send: not started, back at once. */
  | 'NO_TIME_LEFT';

/**
 * What became of a provider's acceptance: written (SENT, or the message id on the SENDING item), late (the sweeper
 * had already resolved the lease: reported, alarmed, the id recorded on the UNKNOWN item when it still was ours), or
 * not written at all before the record's time ran out (the lease then decides: the unknown-outcome policy).
 */
export type AcceptanceRecord = 'recorded' | 'late' | 'notRecorded';

export type DispatchResult =
  | { kind: 'skipped'; why: 'taken' | 'notDue' }
  | { kind: 'suppressed'; key: NotificationKey; notificationId: string; channel: Channel; reason: SuppressedReason }
  | {
      kind: 'sent';
      item: NotificationItem;
      providerMessageId: string;
      /** The send landed after our lease had been taken over: never written over the newer state. */
      fenced: boolean;
      acceptance: AcceptanceRecord;
      /** The batch the evidence of the send joined (absent when the deployment keeps none). */
      evidence?: { batch: string };
    }
  | { kind: 'failed'; item: NotificationItem; reason: string }
  | { kind: 'expired'; item: NotificationItem }
  /** HELD until its send window opens, or not sent for its moment (EXPIRED, SUPERSEDED, THROTTLED). */
  | MomentResult
  | { kind: 'deferred'; item: NotificationItem; reason: DeferReason; code?: string; retryAt: number }
  | { kind: 'unknown'; item: NotificationItem; reason: string; resend: boolean };

/**
 * The provider accepted and the send's record has landed in the spool, so the send slot is free for the next record;
 * `settled` is the SENT write that follows, outside the slot, and what it came to (the handler awaits it before the
 * record counts as done, and holds the slot instead while as many SENT writes are pending as it has slots). Should this
 * holder die before its SENT lands, the sweeper writes SENT from the spooled record (sweeper/spooled-send.ts) — unless
 * its look-up cannot be made in time, when the lease's policy decides (docs/guarantees.md window 1).
 */
export interface Recording {
  readonly kind: 'recording';
  readonly settled: Promise<DispatchResult>;
}
