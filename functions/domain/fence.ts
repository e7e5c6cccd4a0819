/**
 * The fence: which region may send, at which epoch (docs/regions.md "The fence"). Each region keeps its right to send in
 * a regional table that is never replicated — `CONTROL` and its copies `FENCE#<n>` — and every pipeline write carries
 * the writer's epoch, so a region that is not active can neither claim a notification nor start a send, even while its
 * functions still run. Pure: the adapters (functions/stores/fence-store.ts) read and write the items.
 */
import { createHash } from 'node:crypto';

export type FenceState = 'ACTIVE' | 'FENCED';
/** How a region came to its state: a switchover (CLEAN), a failover (FORCED), or the keeper fencing itself (SELF). */
export type FenceMode = 'INITIAL' | 'CLEAN' | 'FORCED' | 'SELF';

/** The region a failover or switchover took over from: reconciled once its records have been read. */
export interface Predecessor {
  readonly region: string;
  readonly epoch: number;
  readonly reconciledAt?: number;
}

/** The fence table's `CONTROL` item: the one record of this region's right to send. */
export interface FenceControl {
  readonly region: string;
  readonly state: FenceState;
  readonly epoch: number;
  /** When this state was written (epoch ms). */
  readonly since: number;
  readonly by: string;
  readonly reason: string;
  readonly mode: FenceMode;
  readonly auditId?: string;
  /** A failover's cut: no producer is taken to have written to the old cluster after it. */
  readonly cutAt?: number;
  /** Demotion: the ingest mapping was disabled, the last shard written FENCED, nothing can still be running. */
  readonly mappingsDisabledAt?: number;
  readonly fencedAt?: number;
  readonly quiescentAt?: number;
  readonly predecessor?: Predecessor;
  /** Until when ingest looks an event without an inbox item up in the reconciled predecessor. */
  readonly lookupUntil?: number;
  /**
   * A failover's successor pass, in pages after the fence moved: where the next run goes on (`partition`, `after`),
   * or when it finished (`doneAt`).
   */
  readonly successorPass?: SuccessorPass;
}

/** How far a promotion's successor pass has come: a run that is stopped or interrupted goes on from here. */
export interface SuccessorPass {
  readonly partition: number;
  readonly after?: Readonly<Record<string, unknown>>;
  readonly doneAt?: number;
}

/** One shard of the fence (`FENCE#<n>`): copies of CONTROL's state and epoch, read before every send. */
export interface FenceShard {
  readonly state: FenceState;
  readonly epoch: number;
}

/** Items written before the two-region design carry no epoch: they are the primary's, epoch 1. */
export const FIRST_EPOCH = 1;
/** The recovery region's fence before its first promotion: fenced, at an epoch nothing carries. */
export const UNPROMOTED_EPOCH = 0;

/** The epoch an item belongs to: its own, or the first for an item written before epochs existed. */
export const epochOf = (item: { readonly epoch?: unknown }): number =>
  typeof item.epoch === 'number' ? item.epoch : FIRST_EPOCH;

/** Every pipeline item carries its writer: the region and the epoch that own it for life. */
export interface Ownership {
  readonly owner: string;
  readonly epoch: number;
}

/**
 * Shards of the fence: one consistent read per send lands on one of them, and a key should stay well under a
 * partition's 3,000 reads a second.
 */
export const fenceShardCount = (peakNotificationsPerSecond: number): number =>
  Math.max(4, Math.ceil(Math.max(0, peakNotificationsPerSecond) / 1_000));

/** The shard a notification's send reads: the first byte of its id's SHA-256 modulo the count. */
export const fenceShardOf = (notificationId: string, shards: number): number =>
  createHash('sha256').update(notificationId).digest().readUInt8(0) % shards;

export const FENCE_CONTROL_KEY = 'CONTROL';
export const fenceShardKey = (n: number) => `FENCE#${n}`;

/** The epoch a region claims at: its own while it is active, none while it is fenced. */
export const claimEpochOf = (control: Pick<FenceControl, 'state' | 'epoch'> | undefined): number | undefined =>
  control?.state === 'ACTIVE' ? control.epoch : undefined;

/**
 * Whether a send of a notification claimed at `claimEpoch` may start: its region's shard, read consistently just now,
 * says ACTIVE at that very epoch. A shard missing (the fence table never initialised) refuses: no fence, no send.
 */
export const sendPermitted = (shard: FenceShard | undefined, claimEpoch: number | undefined): boolean =>
  shard !== undefined && shard.state === 'ACTIVE' && claimEpoch !== undefined && shard.epoch === claimEpoch;

/** A new epoch: one higher than any either region has seen, so no two promotions share one. */
export const nextEpoch = (...seen: readonly (number | undefined)[]): number =>
  Math.max(FIRST_EPOCH - 1, ...seen.filter((e): e is number => typeof e === 'number')) + 1;

/** Why a fence write was refused: the fence is not in the state the writer read. */
export type FenceRefusal = 'MOVED' | 'NOT_ACTIVE' | 'ALREADY_FENCED' | 'STALE_EPOCH';

/**
 * Whether a promotion of `target` to `epoch` may be written over what its fence holds now. Only forward: an epoch at
 * or below the fence's own is a stale promotion (two operators, or a replay of an old command).
 */
export function promotionRefusal(current: FenceControl | undefined, epoch: number): FenceRefusal | undefined {
  if (current === undefined) return undefined;
  if (current.state === 'ACTIVE' && current.epoch === epoch) return undefined; // idempotent: done already
  if (epoch < current.epoch || (epoch === current.epoch && current.state === 'ACTIVE')) return 'STALE_EPOCH';
  return undefined;
}

/**
 * The keeper's decision on what it can see of the other region's fence: fence itself when the other region is active
 * at a higher epoch; alarm when both say active and this one is newer; nothing on silence — a passive region that
 * fails must never stop the active one.
 */
export type KeeperDecision = 'FENCE_SELF' | 'BOTH_ACTIVE' | 'NOTHING';
export function keeperDecision(own: FenceControl, other: FenceControl | undefined): KeeperDecision {
  if (other === undefined || own.state !== 'ACTIVE' || other.state !== 'ACTIVE') return 'NOTHING';
  return other.epoch > own.epoch ? 'FENCE_SELF' : 'BOTH_ACTIVE';
}

/**
 * The other region's heartbeat is stale once it is older than this (the keeper beats every minute and a global table
 * replicates in about a second: one missed beat and half a minute's slack) — or when this replica has none at all. The
 * alarm asks 3 stale minutes of 5, so one late beat does not page; a lost region pages 3.5–4.5 min after its last beat.
 */
export const HEARTBEAT_STALE_AFTER_MS = 90_000;

export const heartbeatStale = (at: number | undefined, now: number): boolean =>
  at === undefined || now - at > HEARTBEAT_STALE_AFTER_MS;
