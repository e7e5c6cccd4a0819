/**
 * One local "region" of the drill (docs/regions.md "The drill"): a DynamoDB Local instance with the table and its
 * regional fence table, the real stores, ingest and dispatch use cases wired as each region's functions are, and a
 * mocked provider that records every accepted message. A lost region refuses every call, as an unreachable endpoint
 * would; whatever its code still tries fails.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { neverHeld } from '../../functions/dispatch/channel-breaker.ts';
import type { DispatchDeps } from '../../functions/dispatch/dispatch-notification.ts';
import { FencedSender } from '../../functions/dispatch/fenced-sender.ts';
import { unpaced } from '../../functions/dispatch/pacer.ts';
import type { Sender } from '../../functions/dispatch/senders.ts';
import { DEFAULT_CHANNEL_POLICIES } from '../../functions/domain/delivery-policy.ts';
import { type FenceControl, fenceShardCount } from '../../functions/domain/fence.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import type { InboxStore, KnownEvents } from '../../functions/ingest/inbox-port.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import type { BatchDeps } from '../../functions/ingest/ingest-batch.ts';
import { OwnedInboxStore } from '../../functions/ingest/owned-inbox-store.ts';
import type { regions } from '../../functions/operator/index.ts';
import { DynamoFenceStore, type FenceGate } from '../../functions/stores/fence-store.ts';
import { DynamoHeartbeat } from '../../functions/stores/heartbeat.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { DynamoSuccessorStore } from '../../functions/stores/successor-store.ts';
import { localClient } from '../local/dynamodb-local.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';
import type { StreamReader } from '../local/stream-reader.ts';
import type { RegionTables } from './tables.ts';

export const PRIMARY = 'ap-northeast-1';
export const RECOVERY = 'ap-northeast-3';
export const LEASE_MS = 120_000;
export const SEND_TIMEOUT_MS = 5_000;
export const INGEST_TIMEOUT_MS = 120_000;
export const DISPATCH_TIMEOUT_MS = 60_000;
export const CLOCK_MARGIN_MS = 60_000;
const SHARDS = fenceShardCount(100);

/** The region is lost: what its code still tries fails, as against an unreachable endpoint. */
export class RegionLost extends Error {
  override name = 'RegionLost';
}

/** One accepted message at a region's provider. */
export interface AcceptedSend {
  readonly region: string;
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: string;
  readonly secondCopy: boolean;
  readonly late: boolean;
  readonly at: number;
  /** The region's fence said FENCED when the provider was called: a send the fence should have stopped. */
  readonly whileFenced: boolean;
}

/** What the schedule does to a send at the provider: accept it, or lose the region around it. */
export type SendFate = 'accept' | 'dieBeforeAnswer' | 'acceptThenDie';

/** The planted faults (docs/regions.md "The drill"): each must fail the verdict. */
export const PLANTS = ['no-fence', 'no-successors', 'takeover-in-place', 'replay-as-new'] as const;
export type Plant = (typeof PLANTS)[number];

export interface Drilled {
  /** The planted fault the run is told to carry (the verdict must fail). */
  readonly plant?: Plant;
}

export class Region {
  alive = true;
  intakeEnabled: boolean;
  readonly doc: DynamoDBDocumentClient;
  /** The replication's own client: its writes are not the region's functions' (and it delivers only while the region is up). */
  readonly replicaDoc: DynamoDBDocumentClient;
  readonly fenceStore: DynamoFenceStore;
  readonly gate: FenceGate;
  readonly endpoint: string;
  readonly table: string;
  readonly fenceTable: string;
  readonly dispatchReader: StreamReader;
  readonly accepted: AcceptedSend[] = [];
  /** Decides, per send, whether the region dies around it (the scenario's instant). */
  sendFate: (n: NotificationItem) => SendFate = () => 'accept';
  /** Called when the region dies (the scenario cuts its replication at that instant). */
  onDeath: () => void = () => undefined;
  /** Writes the region's ingest may still make in this batch before it dies (undefined: no limit). */
  writesBeforeDeath: number | undefined;
  /** After a failover: the old region's inbox items, for ingest's look-up once it is reconciled. */
  predecessorInboxes: ((eventIds: readonly string[]) => Promise<KnownEvents>) | undefined;

  constructor(
    readonly name: string,
    readonly tables: RegionTables,
    private readonly clock: { now(): number; sleep(ms: number): Promise<void> },
    private readonly drilled: Drilled,
  ) {
    this.endpoint = tables.endpoint;
    this.table = tables.table;
    this.fenceTable = tables.fenceTable;
    this.intakeEnabled = name === PRIMARY;
    this.doc = DynamoDBDocumentClient.from(localClient(this.endpoint), {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.replicaDoc = DynamoDBDocumentClient.from(localClient(this.endpoint), {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.doc.middlewareStack.add(
      (next, context) => async (args) => {
        if (!this.alive) throw new RegionLost(`${this.name} is lost`);
        const command = String(context.commandName ?? '');
        if (this.writesBeforeDeath !== undefined && /Transact|Put|Update|Delete/.test(command)) {
          if (this.writesBeforeDeath <= 0) {
            this.die();
            throw new RegionLost(`${this.name} was lost mid-batch`);
          }
          this.writesBeforeDeath--;
        }
        return next(args);
      },
      { step: 'initialize', name: 'drillRegionLost' },
    );
    this.fenceStore = new DynamoFenceStore(this.doc, this.fenceTable, SHARDS, () => clock.now());
    this.gate = drilled.plant === 'no-fence' ? noFence(this.fenceStore) : this.fenceStore;
    this.dispatchReader = tables.reader;
  }

  /** The region on empty tables (created, or emptied after the worker's previous schedule), its fence initialised. */
  static async create(
    name: string,
    tables: RegionTables,
    clock: { now(): number; sleep(ms: number): Promise<void> },
    drilled: Drilled,
  ): Promise<Region> {
    await tables.prepare();
    // The keeper's heartbeat, first: DynamoDB Local refuses (TrimmedDataAccessException) an iterator taken on a stream
    // with no record yet once records arrive, so every reader starts on a stream that has one.
    const first = DynamoDBDocumentClient.from(localClient(tables.endpoint));
    await new DynamoHeartbeat(first, tables.table).beat(name, clock.now());
    first.destroy();
    const region = new Region(name, tables, clock, drilled);
    const initial: FenceControl = {
      region: name,
      state: name === PRIMARY ? 'ACTIVE' : 'FENCED',
      epoch: name === PRIMARY ? 1 : 0,
      since: clock.now(),
      by: 'stack',
      reason: 'initial',
      mode: 'INITIAL',
    };
    await region.fenceStore.initialise(initial);
    return region;
  }

  die(): void {
    if (!this.alive) return;
    this.alive = false;
    this.writesBeforeDeath = undefined;
    this.onDeath();
  }

  notifications(): DynamoNotificationStore {
    return new DynamoNotificationStore(
      this.doc,
      this.table,
      DEFAULT_SWEEP_PLACEMENT.sweepShards,
      this.drilled.plant === 'no-fence' ? undefined : this.gate,
    );
  }

  ingestDeps(): BatchDeps {
    const inner = new DynamoInboxStore(this.doc, this.table, { sleep: async () => undefined });
    const planted = this.drilled.plant === 'replay-as-new';
    const store = new OwnedInboxStore(inner, planted ? noPredecessor(this.gate) : this.gate, this.name, {
      secondCopy: [],
      clockMarginMs: CLOCK_MARGIN_MS,
      now: () => this.clock.now(),
      ...(this.predecessorInboxes === undefined ? {} : { predecessorInboxes: this.predecessorInboxes }),
    });
    return {
      store: planted ? producedHere(store) : store,
      limit: pLimit(4),
      now: () => this.clock.now(),
      retentionDays: 35,
      maxEventBytes: 65_536,
      maxEventAgeSeconds: 0,
      transactionAttempts: 2,
      sleep: async () => undefined,
    };
  }

  /** This region's inbox items, as the other region's ingest looks them up after a reconciliation. */
  inboxes(): DynamoInboxStore {
    return new DynamoInboxStore(this.doc, this.table);
  }

  dispatchDeps(): DispatchDeps {
    const provider: Sender = { send: (n) => this.providerSend(n) };
    return {
      store: this.notifications(),
      sender: new FencedSender(provider, this.gate),
      pacer: unpaced,
      breaker: neverHeld,
      now: () => this.clock.now(),
      sleep: (ms) => this.clock.sleep(ms),
      policies: DEFAULT_CHANNEL_POLICIES,
      leaseMs: LEASE_MS,
      sendTimeoutMs: SEND_TIMEOUT_MS,
      maxSendAttempts: 3,
      retryBaseMs: 1_000,
      retryMaxMs: 300_000,
      nearRetryMs: 2_000,
      pendingThresholdMs: DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs,
      maxAgeMs: 86_400_000 * 2,
      brand: EXAMPLE_BRAND,
    };
  }

  side(): regions.RegionSide {
    return {
      region: this.name,
      fence: this.fenceStore,
      store: new DynamoSuccessorStore(this.doc, this.table, DEFAULT_SWEEP_PLACEMENT.sweepShards),
      intake: {
        enable: async () => {
          if (!this.alive) throw new RegionLost(`${this.name} is lost`);
          this.intakeEnabled = true;
          return undefined;
        },
        disable: async () => {
          if (!this.alive) throw new RegionLost(`${this.name} is lost`);
          this.intakeEnabled = false;
          return undefined;
        },
      },
    };
  }

  /** The provider of this region: the schedule may lose the region before or after it accepts. */
  private async providerSend(n: NotificationItem): Promise<string> {
    if (!this.alive) throw new RegionLost(`${this.name} is lost`);
    const fate = this.sendFate(n);
    if (fate === 'dieBeforeAnswer') {
      this.die();
      throw new RegionLost(`${this.name} was lost mid-send`);
    }
    const control = await this.fenceStore.control(true);
    const item = n as NotificationItem & { secondCopy?: boolean; late?: boolean };
    this.accepted.push({
      region: this.name,
      notificationId: n.notificationId,
      eventId: n.eventId,
      channel: n.channel,
      secondCopy: item.secondCopy === true,
      late: item.late === true,
      at: this.clock.now(),
      whileFenced: control?.state !== 'ACTIVE',
    });
    if (fate === 'acceptThenDie') {
      this.die();
      throw new RegionLost(`${this.name} was lost after the provider accepted`);
    }
    return `${this.name}-${this.accepted.length}`;
  }

  /** The schedule is over: the region's clients closed (its tables stay, for the worker's next schedule). */
  drop(): void {
    this.doc.destroy();
    this.replicaDoc.destroy();
  }
}

/** The planted fault: every fence read answers ACTIVE, so nothing stops a passive region that runs. */
function noFence(real: DynamoFenceStore): FenceGate {
  return {
    async current() {
      const control = await real.control(true);
      return control === undefined ? undefined : { ...control, state: 'ACTIVE', epoch: Math.max(1, control.epoch) };
    },
    async claimEpoch() {
      return Math.max(1, (await real.control(true))?.epoch ?? 1);
    },
    async permitsSend() {
      return true;
    },
  };
}

/** The planted fault `replay-as-new`: ingest never learns of a failover, so an event read again with no inbox item here is new. */
/** The planted `replay-as-new`, for records MSK Replicator copied too: taken as if produced here (no `__mskmr` rule). */
function producedHere(store: OwnedInboxStore): InboxStore {
  const recordEvent: InboxStore['recordEvent'] = (inbox, notifications, series) =>
    store.recordEvent(inbox, notifications, series);
  return Object.assign(Object.create(store) as InboxStore, { refusesReplicated: undefined, recordEvent });
}

function noPredecessor(real: FenceGate): Pick<FenceGate, 'current'> {
  return {
    async current() {
      const control = await real.current();
      if (control === undefined) return undefined;
      const { predecessor: _p, cutAt: _c, ...rest } = control;
      return rest;
    },
  };
}
