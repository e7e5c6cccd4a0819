/**
 * The chaos world: DynamoDB Local, the local SES/SNS endpoints with their ledgers, the real handlers behind event
 * source mapping simulators with their real rules, fault injection, and the invariant checks. One world per process
 * (the handlers are module singletons); each run gets its own topic and eventId prefix so runs never mix.
 */

import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { SendError } from '../../functions/dispatch/send-error.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { formatChannelPolicies } from '../../functions/domain/delivery-policy.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { SENT_TO_ENDPOINT } from '../../functions/domain/push-endpoint.ts';
import { canMove, type NotificationStatus, TERMINAL_STATUSES } from '../../functions/domain/state-machine.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { createTable, type DynamoDbLocal, scanAll, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { type CapturedOutput, captureOutput } from '../local/emf.ts';
import {
  type Handlers,
  type Invoker,
  lambdaContext,
  loadHandlers,
  readTable,
  StreamMapping,
} from '../local/pipeline.ts';
import {
  type AcceptedSend,
  type Fault,
  type ProviderEndpoint,
  SendQuota,
  startSesEndpoint,
  startSnsEndpoint,
} from '../local/providers.ts';
import { StreamReader } from '../local/stream-reader.ts';
import {
  type CrashPoint,
  clock,
  crashPointsFor,
  type DynamoFault,
  type Invocation,
  injectDynamoFaults,
  invocation,
  isClaim,
  isMarkSent,
  isTransactWrite,
} from './faults.ts';
import { OWN_ACCOUNT, pushAppOf } from './generate.ts';

export const LEASE_MS = 10_000;
/** The dispatch send timeout the world configures, and the Lambda timeout of its invocations (lambdaContext's). */
const SEND_TIMEOUT_MS = 400;
const DISPATCH_TIMEOUT_MS = 60_000;
/** Past the 25 h stream trim a run may play once; the model-based runs may trim more often and see expiries. */
export const MAX_AGE_MS = 48 * 3_600_000;
export const PENDING_THRESHOLD_MS = 60_000;
export const POLICIES = { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' } as const;

export interface World {
  handlers: Handlers;
  reader: StreamReader;
  ses: ProviderEndpoint;
  sns: ProviderEndpoint;
  db: DynamoDbLocal;
  tableName: string;
  output: CapturedOutput;
  /** Every log line the handlers wrote (for the PII check). */
  logLines: string[];
  /** Armed faults: consumed by the next matching DynamoDB calls. */
  armed: (DynamoFault | CrashPoint)[];
  /** Share of DynamoDB calls given a random fault; which ones is decided by `decide`, from the call's identity. */
  dynamoFaultRate: number;
  /** A random source for what has no identity of its own (the model-based runs' Math.random). */
  random: () => number;
  /** The run's fault decisions: a pure function of (seed, what the operation is), never of call order or timing. */
  decide: FaultDecisions;
  /** Who made each accepted send, and which writes a stale holder got through (see `AttemptWitness`). */
  witness: AttemptWitness;
  /** Provider behaviour per address: the suite decides per send. */
  providerFault: (channel: string, to: string) => Fault;
  /** Channels whose provider account is paused right now: every send is refused at the account level. */
  accountPaused: Set<Channel>;
  /** Push platform applications (PLATFORM/name) disabled right now: SNS answers PlatformApplicationDisabled. */
  disabledApps: Set<string>;
  /**
   * Per SENT write (the notification's key): a DynamoDB failure to give it instead of committing, or undefined —
   * the run's acceptThenStoreFails mode (a DynamoDB error after the provider accepted).
   */
  sentWriteFault: (key: { pk: string; sk: string }) => DynamoFault | undefined;
  /** Sends refused because the account was paused, per channel. */
  accountRefusals: number;
  /** Pushes refused because their platform application was disabled. */
  applicationRefusals: number;
  /** A provider quota burst: the account quotas shrink to `rate` per second (real time) until `endQuotaBurst`. */
  startQuotaBurst(rate: number): void;
  /**
   * The seeded run's quota burst: until `endQuotaBurst`, each send is answered "quota exceeded" (SES Throttling,
   * SNS Throttled) with probability `share`, decided from (seed, address, how many sends that address had): which
   * sends exceed a quota is arbitrary as the sender sees it, and this way it replays from the seed.
   */
  startDecidedQuotaBurst(share: number): void;
  endQuotaBurst(): void;
  /** Sends the providers throttled for exceeding a quota. */
  quotaThrottled(): number;
  /** Another execution environment claims this notification (PENDING → SENDING, attempt + 1) and then dies. */
  takeover(key: { pk: string; sk: string }): Promise<void>;
  stop(): Promise<void>;
}

let world: World | undefined;

export async function openWorld(): Promise<World> {
  if (world) return world;
  clock.install();
  const output = captureOutput();
  const logLines: string[] = [];
  const originalErr = process.stderr.write.bind(process.stderr);
  // Handler output is routed to stderr by captureOutput; keep it (for the PII scan) instead of printing it.
  process.stderr.write = ((chunk: string | Uint8Array) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    // Powertools' plain-text warning when an invocation had no metric to flush is handler output too.
    if (text.startsWith('{') || text.startsWith('No application metrics to publish')) {
      for (const line of text.split('\n')) if (line) logLines.push(line);
      return true;
    }
    return originalErr(chunk);
  }) as typeof process.stderr.write;

  const db = await startDynamoDbLocal();
  const ses = await startSesEndpoint();
  const sns = await startSnsEndpoint();
  const tableName = 'notifier-chaos';
  await createTable(db.endpoint, tableName);
  const handlers = await loadHandlers({
    dynamoEndpoint: db.endpoint,
    sesEndpoint: ses.url,
    snsEndpoint: sns.url,
    tableName,
    extra: {
      POWERTOOLS_LOG_LEVEL: 'INFO',
      // The ingest figures are checked to reconcile with the deliveries: the EMF metrics are read back (emf.ts).
      POWERTOOLS_METRICS_DISABLED: 'false',
      // Set explicitly: the fake clock moves days on, and the events carry fixed dates. Older than 1995 is too old
      // (the scenario's TOO_OLD events are from 1990); everything else it generates is younger, whatever today is.
      MAX_EVENT_AGE_SECONDS: String(Math.floor((Date.now() - Date.parse('1995-01-01T00:00:00Z')) / 1000)),
      CHANNEL_POLICIES: formatChannelPolicies(POLICIES),
      LEASE_SECONDS: String(LEASE_MS / 1000),
      PENDING_THRESHOLD_SECONDS: String(PENDING_THRESHOLD_MS / 1000),
      SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
      CONNECT_TIMEOUT_MS: '200',
      MAX_SEND_ATTEMPTS: '4',
      // Deferral backoff kept short: waits the suite sits out in real time (unit tests cover its growth to minutes).
      RETRY_BASE_MS: '5',
      RETRY_MAX_MS: '200',
      // Dispatch paces well above the providers' burst quotas, so a quota burst is met with real throttling.
      SEND_RATE_EMAIL: '500',
      SEND_RATE_PUSH: '500',
      SEND_RATE_SMS: '500',
      // Past the 25 h stream trim the suite also plays: notifications recovered from it are still worth sending.
      MAX_AGE_SECONDS: String(MAX_AGE_MS / 1000),
      TRANSACTION_ATTEMPTS: '3',
      INGEST_CONCURRENCY: '8',
      // One record at a time within a dispatch invocation, and one sweep at a time: a seed then replays the order of
      // sends and takeovers, not only the faults. Racing dispatchers stay covered: the model-based runs race whole
      // invocations under fast-check's scheduler, and the unit and integration tests run dispatch concurrently.
      DISPATCH_CONCURRENCY: '1',
      SWEEP_CONCURRENCY: '1',
    },
  });
  const { documentClient } = await import('../../functions/commons/dynamodb-client.ts');
  const w: World = {
    handlers,
    reader: new StreamReader(db.endpoint, tableName),
    ses,
    sns,
    db,
    tableName,
    output,
    logLines,
    armed: [],
    dynamoFaultRate: 0,
    random: Math.random,
    decide: new FaultDecisions(0, ''),
    witness: newWitness(),
    providerFault: () => 'ok',
    accountPaused: new Set(),
    disabledApps: new Set(),
    sentWriteFault: () => undefined,
    accountRefusals: 0,
    applicationRefusals: 0,
    startQuotaBurst: (rate) => {
      ses.quota.EMAIL = new SendQuota(rate);
      sns.quota.SMS = new SendQuota(rate);
      sns.quota.PUSH = new SendQuota(rate);
    },
    startDecidedQuotaBurst: (share) => {
      decidedBurst = share;
    },
    endQuotaBurst: () => {
      ses.quota = {};
      sns.quota = {};
      decidedBurst = 0;
    },
    quotaThrottled: () =>
      decidedThrottled +
      [ses, sns].reduce((n, e) => n + Object.values(e.throttled).reduce((a, b) => a + (b ?? 0), 0), 0),
    takeover: async (key) => {
      // A fault injected into this claim is the dead environment's own: it claimed or it did not.
      await invocation
        .run({ crashed: false, id: `takeover ${key.pk} ${key.sk}` }, () =>
          new DynamoNotificationStore(documentClient, tableName).claim(
            { pk: key.pk, sk: key.sk },
            'takeover',
            Date.now(),
            LEASE_MS,
          ),
        )
        .catch(() => undefined);
    },
    stop: async () => {
      w.reader.close();
      await sns.stop();
      await ses.stop();
      await db.stop();
      output.restore();
      process.stderr.write = originalErr;
      world = undefined;
    },
  };
  let decidedBurst = 0;
  let decidedThrottled = 0;
  const fault = (c: Channel, to: string): Fault => {
    if (w.accountPaused.has(c)) {
      w.accountRefusals++;
      return 'accountPaused';
    }
    if (SENT_TO_ENDPOINT[c] && w.disabledApps.has(pushAppOf(to))) {
      w.applicationRefusals++;
      return 'applicationDisabled';
    }
    if (decidedBurst > 0 && w.decide.unit(`quota:${c}:${to}`) < decidedBurst) {
      decidedThrottled++;
      return 'throttle';
    }
    return w.providerFault(c, to);
  };
  ses.fault = fault;
  sns.fault = fault;
  // Our role publishes to this account's endpoints only (the stack's IAM policy): SNS refuses any other's.
  sns.account = OWN_ACCOUNT;
  injectDynamoFaults(documentClient, {
    dynamo(command, input) {
      if (isUpdate(command) && isMarkSent(input)) {
        const forced = w.sentWriteFault(keyOf(input));
        if (forced !== undefined) return forced;
      }
      const crashable = crashPointsFor(command, input);
      const i = w.armed.findIndex((f) => crashable.includes(f as CrashPoint) || isDynamoFaultFor(f, command, input));
      if (i >= 0) return w.armed.splice(i, 1)[0];
      if (w.dynamoFaultRate > 0) {
        const within = invocation.getStore()?.id;
        const u = w.decide.unit(`dynamo:${within ? `${within}|` : ''}${callIdentity(command, input)}`);
        if (u >= w.dynamoFaultRate) return undefined;
        const kinds: (DynamoFault | CrashPoint)[] = [...randomFaultsFor(command, input), ...crashable];
        return kinds[Math.floor((u / w.dynamoFaultRate) * kinds.length)];
      }
      return undefined;
    },
  });
  watchAttempts(w);
  world = w;
  return w;
}

// ── Replayable fault decisions ──

/**
 * Every random fault decision of a seeded run: a hash of (seed, the operation's identity, how many times that identity
 * was seen in this run). The identity names the operation the way the pipeline does — a transaction by its eventId,
 * an update by its item and what it writes, a stream record by its item and the state it shows — with the run's
 * prefix removed, so two runs of one seed decide alike however their calls interleave. What is still decided by the
 * interleaving is listed in README "Reliability: npm run chaos" (replay).
 */
export class FaultDecisions {
  private readonly seen = new Map<string, number>();
  constructor(
    readonly seed: number,
    private readonly prefix: string,
  ) {}

  /** A number in [0, 1) for this occurrence of `identity`. */
  unit(identity: string): number {
    const id = this.prefix ? identity.split(this.prefix).join('') : identity;
    const n = this.seen.get(id) ?? 0;
    this.seen.set(id, n + 1);
    return createHash('sha256').update(`${this.seed}\u0000${id}\u0000${n}`).digest().readUInt32BE(0) / 2 ** 32;
  }
}

/** The value of a document-client or wire-format attribute. */
const plain = (v: unknown): unknown =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1
    ? ((v as Record<string, unknown>).S ?? (v as Record<string, unknown>).N ?? v)
    : v;

/**
 * What a DynamoDB call is, without its timing: the command, the item (the send-rate window's wall-clock sort key
 * left out), and for an update what it writes (its target status, or the claim).
 */
export function callIdentity(command: string, input: Record<string, unknown>): string {
  if (isTransactWrite(command)) {
    const first = (input.TransactItems as { Put?: { Item?: Record<string, unknown> } }[] | undefined)?.[0]?.Put?.Item;
    return `tx:${String(plain(first?.pk))}`;
  }
  const key = input.Key as Record<string, unknown> | undefined;
  const pk = String(plain(key?.pk) ?? '');
  const sk = pk.startsWith('RATE#') ? '' : String(plain(key?.sk) ?? '');
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  const what = plain(values?.[':to']) ?? (values?.[':claim'] !== undefined ? 'claim' : '');
  const attempt = plain(values?.[':attempt']) ?? '';
  const index = plain(values?.[':key']) ?? '';
  return `${command.replace(/Command$/, '').replace(/Item$/, '')}:${pk}:${sk}:${String(what)}:${String(attempt)}:${String(index)}`;
}

/** A stream record without its timing: the item, the kind of change, and the state it shows. */
export function recordIdentity(r: DynamoDBRecord): string {
  const image = (r.dynamodb?.NewImage ?? r.dynamodb?.OldImage ?? {}) as Record<string, AttributeValue>;
  const i = unmarshall(image);
  return [r.eventName, i.pk, i.sk, i.status, i.attempt, i.deferrals, i.redrives].join(':');
}

// ── The attempt witness: which claim made each accepted send, and stale writes ──

/**
 * `attempt` is dispatch's fencing token. The witness ties each send the providers accepted to the attempt (claim) that
 * made it — by the message id the provider returned, or, for a send whose reply was lost, in order among that
 * address's sends that ended with an unknown outcome — and records every transition a holder got applied after a
 * newer claim of the same notification had already committed: a stale write, which fencing must make impossible.
 */
export interface AttemptWitness {
  readonly attemptByMessageId: Map<string, number>;
  /**
   * `<notificationId>@<attempt>` of every attempt whose acceptance reached the item (its SENT, or a lease extension
   * carrying the message id): no later attempt may send that notification again.
   */
  readonly recordedAcceptances: Set<string>;
  /** Sends started without the time to finish: before the invocation's end or inside the lease (sendsWithoutTime). */
  readonly sendsWithoutTime: string[];
  /**
   * `<notificationId>@<attempt>` of every attempt the provider answered with a message id: whether the answer came
   * after the holder's lease had ended (late), and the invocation it came to (did it die before recording it?).
   */
  readonly acceptances: Map<string, { readonly late: boolean; readonly invocation: Invocation | undefined }>;
  /** Per address: the attempts of sends that ended with an unknown outcome, in order. */
  readonly unknownCalls: Map<string, number[]>;
  /** Per notificationId: the highest attempt claimed so far. */
  readonly latestClaim: Map<string, number>;
  readonly staleWrites: string[];
}

export const newWitness = (): AttemptWitness => ({
  attemptByMessageId: new Map(),
  recordedAcceptances: new Set(),
  sendsWithoutTime: [],
  acceptances: new Map(),
  unknownCalls: new Map(),
  latestClaim: new Map(),
  staleWrites: [],
});

let watching = false;

/** Wraps the handlers' own store and sender classes (one module instance per process) to feed `w.witness`. */
function watchAttempts(w: World): void {
  if (watching) return;
  watching = true;
  const store = DynamoNotificationStore.prototype;
  const claim = store.claim;
  store.claim = async function (this: DynamoNotificationStore, ...args: Parameters<typeof claim>) {
    const r = await claim.apply(this, args);
    if (r.kind === 'claimed') {
      const latest = world?.witness.latestClaim ?? w.witness.latestClaim;
      latest.set(r.item.notificationId, Math.max(latest.get(r.item.notificationId) ?? 0, r.item.attempt));
    }
    return r;
  };
  const extendLease = store.extendLease;
  store.extendLease = async function (this: DynamoNotificationStore, ...args: Parameters<typeof extendLease>) {
    const result = await extendLease.apply(this, args);
    const [item, , , providerMessageId] = args;
    if (result === 'applied' && providerMessageId !== undefined) {
      (world?.witness ?? w.witness).recordedAcceptances.add(`${item.notificationId}@${item.attempt}`);
    }
    return result;
  };
  for (const name of ['markSent', 'markFailed', 'markUnknown', 'release'] as const) {
    const original = store[name] as (item: NotificationItem, ...rest: unknown[]) => Promise<'applied' | 'lost'>;
    (store as unknown as Record<string, unknown>)[name] = async function (
      this: DynamoNotificationStore,
      item: NotificationItem,
      ...rest: unknown[]
    ) {
      const witness = world?.witness ?? w.witness;
      // A newer claim committed before this write was even sent: if it applies, it overwrote the newer holder.
      const newer = witness.latestClaim.get(item.notificationId) ?? 0;
      const result = await original.call(this, item, ...rest);
      if (result === 'applied' && name === 'markSent')
        witness.recordedAcceptances.add(`${item.notificationId}@${item.attempt}`);
      if (result === 'applied' && newer > item.attempt) {
        witness.staleWrites.push(`${item.notificationId}: ${name} of attempt ${item.attempt} after attempt ${newer}`);
      }
      return result;
    };
  }
  const send = ProviderSender.prototype.send;
  ProviderSender.prototype.send = async function (this: ProviderSender, ...args: Parameters<typeof send>) {
    const [n] = args;
    const witness = world?.witness ?? w.witness;
    // A send must be able to finish: before the dispatch invocation's Lambda timeout, and inside the holder's lease.
    const startedAt = invocation.getStore()?.startedAt;
    const finishes = Date.now() + SEND_TIMEOUT_MS;
    if (
      (startedAt !== undefined && finishes > startedAt + DISPATCH_TIMEOUT_MS) ||
      finishes > (n.leaseUntil ?? finishes)
    ) {
      witness.sendsWithoutTime.push(`${n.notificationId} attempt ${n.attempt}`);
    }
    try {
      const id = await send.apply(this, args);
      witness.attemptByMessageId.set(id, n.attempt);
      witness.acceptances.set(`${n.notificationId}@${n.attempt}`, {
        late: Date.now() > (n.leaseUntil ?? Number.POSITIVE_INFINITY),
        invocation: invocation.getStore(),
      });
      return id;
    } catch (error) {
      if (error instanceof SendError && error.failure === 'unknown') {
        witness.unknownCalls.set(n.recipient, [...(witness.unknownCalls.get(n.recipient) ?? []), n.attempt]);
      }
      throw error;
    }
  };
}

/** Each accepted send with the attempt that made it (undefined when the witness cannot tell). */
export function attributeSends(sends: AcceptedSend[], witness: AttemptWitness): (number | undefined)[] {
  const used = new Map<string, number>();
  return sends.map((s) => {
    const byId = witness.attemptByMessageId.get(s.messageId);
    if (byId !== undefined) return byId;
    const k = used.get(s.to) ?? 0;
    used.set(s.to, k + 1);
    return witness.unknownCalls.get(s.to)?.[k];
  });
}

const isUpdate = (command: string) => command === 'UpdateItemCommand' || command === 'UpdateCommand';
/** The item key of an update, plain or marshalled. */
const keyOf = (input: Record<string, unknown>) => {
  const key = (input.Key ?? {}) as Record<string, unknown>;
  return { pk: String(plain(key.pk)), sk: String(plain(key.sk)) };
};

function isDynamoFaultFor(f: DynamoFault | CrashPoint, command: string, input: Record<string, unknown>): boolean {
  if (f === 'TransactionConflict' || f === 'ThrottlingError' || f === 'ProvisionedThroughputExceeded') {
    return isTransactWrite(command);
  }
  if (f === 'slowClaim') return isUpdate(command) && isClaim(input);
  return (
    f === 'ThrottlingException' ||
    f === 'InternalServerError' ||
    f === 'requestTimeout' ||
    f === 'commitThenTimeout' ||
    f === 'latency'
  );
}

function randomFaultsFor(command: string, input: Record<string, unknown>): DynamoFault[] {
  const always: DynamoFault[] = [
    ...(isUpdate(command) && isClaim(input) ? (['slowClaim'] as const) : []),
    'ThrottlingException',
    'InternalServerError',
    'requestTimeout',
    'latency',
    'commitThenTimeout',
  ];
  return isTransactWrite(command)
    ? [...always, 'TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']
    : always;
}

// ── Event source mapping simulators ──

/**
 * The chaos suite's Invoker for the local event source mappings (tools/local/pipeline.ts): each invocation runs in a crash
 * context — a crash anywhere inside fails it whole, as a dying Lambda does — keyed by its label when it has one.
 */
export const chaosInvoke: Invoker = async (run, label) => {
  const ctx = { crashed: false, startedAt: clock.now(), ...(label === undefined ? {} : { id: label }) };
  try {
    const response = await invocation.run(ctx, run);
    return ctx.crashed ? { functionError: true } : { response, functionError: false };
  } catch (error) {
    return { functionError: true, error };
  }
};

/** One dispatch invocation outside a mapping (the model-based test's racing deliveries). */
export async function invokeDispatch(
  w: World,
  batch: DynamoDBRecord[],
): Promise<{ failedAt: number; functionError: boolean }> {
  return new StreamMapping(w.reader, w.handlers.dispatch, { invoke: chaosInvoke }).invoke(batch);
}

/** One sweeper invocation; `id` keys the fault decisions inside it (see `Invocation.id`). */
export async function runSweeper(w: World, id?: string): Promise<void> {
  const ctx = { crashed: false, ...(id === undefined ? {} : { id }) };
  await invocation.run(ctx, () => w.handlers.sweeper({}, lambdaContext('chaos-sweeper'))).catch(() => undefined);
}

/** Pumps, sweeps and advances the clock until every notification of the run is terminal (or gives up). */
export async function convergeRun(
  w: World,
  pump: () => Promise<number>,
  prefix: string,
  maxRounds = 60,
): Promise<void> {
  for (let round = 0; round < maxRounds; round++) {
    while ((await pump()) > 0) {
      // keep draining while the stream grows
    }
    const items = await runItems(w, prefix);
    const active = items.filter(
      (i) => i.kind === 'NOTIFICATION' && !TERMINAL_STATUSES.includes(i.status as NotificationStatus),
    );
    if (active.length === 0) return;
    // Past every lease and the PENDING threshold: the sweeper resolves or re-drives what is stuck.
    clock.advance(Math.max(LEASE_MS, PENDING_THRESHOLD_MS) + 1_000);
    await runSweeper(w);
  }
}

export async function runItems(w: World, prefix: string): Promise<Record<string, unknown>[]> {
  const all = await readTable(w.db.endpoint, w.tableName);
  const mine = (id: unknown) => typeof id === 'string' && id.startsWith(prefix);
  return [
    ...all.notifications.filter((n) => mine(n.eventId)),
    ...all.quarantine.filter((q) => String(q.pk).includes(`#${prefix}topic#`)),
    ...(await inboxItems(w, prefix)),
  ];
}

function inboxItems(w: World, prefix: string) {
  return scanAll(w.db.endpoint, w.tableName, {
    expression: 'sk = :inbox AND begins_with(eventId, :prefix)',
    values: { ':inbox': 'INBOX', ':prefix': prefix },
  });
}

/** Legal transitions only, nothing leaves a terminal state, attempt never decreases: checked on every stream MODIFY. */
export function transitionViolations(records: DynamoDBRecord[], prefix: string): string[] {
  const problems: string[] = [];
  for (const r of records) {
    if (r.eventName !== 'MODIFY') continue;
    const oldImage = r.dynamodb?.OldImage;
    const newImage = r.dynamodb?.NewImage;
    if (!oldImage || !newImage) continue;
    const before = unmarshall(oldImage as Record<string, AttributeValue>);
    const after = unmarshall(newImage as Record<string, AttributeValue>);
    if (before.kind !== 'NOTIFICATION' || !String(before.eventId).startsWith(prefix)) continue;
    const from = before.status as NotificationStatus;
    const to = after.status as NotificationStatus;
    // A terminal item may take attributes (a late acceptance's message id on UNKNOWN), never another status.
    const annotated = from === to && TERMINAL_STATUSES.includes(from);
    if (!annotated && !canMove(from, to)) problems.push(`${before.notificationId}: ${from} → ${to}`);
    if (Number(after.attempt) < Number(before.attempt))
      problems.push(`${before.notificationId}: attempt ${before.attempt} → ${after.attempt}`);
  }
  return problems;
}
