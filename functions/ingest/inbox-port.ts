/**
 * What ingest asks of its store (functions/ingest/inbox-store.ts is the DynamoDB adapter; the two-region wrapper and the
 * tests' memory store implement it too): the outcomes in the domain's words, no SDK types.
 */
import type { PreferencesItem } from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import type { InboxItem, NotificationItem, QuarantineItem, SeriesEntryItem } from '../domain/notification.ts';
import type { SweepPlacement } from '../domain/sweep-index.ts';

export type RecordOutcome =
  /** Inbox and every notification were written, in one transaction. */
  | { kind: 'created' }
  /** The inbox item already exists: this event was processed before. `payloadHash` is the stored one. */
  | { kind: 'inboxExists'; payloadHash: string | undefined; stored?: KnownInbox }
  /** No inbox, yet a notification with this (eventId, channel) exists: the key constraint caught it (defense in depth). */
  | { kind: 'notificationExists' };

/**
 * What the inbox holds for an event, as far as settling a record against it needs: its payloadHash (undefined when the
 * item has none) and, when `complete` (read from the item itself), what a repair needs — so a conflict found by the
 * look-up or by the transaction's cancellation is settled without another read.
 */
export interface KnownInbox {
  readonly payloadHash: string | undefined;
  readonly complete?: boolean;
  readonly channels?: Channel[];
  readonly refusedChannels?: Channel[];
  readonly repairHash?: string;
  readonly repairedHashes?: ReadonlySet<string>;
}

/** The inbox items found, by eventId. */
export type KnownEvents = ReadonlyMap<string, KnownInbox>;

/** What became of a preferences event: applied with its inbox, a duplicate, or recorded as STALE without applying. */
export type PreferencesOutcome =
  | { kind: 'created' }
  | { kind: 'inboxExists'; payloadHash: string | undefined }
  | { kind: 'stale' };

/** What a repair needs to know of an event's inbox item (read strongly consistent). */
export interface StoredInbox {
  readonly payloadHash: string | undefined;
  readonly channels: Channel[];
  readonly refusedChannels?: Channel[];
  readonly repairHash?: string;
  readonly repairedHashes?: ReadonlySet<string>;
}

export type RepairOutcome = 'repaired' | 'changed' | 'erased';

/** A corrected resend's repair of an event's REFUSED channels (ingest-record.ts settleTransfer). */
export interface ChannelRepair {
  readonly eventId: string;
  /** The event's type: the class its repaired notifications' sweep keys carry. */
  readonly type: string;
  /** The inbox as read: the repair applies only if its repairHash is still this one. */
  readonly expected: StoredInbox;
  /** The corrected record's payloadHash: remembered, so its resends are duplicates. */
  readonly payloadHash: string;
  /** The inbox's channels and refused channels after the repair, and the repairHash of those still refused. */
  readonly channels: Channel[];
  readonly refusedChannels: Channel[];
  readonly repairHash?: string;
  /** Each repaired channel with its new address: REFUSED → PENDING, only if still REFUSED. */
  readonly repairs: { readonly channel: Channel; readonly recipient: string }[];
  readonly now: number;
  /** Where the repaired notifications go in the sweep index (the stack's). */
  readonly placement: SweepPlacement;
}

export interface InboxStore {
  /**
   * One strongly consistent look-up of the inbox items of these eventIds, before their transactions: a known event is
   * settled without a write. Optional: a store without it sends every event to its transaction. An eventId it could
   * not read (keys DynamoDB left unprocessed after the retries) is simply absent — its transaction stays the guard.
   */
  findInboxes?(eventIds: readonly string[]): Promise<KnownEvents>;
  /**
   * Whether these events were taken at all: each event's inbox item of any kind — `INBOX`, or a held `INBOX#E<n>` of
   * any failover epoch — by one strongly consistent Query on its partition. A held one is known by its payloadHash only.
   */
  findTaken?(eventIds: readonly string[]): Promise<KnownEvents>;
  /**
   * Inbox + notifications in one transaction, and the event's series entry when its type supersedes (after them, with
   * no condition of its own: the inbox's guards it; docs/dispatch.md "The right moment").
   */
  recordEvent(
    inbox: InboxItem,
    notifications: NotificationItem[],
    series?: SeriesEntryItem,
    origin?: { readonly replicatedFrom: string },
  ): Promise<RecordOutcome>;
  /** A record copied from the other region's cluster: undefined if taken here, else why not. Optional: one region. */
  refusesReplicated?(replicatedFrom: string): Promise<string | undefined>;
  /**
   * Inbox + the preferences item in one transaction, the item only if this event is newer than the one in force.
   * An older event is still recorded in the inbox (`staleInbox`), so a redelivery of it is a duplicate.
   */
  recordPreferences(inbox: InboxItem, staleInbox: InboxItem, prefs: PreferencesItem): Promise<PreferencesOutcome>;
  /** Returns false when a quarantine item for this record already exists (a redelivered bad record). */
  quarantine(item: QuarantineItem): Promise<boolean>;
  /**
   * The event's inbox item, strongly consistent: read only when a record's payloadHash differs from the stored one,
   * to tell a corrected resend (a repair) from a conflict. Optional: without it every such record is a conflict.
   */
  readInbox?(eventId: string): Promise<StoredInbox | undefined>;
  /**
   * One transaction: the inbox (conditional on the repairHash read) and each repaired notification (conditional on
   * REFUSED and not erased). `changed` when a condition failed: another record of the event moved it first; `erased`
   * when a notification to repair was erased — erasure is final, nothing is repaired.
   */
  repairChannels?(repair: ChannelRepair): Promise<RepairOutcome>;
}

/** Cancellation reasons that mean "try again", never "bad input". */
