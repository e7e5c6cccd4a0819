/**
 * The notification store's port: what dispatch and the sweeper ask of the table about one notification
 * (docs/dispatch.md "The state machine"). One DynamoDB implementation (notification-store.ts; the sweeper's own
 * transitions in sweep-store.ts); the bench and the tests have their own in memory.
 */
import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import type { Channel } from '../domain/channels.ts';
import type { SweepPartition } from '../domain/keys.ts';
import type { NotificationItem } from '../domain/notification.ts';
import type { NotificationStatus } from '../domain/state-machine.ts';

export interface NotificationKey {
  readonly pk: string;
  readonly sk: string;
}

export type Transition = 'applied' | 'lost';

/** Where a page of the sweep index ended (its LastEvaluatedKey): the next page starts after it. */
export type SweepStartKey = Record<string, NativeAttributeValue>;

/** Where a send's evidence goes, on its SENT item (domain/notification.ts `evidence`). */
export type SentEvidence = NonNullable<NotificationItem['evidence']>;
/** What the sweeper made of an expired lease: its own transition, a lost race, or SENT because the acceptance was on the item. */
export type Resolution = Transition | 'accepted';

export type ClaimResult =
  | { kind: 'claimed'; item: NotificationItem }
  /** Still PENDING, but deferred until retryAt: a stale or early record must not jump the backoff. */
  | { kind: 'notDue'; retryAt: number }
  /** No longer PENDING, or another holder claimed it first. */
  | { kind: 'taken' };

/** What the sparse sweep index projects (functions/contracts/table-schema.ts). */
export interface SweepEntry extends NotificationKey {
  readonly notificationId: string;
  readonly channel: Channel;
  readonly status: NotificationStatus;
  readonly attempt: number;
  readonly deferrals?: number;
  readonly createdAt: string;
  readonly sweepAt: number;
  /** The index's partition key: PENDING#… (with its class) or, for an item claimed by an earlier deploy, SENDING#…. */
  readonly sweepKey?: string;
  readonly retryAt?: number;
  readonly leaseUntil?: number;
}

/** What a page of the sweep index covers: items with sweepAt at or before `until`, read at `now`. */
export interface SweepWindow {
  readonly now: number;
  readonly until: number;
}

export interface SweepPage {
  readonly entries: SweepEntry[];
  /** LastEvaluatedKey: where the next page of this partition starts; undefined when the partition is done. */
  readonly next?: SweepStartKey | undefined;
}

/** Why a claimed notification ends without a send, by its moment (domain/send-moment.ts), and what decided it. */
export type UnsentEnd =
  | { readonly status: 'EXPIRED'; readonly validUntil: string }
  | { readonly status: 'SUPERSEDED'; readonly supersededBy: string; readonly supersededByOccurredAt: string }
  | { readonly status: 'THROTTLED'; readonly throttledWindow: string };

export interface Release {
  readonly reason: string;
  /** Not to be claimed before. */
  readonly retryAt: number;
  /** When the sweeper should look at it (sweepAt): retryAt when only the sweeper will wake it, later otherwise. */
  readonly sweepAt: number;
  /** A deferral (throttled, not sent, rate-limited, channel held) does not count against the attempt budget. */
  readonly deferral: boolean;
}

export interface NotificationStore {
  get(key: NotificationKey): Promise<NotificationItem | undefined>;
  /** PENDING (and due) → SENDING, attempt+1, lease. */
  claim(key: NotificationKey, claimId: string, now: number, leaseMs: number): Promise<ClaimResult>;
  /**
   * SENDING → SENT with the provider's message id, and where the send's evidence goes (its batch and SHA-256); for a
   * message that carried a secret, its redacted record's gzipped bytes too (what a rebuild of its batch needs).
   */
  markSent(
    item: NotificationItem,
    providerMessageId: string,
    now: number,
    evidence?: SentEvidence,
    record?: Uint8Array,
  ): Promise<Transition>;
  markFailed(item: NotificationItem, reason: string, now: number): Promise<Transition>;
  markUnknown(item: NotificationItem, reason: string, now: number): Promise<Transition>;
  /**
   * PENDING → SUPPRESSED (a suppressed address or an opted-out channel) without a claim: conditional on PENDING,
   * `lost` when a dispatcher or the sweeper moved it first. Terminal; the item leaves the sweep index.
   */
  markSuppressed(key: NotificationKey, reason: string, now: number): Promise<Transition>;
  /**
   * SENDING → SUPPRESSED: dispatch's audience check, the last step before the provider call, found the address
   * suppressed or the channel opted out. Fenced on the holder's attempt; terminal, nothing was sent.
   */
  suppress(item: NotificationItem, reason: string, now: number): Promise<Transition>;
  /**
   * Keeps a live holder's claim: leaseUntil moved to `leaseUntil` (the sweep key and sweepAt stay), fenced on its
   * attempt. With a provider message id it also records the provider's acceptance on the SENDING item, so a sweeper
   * that finds the lease expired later marks it SENT instead of resolving an unknown outcome — and with the send's
   * `evidence` (the batch or slice and the digest its SENT write would name), so that SENT names its record too.
   */
  extendLease(
    item: NotificationItem,
    leaseUntil: number,
    now: number,
    providerMessageId?: string,
    evidence?: SentEvidence,
  ): Promise<Transition>;
  /**
   * The provider accepted after the sweeper had resolved this attempt's expired lease as UNKNOWN: the message id is
   * recorded on the UNKNOWN item (which stays UNKNOWN, already alarmed), so an operator's resend is refused unless
   * told otherwise with that id on screen. `lost` when the item is no longer that attempt's UNKNOWN.
   */
  recordLateAcceptance(item: NotificationItem, providerMessageId: string, now: number): Promise<Transition>;
  /**
   * SENDING → HELD until `until`, when its type's send window opens in `zone` (the customer's): not an attempt (a
   * deferral), in its class's PENDING sweep partition at `until`, where the sweeper releases it.
   */
  hold(item: NotificationItem, until: number, zone: string, now: number): Promise<Transition>;
  /** SENDING → EXPIRED, SUPERSEDED or THROTTLED with what decided it: terminal, never sent. */
  endUnsent(item: NotificationItem, end: UnsentEnd, now: number): Promise<Transition>;
  /** SENDING → PENDING with a retryAt. The MODIFY this writes is a near retry's trigger; the sweeper wakes a far one. */
  release(item: NotificationItem, release: Release, now: number): Promise<Transition>;
}

/**
 * The sweeper's store: dispatch's port, the sweep index's reads and the transitions only the sweeper makes on what it
 * found there (sweep-store.ts), kept out of dispatch's bundle.
 */
export interface SweepStore extends NotificationStore {
  /**
   * One page of a sweep-index partition: its items whose sweepAt is at or before `window.until`, less live leases
   * (SENDING with leaseUntil at or after `window.now`). `limit` counts the items read, before that filter.
   */
  findDue(partition: SweepPartition, window: SweepWindow, limit: number, startKey?: SweepStartKey): Promise<SweepPage>;
  /**
   * One page (up to 1 MB read) of a partition's expired leases: SENDING items whose leaseUntil is before `now`, with
   * sweepAt at or before `until`. A claim leaves an item at its PENDING sweepAt, so this finds a dead holder's claim
   * wherever it sits.
   */
  findExpiredLeases(
    partition: SweepPartition,
    now: number,
    until: number,
    startKey?: SweepStartKey,
  ): Promise<SweepPage>;
  /**
   * HELD → PENDING, only if untouched since the sweeper saw it: its window opened. The fresh MODIFY re-drives it, and
   * dispatch checks it again (validity, audience …). createdAt starts again (the maximum age counts from the release;
   * firstCreatedAt keeps the original).
   */
  releaseHeld(entry: SweepEntry, now: number, nextSweepAt: number): Promise<Transition>;
  /** PENDING → PENDING (retryAt removed), only if untouched since the sweeper saw it: a fresh MODIFY re-drives it. */
  redrive(entry: SweepEntry, now: number, nextSweepAt: number): Promise<Transition>;
  /**
   * SENDING with an expired lease → UNKNOWN or PENDING, only if nobody moved it since the sweeper saw it — or SENT
   * (`accepted`) when the holder had recorded the provider's acceptance on the item before it stopped.
   */
  resolveExpired(entry: SweepEntry, to: 'UNKNOWN' | 'PENDING', now: number, nextSweepAt: number): Promise<Resolution>;
  /** PENDING past its maximum age → FAILED: EXPIRED, only if untouched since the sweeper saw it. */
  expire(entry: SweepEntry, now: number): Promise<Transition>;
}
