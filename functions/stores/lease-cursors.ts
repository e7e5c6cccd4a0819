/**
 * Where the sweeper's lease pass stopped, per sweep partition it did not finish in a run: one item, (SWEEP#LEASES,
 * CURSORS), holding each unfinished partition's LastEvaluatedKey, where the rotation stopped, and the partitions kept
 * for a lease left for the next run (`walkFirst`, with where each one's lease sits: `leaseAt`). Written only when a
 * run leaves one of those or clears what an earlier run left; read once a run. The next run resumes there, so a large
 * backlog is read through over a few runs instead of its start every run, and walks the kept partitions first.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NOTICE_CLASSES, type NoticeClass } from '../domain/catalogue.ts';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import { SWEEP_LEASE_CURSORS_KEY, type SweepPartition } from '../domain/keys.ts';
import type { SweepStartKey } from './notification-port.ts';

export type LeaseCursors = Record<string, SweepStartKey>;

/** A PENDING partition's place in the lease pass's rotation (its key without the shard count's spelling). */
export type LeasePosition = Pick<SweepPartition, 'noticeClass' | 'channel' | 'shard'>;

export interface SavedLeasePass {
  readonly cursors: LeaseCursors;
  /** Where the rotation stopped: the next run starts there. */
  readonly resumeAt?: LeasePosition | undefined;
  /** Partitions kept for a lease left for the next run, by key: the next run walks them first. */
  readonly walkFirst: readonly string[];
  /**
   * Where the lease each of those holds sits (its sweepAt), by key: one stays first until a walk reads past it. One
   * without (an older item) stays first until a walk reads a page from its cursor.
   */
  readonly leaseAt: Readonly<Record<string, number>>;
}

export interface LeaseCursorStore {
  load(): Promise<SavedLeasePass>;
  save(
    cursors: LeaseCursors,
    now: number,
    resumeAt?: LeasePosition,
    walkFirst?: readonly string[],
    leaseAt?: Readonly<Record<string, number>>,
  ): Promise<void>;
}

/** A saved position names a class, a channel and a shard; anything else (a hand-edited item) starts at the front. */
function positionOf(v: unknown): LeasePosition | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const { noticeClass, channel, shard } = v as Record<string, unknown>;
  if (!NOTICE_CLASSES.includes(noticeClass as NoticeClass) || !CHANNELS.includes(channel as Channel)) return undefined;
  if (typeof shard !== 'number' || !Number.isInteger(shard) || shard < 0) return undefined;
  return { noticeClass: noticeClass as NoticeClass, channel: channel as Channel, shard };
}

/** The saved leases' positions that are numbers; anything else (a hand-edited item) is left out, as if never saved. */
function leaseAtOf(v: unknown): Record<string, number> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter(([, at]) => typeof at === 'number' && Number.isFinite(at)));
}

const SET = 'SET kind = :kind, cursors = :cursors, updatedAt = :now';

/**
 * Partitions the item keeps to walk first, at most: a key is at most 26 bytes (PENDING#EMAIL#critical#255), so these
 * take under 29 KB. Their cursors are written first after the rotation's (sweeper/lease-pass.ts), and with 128-character
 * event ids about 1,200 cursors fit LEASE_CURSORS_MAX_BYTES: at 1,100 none of theirs is cut, so none is walked from its
 * partition's start. One left out (more leases left than that, in as many partitions) is walked when the rotation
 * reaches it, its cursor kept.
 */
export const LEASE_WALK_FIRST_MAX = 1_100;

export class DynamoLeaseCursors implements LeaseCursorStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async load(): Promise<SavedLeasePass> {
    // Eventually consistent: runs are a minute apart, and a stale cursor only re-reads part of a partition.
    const r = await this.client.send(new GetCommand({ TableName: this.tableName, Key: SWEEP_LEASE_CURSORS_KEY }));
    const cursors = r.Item?.cursors as unknown;
    // A hand-edited list keeps only its strings: a key that names no partition is walked by no run.
    const first = r.Item?.walkFirst as unknown;
    return {
      cursors: typeof cursors === 'object' && cursors !== null ? (cursors as LeaseCursors) : {},
      resumeAt: positionOf(r.Item?.resumeAt),
      walkFirst: Array.isArray(first) ? first.filter((k): k is string => typeof k === 'string') : [],
      leaseAt: leaseAtOf(r.Item?.leaseAt),
    };
  }

  async save(
    cursors: LeaseCursors,
    now: number,
    resumeAt?: LeasePosition,
    walkFirst?: readonly string[],
    leaseAt?: Readonly<Record<string, number>>,
  ): Promise<void> {
    const first = (walkFirst ?? []).slice(0, LEASE_WALK_FIRST_MAX);
    // Only those of the partitions kept: at most LEASE_WALK_FIRST_MAX numbers.
    const lease = Object.fromEntries(first.flatMap((k) => (leaseAt?.[k] === undefined ? [] : [[k, leaseAt[k]]])));
    const leases = Object.keys(lease).length > 0;
    const set = [
      SET,
      ...(resumeAt ? ['resumeAt = :at'] : []),
      ...(first.length > 0 ? ['walkFirst = :first'] : []),
      ...(leases ? ['leaseAt = :lease'] : []),
    ];
    const remove = [
      ...(resumeAt ? [] : ['resumeAt']),
      ...(first.length > 0 ? [] : ['walkFirst']),
      ...(leases ? [] : ['leaseAt']),
    ];
    // The stream filter passes only kind NOTIFICATION: this item never reaches dispatch.
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: SWEEP_LEASE_CURSORS_KEY,
        UpdateExpression: `${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
        ExpressionAttributeValues: {
          ':kind': 'SWEEP_LEASES',
          ':cursors': withinItem(cursors),
          ':now': new Date(now).toISOString(),
          ...(resumeAt ? { ':at': resumeAt } : {}),
          ...(first.length > 0 ? { ':first': first } : {}),
          ...(leases ? { ':lease': lease } : {}),
        },
      }),
    );
  }
}

/**
 * What the item keeps at most of the cursors: under DynamoDB's 400 KB an item, with room for its keys, `walkFirst`
 * (under 29 KB) and `leaseAt` (LEASE_WALK_FIRST_MAX keys and numbers: under 45 KB).
 */
export const LEASE_CURSORS_MAX_BYTES = 320_000;

/**
 * The cursors that fit the item, in the order given (the lease pass's: where its rotation stopped, so that cursor is
 * always kept and the rotation always moves on, then the partitions it walks first next run, then the rest of the
 * rotation). Every partition unfinished at the most shards
 * (2,304 of them) may not fit: one left out is read again from where the due round stops in it when the rotation
 * reaches it, and is kept then, as the first.
 */
export function withinItem(cursors: LeaseCursors): LeaseCursors {
  const kept: LeaseCursors = {};
  let bytes = 0;
  for (const [key, cursor] of Object.entries(cursors)) {
    bytes += key.length + JSON.stringify(cursor).length;
    if (bytes > LEASE_CURSORS_MAX_BYTES) break;
    kept[key] = cursor;
  }
  return kept;
}
