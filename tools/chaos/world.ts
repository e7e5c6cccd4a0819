/**
 * The chaos world: DynamoDB Local, the local SES/SNS endpoints with their ledgers, the real handlers behind event
 * source mapping simulators with their real rules, fault injection, and the invariant checks. One world per process
 * (the handlers are module singletons); each run gets its own topic and eventId prefix so runs never mix.
 */

import type { Channel } from '../../functions/domain/channels.ts';
import { formatChannelPolicies } from '../../functions/domain/delivery-policy.ts';
import { SENT_TO_ENDPOINT } from '../../functions/domain/push-endpoint.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { createTable, type DynamoDbLocal, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { type CapturedOutput, captureOutput } from '../local/emf.ts';
import { type Handlers, loadHandlers } from '../local/pipeline.ts';
import {
  type Fault,
  type ProviderEndpoint,
  SendQuota,
  startSesEndpoint,
  startSnsEndpoint,
} from '../local/providers.ts';
import { StreamReader } from '../local/stream-reader.ts';
import { callIdentity, FaultDecisions, isDynamoFaultFor, isUpdate, keyOf, randomFaultsFor } from './calls.ts';
import {
  type CrashPoint,
  clock,
  crashPointsFor,
  type DynamoFault,
  injectDynamoFaults,
  invocation,
  isMarkSent,
} from './faults.ts';
import { OWN_ACCOUNT, pushAppOf } from './generate.ts';
import { type AttemptWitness, newWitness, watchAttempts } from './witness.ts';

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
  const { output, logLines, restore } = keepHandlerOutput();
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
  /** The seeded run's quota burst: the share of sends answered "quota exceeded", and how many were. */
  const burst = { share: 0, throttled: 0 };
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
      burst.share = share;
    },
    endQuotaBurst: () => {
      ses.quota = {};
      sns.quota = {};
      burst.share = 0;
    },
    quotaThrottled: () =>
      burst.throttled +
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
      restore();
      world = undefined;
    },
  };
  wireProviderFaults(w, burst);
  wireDynamoFaults(w, documentClient);
  watchAttempts(() => (world ?? w).witness, { sendTimeoutMs: SEND_TIMEOUT_MS, dispatchTimeoutMs: DISPATCH_TIMEOUT_MS });
  world = w;
  return w;
}

/** Handler output, routed to standard error by captureOutput, kept (for the PII scan) instead of printed. */
function keepHandlerOutput() {
  const output = captureOutput();
  const logLines: string[] = [];
  const originalErr = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    // Powertools' plain-text warning when an invocation had no metric to flush is handler output too.
    if (text.startsWith('{') || text.startsWith('No application metrics to publish')) {
      for (const line of text.split('\n')) if (line) logLines.push(line);
      return true;
    }
    return originalErr(chunk);
  }) as typeof process.stderr.write;
  return {
    output,
    logLines,
    restore: () => {
      output.restore();
      process.stderr.write = originalErr;
    },
  };
}

/** What the providers answer each send: a paused account, a disabled application, a decided quota burst, the run's mode. */
function wireProviderFaults(w: World, burst: { share: number; throttled: number }): void {
  const fault = (c: Channel, to: string): Fault => {
    if (w.accountPaused.has(c)) {
      w.accountRefusals++;
      return 'accountPaused';
    }
    if (SENT_TO_ENDPOINT[c] && w.disabledApps.has(pushAppOf(to))) {
      w.applicationRefusals++;
      return 'applicationDisabled';
    }
    if (burst.share > 0 && w.decide.unit(`quota:${c}:${to}`) < burst.share) {
      burst.throttled++;
      return 'throttle';
    }
    return w.providerFault(c, to);
  };
  w.ses.fault = fault;
  w.sns.fault = fault;
  // Our role publishes to this account's endpoints only (the stack's IAM policy): SNS refuses any other's.
  w.sns.account = OWN_ACCOUNT;
}

/** The DynamoDB faults of a run, in the handlers' one client: armed ones first, then the run's decided share. */
function wireDynamoFaults(w: World, client: Parameters<typeof injectDynamoFaults>[0]): void {
  injectDynamoFaults(client, {
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
}
