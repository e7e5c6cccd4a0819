/**
 * An in-memory InboxStore that behaves like DynamoDB where it matters to ingest, for unit tests, property tests and
 * the benchmark:
 * - puts are conditional (attribute_not_exists(pk)); the event's transaction is all or nothing;
 * - an item holding a string that is not well-formed UTF-16 is refused with a ValidationException, as DynamoDB refuses
 *   it (strings are UTF-8 on the wire: a lone surrogate cannot be encoded), and so are items over 400 KB, non-finite
 *   numbers and a transaction that touches one item twice;
 * - every call yields to the event loop first, so concurrent calls interleave as real requests do.
 * `writes` logs every item written, `refused` every refusal: a test can assert that nothing was written twice and that
 * nothing reached DynamoDB that it would refuse.
 */

import pLimit from 'p-limit';
import type { PreferencesItem } from '../../functions/domain/audience.ts';
import { notificationIdOf } from '../../functions/domain/keys.ts';
import {
  type InboxItem,
  type NotificationItem,
  pendingSweepKey,
  type QuarantineItem,
  type SeriesEntryItem,
} from '../../functions/domain/notification.ts';
import type {
  ChannelRepair,
  InboxStore,
  KnownEvents,
  KnownInbox,
  PreferencesOutcome,
  RecordOutcome,
  StoredInbox,
} from '../../functions/ingest/inbox-port.ts';
import type { BatchDeps } from '../../functions/ingest/ingest-batch.ts';
import { TEST_SECRET_MAC } from './secret-mac.ts';

type Item = InboxItem | NotificationItem | QuarantineItem | PreferencesItem | SeriesEntryItem;

/** DynamoDB's maximum item size. https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html */
const MAX_ITEM_BYTES = 400 * 1024;

export class ValidationException extends Error {
  override name = 'ValidationException';
  readonly $metadata = { httpStatusCode: 400 };
}

const keyOf = (item: { pk: string; sk: string }) => `${item.pk}|${item.sk}`;

export class MemoryInboxStore implements InboxStore {
  readonly items = new Map<string, Item>();
  readonly writes: string[] = [];
  /** Every item a repair updated (REFUSED → PENDING, and its inbox): conditional updates, apart from `writes`. */
  readonly updates: string[] = [];
  readonly refused: { key: string; problem: string }[] = [];
  /**
   * Called before each write: a test can delay it (to reorder concurrent writes) or make it fail as DynamoDB might
   * (throttling, an outage …).
   */
  beforeWrite: ((items: Item[]) => void | Promise<void>) | undefined;

  /** eventIds asked for by each look-up (the batch read before the transactions). */
  readonly lookups: string[][] = [];

  async findInboxes(eventIds: readonly string[]): Promise<KnownEvents> {
    await Promise.resolve();
    this.lookups.push([...eventIds]);
    const known = new Map<string, KnownInbox>();
    for (const id of eventIds) {
      const inbox = this.inbox(id);
      if (inbox !== undefined) known.set(id, knownOf(inbox));
    }
    return known;
  }

  async recordEvent(
    inbox: InboxItem,
    notifications: NotificationItem[],
    series?: SeriesEntryItem,
  ): Promise<RecordOutcome> {
    await Promise.resolve();
    const all: Item[] = [inbox, ...notifications, ...(series === undefined ? [] : [series])];
    await this.beforeWrite?.(all);
    this.validate(all);
    const existing = this.items.get(keyOf(inbox));
    if (existing !== undefined) {
      return {
        kind: 'inboxExists',
        payloadHash: (existing as InboxItem).payloadHash,
        stored: knownOf(existing as InboxItem),
      };
    }
    if (notifications.some((n) => this.items.has(keyOf(n)))) return { kind: 'notificationExists' };
    for (const item of all) this.write(item);
    return { kind: 'created' };
  }

  /** As DynamoInboxStore: inbox + preferences only if newer (occurredAtMs, then eventId), else the STALE inbox alone. */
  async recordPreferences(
    inbox: InboxItem,
    staleInbox: InboxItem,
    prefs: PreferencesItem,
  ): Promise<PreferencesOutcome> {
    await Promise.resolve();
    await this.beforeWrite?.([inbox, prefs]);
    this.validate([inbox, prefs]);
    const existing = this.items.get(keyOf(inbox));
    if (existing !== undefined) return { kind: 'inboxExists', payloadHash: (existing as InboxItem).payloadHash };
    const current = this.items.get(keyOf(prefs)) as PreferencesItem | undefined;
    const newer =
      current === undefined ||
      current.occurredAtMs < prefs.occurredAtMs ||
      (current.occurredAtMs === prefs.occurredAtMs && current.eventId < prefs.eventId);
    if (!newer) {
      this.write(staleInbox);
      return { kind: 'stale' };
    }
    this.write(inbox);
    this.write(prefs);
    return { kind: 'created' };
  }

  async readInbox(eventId: string): Promise<StoredInbox | undefined> {
    await Promise.resolve();
    const inbox = this.inbox(eventId);
    return inbox === undefined ? undefined : structuredClone(inbox);
  }

  /** As DynamoInboxStore: the inbox if its repairHash is still the one read, each notification if still REFUSED. */
  async repairChannels(repair: ChannelRepair): Promise<'repaired' | 'changed'> {
    await Promise.resolve();
    const keyOfChannel = (c: string) => `EVENT#${repair.eventId}|NOTIFICATION#${c}`;
    await this.beforeWrite?.(
      [`EVENT#${repair.eventId}|INBOX`, ...repair.repairs.map((r) => keyOfChannel(r.channel))].flatMap((k) => {
        const item = this.items.get(k);
        return item === undefined ? [] : [item];
      }),
    );
    // The conditions are checked at commit, after the hook: what another writer did meanwhile counts.
    const inbox = this.inbox(repair.eventId);
    const targets = repair.repairs.map((r) => ({
      ...r,
      item: this.items.get(keyOfChannel(r.channel)) as NotificationItem | undefined,
    }));
    if (
      inbox === undefined ||
      inbox.repairHash !== repair.expected.repairHash ||
      targets.some((t) => t.item?.status !== 'REFUSED')
    ) {
      return 'changed';
    }
    const iso = new Date(repair.now).toISOString();
    const next: InboxItem = {
      ...inbox,
      channels: repair.channels,
      repairedHashes: new Set([...(inbox.repairedHashes ?? []), repair.payloadHash]),
    };
    delete next.refusedChannels;
    delete next.repairHash;
    if (repair.refusedChannels.length > 0 && repair.repairHash !== undefined) {
      next.refusedChannels = repair.refusedChannels;
      next.repairHash = repair.repairHash;
    }
    const repaired = targets.map(({ channel, recipient, item }) => {
      const { refusedReason: _r, refusedDetail: _d, ...rest } = item as NotificationItem;
      return {
        ...rest,
        status: 'PENDING' as const,
        recipient,
        updatedAt: iso,
        repairedAt: iso,
        firstCreatedAt: rest.firstCreatedAt ?? rest.createdAt,
        createdAt: iso,
        sweepKey: pendingSweepKey(
          repair.type,
          channel,
          notificationIdOf(repair.eventId, channel),
          repair.placement.sweepShards,
        ),
        sweepAt: repair.now + repair.placement.pendingThresholdMs,
      };
    });
    this.validate([next, ...repaired]);
    // Conditional updates of items that exist, not new items: logged apart from the puts.
    for (const item of [next, ...repaired]) {
      this.updates.push(keyOf(item));
      this.items.set(keyOf(item), structuredClone(item));
    }
    return 'repaired';
  }

  async quarantine(item: QuarantineItem): Promise<boolean> {
    await Promise.resolve();
    this.validate([item]);
    if (this.items.has(keyOf(item))) return false;
    this.write(item);
    return true;
  }

  inbox(eventId: string): InboxItem | undefined {
    return this.items.get(`EVENT#${eventId}|INBOX`) as InboxItem | undefined;
  }

  quarantined(topic: string, partition: number, offset: number): QuarantineItem | undefined {
    return this.items.get(`QUARANTINE#${topic}#${partition}#${offset}|RECORD`) as QuarantineItem | undefined;
  }

  ofKind<K extends Item['kind']>(kind: K): Extract<Item, { kind: K }>[] {
    return [...this.items.values()].filter((i): i is Extract<Item, { kind: K }> => i.kind === kind);
  }

  private write(item: Item): void {
    const key = keyOf(item);
    this.writes.push(key);
    // A copy, as DynamoDB stores what it was sent, not a live reference.
    this.items.set(key, structuredClone(item));
  }

  private validate(items: Item[]): void {
    const keys = new Set<string>();
    for (const item of items) {
      const key = keyOf(item);
      const problem =
        (keys.has(key) ? 'two operations on one item in one transaction' : undefined) ??
        illFormed(item, '') ??
        (Buffer.byteLength(JSON.stringify(item), 'utf8') > MAX_ITEM_BYTES ? 'item size exceeds 400 KB' : undefined);
      keys.add(key);
      if (problem !== undefined) {
        this.refused.push({ key, problem });
        throw new ValidationException(`One or more parameter values were invalid: ${problem}`);
      }
    }
  }
}

/** What DynamoInboxStore reads of an inbox item (its look-up's projection, a cancellation's ALL_OLD item). */
const knownOf = (inbox: InboxItem): KnownInbox => {
  const { payloadHash, channels, refusedChannels, repairHash, repairedHashes } = structuredClone(inbox);
  return {
    payloadHash,
    complete: true,
    channels,
    ...(refusedChannels === undefined ? {} : { refusedChannels }),
    ...(repairHash === undefined ? {} : { repairHash }),
    ...(repairedHashes === undefined ? {} : { repairedHashes }),
  };
};

/** The first thing DynamoDB would refuse in a value, as a path and a rule (never the value). */
function illFormed(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : `${path}: string is not well-formed UTF-16`;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${path}: number is not finite`;
  if (value === null || value === undefined || typeof value === 'boolean') return undefined;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const p = illFormed(v, `${path}[${i}]`);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (!k.isWellFormed()) return `${path}: attribute name is not well-formed UTF-16`;
      const p = illFormed(v, `${path}.${k}`);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  return `${path}: ${typeof value} cannot be stored`;
}

/** The clock the batch tests run on: a second after the fixtures' occurredAt (test/support/events.ts). */
export const BATCH_NOW = Date.parse('2026-11-30T09:15:01Z');

/** Ingest-batch dependencies on a memory store: a fixed clock, no real sleeps, the deployed limits. */
export const memoryBatchDeps = (store: MemoryInboxStore, over: Partial<BatchDeps> = {}): BatchDeps => ({
  store,
  limit: pLimit(8),
  now: () => BATCH_NOW,
  retentionDays: 35,
  maxEventBytes: 65_536,
  maxEventAgeSeconds: 86_400,
  transactionAttempts: 2,
  sleep: async () => undefined,
  secretMac: TEST_SECRET_MAC,
  ...over,
});
