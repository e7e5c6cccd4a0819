/**
 * The end-to-end latency of a notice — record delivered to ingest → provider accepted — through the local pipeline:
 * the real ingest, dispatch and sweeper handlers on DynamoDB Local behind the emulated event source mappings
 * (tools/local/pipeline.ts), the SES emulator and the local SNS (tools/local/providers.ts). Unlike `npm start`, which
 * ingests a file and drains the stream every ten batches, everything runs at once as in AWS: records arrive on a
 * schedule, the stream is polled four times a second (as Lambda polls a DynamoDB stream), and the sweeper runs on its
 * schedule (production's 60 s by default).
 *
 * Two workloads:
 * - mixed (no backlog): `events` events at `ratePerSecond`, one record per delivery, the catalogue's normal, critical
 *   and bulk types in turn, each to every channel it allows; providers without a quota (as `npm start` runs them).
 * - backlog: `backlog` normal emails delivered at once (batches of 100) into an SES account of `sesRate` emails/s (the
 *   emulator throttles beyond it; dispatch is paced to it by the real shared token bucket on DynamoDB Local), and
 *   `critical` critical emails spread evenly through the time the backlog needs to drain.
 *
 * Where the time goes, per notification, from timestamps taken in this process around the real code (no product
 * code changes for it): delivered (the record handed to the ingest handler) → committed (ingest's TransactWriteItems
 * answered, a middleware on the handlers' own document client) → handed to dispatch (the first stream batch that
 * carried its INSERT) → claim started (of the attempt that sent; the difference is the wait for a slot in the
 * invocation and any deferral and wake-up in between) → token asked → token granted (the pacer) → send started → the
 * provider accepted (the emulator's own ledger, matched by the message id the send returned).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import { URGENT_BATCH_SIZE, urgentFilterPattern } from '../../functions/contracts/stream-filter.ts';
import { SharedTokenBucket } from '../../functions/dispatch/pacer.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { CRITICAL_TYPES, classOf } from '../../functions/domain/catalogue.ts';
import { parseNotificationId } from '../../functions/domain/keys.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { onExit } from '../local/cli.ts';
import { createTable, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { mskEvent } from '../local/msk.ts';
import {
  countInFlight,
  KafkaMapping,
  lambdaContext,
  loadHandlers,
  readTable,
  StreamMapping,
} from '../local/pipeline.ts';
import { SendQuota, startSesEndpoint, startSnsEndpoint } from '../local/providers.ts';
import { StreamReader } from '../local/stream-reader.ts';

export interface EndToEndOptions {
  /** Mixed workload: events, delivered one record at a time at `ratePerSecond`. */
  readonly events: number;
  readonly ratePerSecond: number;
  /** Backlog workload (when > 0): normal emails delivered at once, drained at `sesRate`. */
  readonly backlog: number;
  /** Critical emails spread through the backlog's drain. */
  readonly critical: number;
  /** The SES account's emails per second in the backlog workload (the emulator's quota and dispatch's rate). */
  readonly sesRate: number;
  /** The sweeper's schedule (SWEEP_INTERVAL_SECONDS); production runs it every 60 s. */
  readonly sweepEverySeconds: number;
}

/**
 * The bench's dispatch timing. Production's lease (120 s) and pacing wait (10 s); a send timeout of 10 s instead of
 * production's 5 s and the local run's 2 s, so a send on a loaded, shared machine is not cut off and turned UNKNOWN
 * (the local run's 2 s did that to first emails under load). The lease still exceeds pacing wait + send timeout + the
 * write allowance (120 s > 10 + 10 + 0.5 s), as dispatch's configuration check requires.
 */
export const BENCH_DISPATCH_ENV = {
  LEASE_SECONDS: '120',
  SEND_TIMEOUT_MS: '10000',
  CONNECT_TIMEOUT_MS: '3000',
  MAX_PACING_WAIT_MS: '10000',
  // Production's backoff and stuck threshold (the local run shortens both so its tests converge fast).
  RETRY_BASE_MS: '1000',
  PENDING_THRESHOLD_SECONDS: '900',
} as const;

/** The catalogue's examples (examples/catalogue.jsonl): one English event per type, the bench's templates. */
function catalogueExamples(): Map<string, Record<string, unknown>> {
  const file = new URL('../../examples/catalogue.jsonl', import.meta.url);
  const byType = new Map<string, Record<string, unknown>>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const e = JSON.parse(line) as Record<string, unknown> & { recipient: { locale?: string } };
    if (e.recipient.locale === 'en' && !byType.has(String(e.type))) byType.set(String(e.type), e);
  }
  return byType;
}

/** Mixed workload: a normal, a critical and a bulk type in turn. */
const MIXED_TYPES = ['CardPayment', 'LoginFromNewDevice', 'StatementReady'] as const;
const BACKLOG_TYPE = 'CardPayment';
const CRITICAL_TYPE = 'LoginFromNewDevice';
const WARM_UP = 'warm-up';

interface Trace {
  deliveredAt?: number;
  committedAt?: number;
  handedAt?: number;
  claims: number;
  claimAt?: number;
  askedAt?: number;
  grantedAt?: number;
  sendAt?: number;
  messageId?: string;
}

const PHASES = ['ingest', 'stream', 'dispatchQueue', 'claim', 'pacingWait', 'audience', 'provider'] as const;
type Phase = (typeof PHASES)[number];

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
function spread(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  return { count: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? 0 };
}
const round2 = (n: number) => Math.round(n * 100) / 100;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One run of the pipeline under the workload; the handlers are loaded once per process (module-scope config). */
export async function measureEndToEnd(options: EndToEndOptions, log: (m: string) => void) {
  const backlogMode = options.backlog > 0;
  const db = await startDynamoDbLocal();
  const stops: (() => Promise<void> | void)[] = [() => db.stop()];
  const forget = onExit(async () => {
    for (const stop of stops.reverse()) await stop();
  });
  const evidenceDir = mkdtempSync(join(tmpdir(), 'notifier-bench-e2e-evidence-'));
  stops.push(() => rmSync(evidenceDir, { recursive: true, force: true }));
  try {
    const ses = await startSesEndpoint();
    stops.push(() => ses.stop());
    const sns = await startSnsEndpoint();
    stops.push(() => sns.stop());
    const tableName = 'bench-e2e';
    await createTable(db.endpoint, tableName);
    const rate = backlogMode ? String(options.sesRate) : '100000';
    if (backlogMode) ses.quota.EMAIL = new SendQuota(options.sesRate);
    const handlers = await loadHandlers({
      dynamoEndpoint: db.endpoint,
      sesEndpoint: ses.url,
      snsEndpoint: sns.url,
      tableName,
      extra: {
        ...BENCH_DISPATCH_ENV,
        MAX_EVENT_AGE_SECONDS: '0',
        EVIDENCE_DIR: evidenceDir,
        SEND_RATE_EMAIL: rate,
        SEND_RATE_SMS: '100000',
        SEND_RATE_PUSH: '100000',
        SWEEP_INTERVAL_SECONDS: String(options.sweepEverySeconds),
      },
    });

    // ── Instrumentation around the real code, in this process ──
    const traces = new Map<string, Trace>();
    const trace = (id: string) => {
      const t = traces.get(id) ?? { claims: 0 };
      traces.set(id, t);
      return t;
    };
    const delivered = new Map<string, number>();
    const { documentClient } = await import('../../functions/commons/dynamodb-client.ts');
    documentClient.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand' || context.commandName === 'TransactWriteCommand') {
          const at = Date.now();
          const items = (args.input as { TransactItems?: { Put?: { Item?: Record<string, unknown> } }[] })
            .TransactItems;
          for (const put of items ?? []) {
            const item = put.Put?.Item;
            const id = attr(item?.notificationId);
            if (attr(item?.kind) === 'NOTIFICATION' && id !== undefined) trace(id).committedAt ??= at;
          }
        }
        return out;
      },
      { step: 'initialize', name: 'benchEndToEnd' },
    );
    // The attempt a pacer call belongs to: set when the claim starts (the first step of every attempt).
    const attempt = new AsyncLocalStorage<{ id?: string }>();
    const claim = DynamoNotificationStore.prototype.claim;
    DynamoNotificationStore.prototype.claim = function (this: DynamoNotificationStore, ...a: Parameters<typeof claim>) {
      const at = Date.now();
      const current: { id?: string } = {};
      attempt.enterWith(current);
      return claim.apply(this, a).then((result) => {
        if (result.kind === 'claimed') {
          current.id = result.item.notificationId;
          const t = trace(result.item.notificationId);
          t.claims++;
          t.claimAt = at;
        }
        return result;
      });
    };
    const acquire = SharedTokenBucket.prototype.acquire;
    SharedTokenBucket.prototype.acquire = async function (this: SharedTokenBucket, ...a: Parameters<typeof acquire>) {
      const current = attempt.getStore();
      const asked = Date.now();
      const got = await acquire.apply(this, a);
      if (got && current?.id !== undefined) {
        const t = trace(current.id);
        t.askedAt = asked;
        t.grantedAt = Date.now();
      }
      return got;
    };
    const send = ProviderSender.prototype.send;
    ProviderSender.prototype.send = async function (this: ProviderSender, ...a: Parameters<typeof send>) {
      const at = Date.now();
      const messageId = await send.apply(this, a);
      const t = trace(a[0].notificationId);
      t.sendAt = at;
      t.messageId = messageId;
      return messageId;
    };
    stops.push(() => {
      DynamoNotificationStore.prototype.claim = claim;
      SharedTokenBucket.prototype.acquire = acquire;
      ProviderSender.prototype.send = send;
    });
    const traced =
      (handler: typeof handlers.dispatch) =>
      async (event: DynamoDBStreamEvent, context: Parameters<typeof handlers.dispatch>[1]) => {
        const at = Date.now();
        for (const r of event.Records) {
          const id = r.dynamodb?.NewImage?.notificationId?.S;
          if (id !== undefined) trace(id).handedAt ??= at;
        }
        return handler(event, context);
      };
    const dispatch = traced(handlers.dispatch);

    // ── The pipeline, every part at once ──
    const kafka = new KafkaMapping(handlers.ingest);
    // Dispatch's two triggers (lib/notifier-stack.ts), each reading the stream on its own and polling at once, as in
    // AWS: the urgent one (critical types only) and the routine one (every PENDING notification).
    const readers = {
      urgent: new StreamReader(db.endpoint, tableName),
      routine: new StreamReader(db.endpoint, tableName),
    };
    stops.push(() => {
      readers.urgent.close();
      readers.routine.close();
    });
    // Each trigger invokes its own Lambda environments: the urgent one gets a second instance of the dispatch module
    // (its own send slots and token bucket), so a critical record never queues for a slot a routine batch holds.
    const urgentModule = new URL('../../functions/dispatch/index.ts?environment=urgent', import.meta.url).href;
    const urgentHandler = ((await import(urgentModule)) as typeof import('../../functions/dispatch/index.ts')).handler;
    const urgentDispatch = traced(urgentHandler);
    const routineTrigger = new StreamMapping(readers.routine, dispatch);
    const urgentTrigger = new StreamMapping(readers.urgent, urgentDispatch, {
      filter: urgentFilterPattern(CRITICAL_TYPES),
      batchSize: URGENT_BATCH_SIZE,
    });
    let running = true;
    const loads: number[] = [];
    const loadTimer = setInterval(() => loads.push(loadavg()[0] ?? 0), 5_000);
    stops.push(() => clearInterval(loadTimer));
    // A poll or a sweeper run that fails is tried again on the next turn, as Lambda's poller and schedule would; the
    // failures are counted in the report.
    const failures = { streamPolls: 0, sweeperRuns: 0 };
    const poll = async (stream: StreamMapping) => {
      while (running) {
        try {
          if ((await stream.pump()) === 0) await sleep(250);
        } catch {
          failures.streamPolls++;
          await sleep(1_000);
        }
      }
    };
    const polling = Promise.all([poll(urgentTrigger), poll(routineTrigger)]);
    const sweeps = { runs: 0, woken: 0, redriven: 0, resolved: 0 };
    const sweeping = (async () => {
      while (running) {
        for (let waited = 0; running && waited < options.sweepEverySeconds * 1000; waited += 250) await sleep(250);
        if (!running) break;
        try {
          const r = await handlers.sweeper({}, lambdaContext('notifier-sweeper', 55_000));
          sweeps.runs++;
          sweeps.woken += r.woken;
          sweeps.redriven += r.redriven;
          sweeps.resolved += r.resolvedRetry + r.resolvedUnknown + r.expired;
        } catch {
          failures.sweeperRuns++;
        }
      }
    })();

    const examples = catalogueExamples();
    let seq = 0;
    const value = (type: string, channels?: string[], prefix = 'e2e') => {
      const template = examples.get(type);
      if (template === undefined) throw new Error(`examples/catalogue.jsonl has no English ${type} event`);
      const i = seq++;
      const recipient = template.recipient as Record<string, unknown>;
      return {
        ...template,
        eventId: `${prefix}-${i}`,
        occurredAt: new Date().toISOString(),
        recipient: { ...recipient, userId: `u-e2e-${i}`, email: `customer${i}@example.com` },
        ...(channels === undefined ? {} : { channels }),
      };
    };
    const deliver = async (values: Record<string, unknown>[], offset: number) => {
      const event = mskEvent(values.map((v, j) => ({ topic: 'bench', partition: 0, offset: offset + j, value: v })));
      const at = Date.now();
      for (const v of values) delivered.set(String(v.eventId), at);
      await kafka.deliver(event);
    };

    // Warm-up, not measured: the first send of each type and channel pays for module and connection set-up once
    // (a Lambda environment's cold start), which would otherwise sit in the first figures of a short run.
    await kafka.deliver(
      mskEvent(
        MIXED_TYPES.map((type, j) => ({
          topic: 'bench',
          partition: 0,
          offset: j,
          value: value(type, undefined, WARM_UP),
        })),
      ),
    );
    for (const started = Date.now(); Date.now() - started < 60_000; await sleep(250)) {
      if ((await countInFlight(db.endpoint, tableName)) === 0) break;
    }

    const t0 = Date.now();
    const load = { start: round2(loadavg()[0] ?? 0) };
    const ingesting = pLimit(4);
    const deliveries: Promise<void>[] = [];
    let offset = MIXED_TYPES.length;
    if (!backlogMode) {
      log(`e2e: ${options.events} events at ${options.ratePerSecond}/s, one record per delivery`);
      for (let i = 0; i < options.events; i++) {
        await sleep(Math.max(0, t0 + (i * 1000) / options.ratePerSecond - Date.now()));
        const v = value(MIXED_TYPES[i % MIXED_TYPES.length] as string);
        const at = offset++;
        deliveries.push(ingesting(() => deliver([v], at)));
      }
    } else {
      const drainMs = (options.backlog / options.sesRate) * 1000;
      const every = drainMs / (options.critical + 1);
      log(
        `e2e: ${options.backlog} normal emails at once into ${options.sesRate}/s (≈${Math.round(drainMs / 1000)} s of drain), ${options.critical} critical emails every ${Math.round(every)} ms`,
      );
      deliveries.push(
        (async () => {
          for (let i = 0; i < options.backlog; i += 100) {
            const n = Math.min(100, options.backlog - i);
            const values = Array.from({ length: n }, () => value(BACKLOG_TYPE, ['EMAIL']));
            const at = offset;
            offset += n;
            await ingesting(() => deliver(values, at));
          }
          log(`e2e: backlog ingested in ${round2((Date.now() - t0) / 1000)} s`);
        })(),
      );
      for (let k = 1; k <= options.critical; k++) {
        await sleep(Math.max(0, t0 + k * every - Date.now()));
        const v = value(CRITICAL_TYPE, ['EMAIL']);
        const at = offset++;
        deliveries.push(ingesting(() => deliver([v], at)));
      }
    }
    await Promise.all(deliveries);
    const expectedMs = backlogMode ? (options.backlog / options.sesRate) * 1000 : 0;
    const deadline = Date.now() + expectedMs * 2 + 600_000;
    let inFlight = await countInFlight(db.endpoint, tableName);
    for (let lastLog = Date.now(); inFlight > 0 && Date.now() < deadline; ) {
      await sleep(1_000);
      inFlight = await countInFlight(db.endpoint, tableName);
      if (Date.now() - lastLog > 30_000) {
        lastLog = Date.now();
        log(`e2e: ${inFlight} notifications still PENDING or SENDING after ${Math.round((Date.now() - t0) / 1000)} s`);
      }
    }
    const seconds = (Date.now() - t0) / 1000;
    running = false;
    await Promise.all([polling, sweeping]);
    const loadEnd = round2(loadavg()[0] ?? 0);

    // ── What became of every notification, and where its time went ──
    const table = await readTable(db.endpoint, tableName);
    const accepted = new Map([...ses.sends, ...sns.sends].map((s) => [s.messageId, s.at]));
    const rows: { id: string; channel: string; noticeClass: string; total: number; phases: Record<Phase, number> }[] =
      [];
    let untraced = 0;
    for (const n of table.notifications) {
      const id = String(n.notificationId);
      const t = traces.get(id);
      const ref = parseNotificationId(id);
      if (ref?.eventId.startsWith(`${WARM_UP}-`)) continue;
      const deliveredAt = ref === undefined ? undefined : delivered.get(ref.eventId);
      const acceptedAt = t?.messageId === undefined ? undefined : accepted.get(t.messageId);
      if (
        n.status !== 'SENT' ||
        t === undefined ||
        deliveredAt === undefined ||
        acceptedAt === undefined ||
        t.committedAt === undefined ||
        t.handedAt === undefined ||
        t.claimAt === undefined ||
        t.askedAt === undefined ||
        t.grantedAt === undefined ||
        t.sendAt === undefined
      ) {
        untraced++;
        continue;
      }
      rows.push({
        id,
        channel: String(n.channel),
        noticeClass: classOf(String(n.template)),
        total: acceptedAt - deliveredAt,
        phases: {
          ingest: t.committedAt - deliveredAt,
          stream: t.handedAt - t.committedAt,
          dispatchQueue: t.claimAt - t.handedAt,
          claim: t.askedAt - t.claimAt,
          pacingWait: t.grantedAt - t.askedAt,
          audience: t.sendAt - t.grantedAt,
          provider: acceptedAt - t.sendAt,
        },
      });
    }
    const groups = new Map<string, typeof rows>();
    for (const r of rows) {
      const key = `${r.channel} ${r.noticeClass}`;
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    const breakdown = (of: typeof rows) => ({
      totalMs: spread(of.map((r) => r.total)),
      phasesMs: Object.fromEntries(PHASES.map((p) => [p, spread(of.map((r) => r.phases[p]))])) as Record<
        Phase,
        ReturnType<typeof spread>
      >,
      deferredBeforeSent: of.filter((r) => (traces.get(r.id)?.claims ?? 1) > 1).length,
    });
    const normalAccepts = rows
      .filter((r) => r.noticeClass === 'normal' && r.channel === 'EMAIL')
      .map((r) => r.total + (delivered.get(parseNotificationId(r.id)?.eventId ?? '') ?? 0))
      .sort((a, b) => a - b);
    const drainSeconds =
      normalAccepts.length > 1 ? ((normalAccepts.at(-1) as number) - (normalAccepts[0] as number)) / 1000 : 0;
    // Why a critical notice waited in the stream: the notifications committed before it and handed to dispatch only
    // after it was committed — ahead of it in the shard — and how long the quota needs for the emails among them.
    const ahead = rows
      .filter((r) => r.noticeClass === 'critical')
      .map((c) => {
        const t = traces.get(c.id) as Trace;
        const committed = t.committedAt as number;
        return rows.filter((o) => {
          const u = traces.get(o.id) as Trace;
          return o !== c && (u.committedAt as number) < committed && (u.handedAt as number) > committed;
        }).length;
      });
    const notifications = table.notifications.length;
    const sent = table.byStatus.SENT ?? 0;
    return {
      workload: backlogMode
        ? {
            kind: 'backlog' as const,
            backlog: options.backlog,
            critical: options.critical,
            sesRatePerSecond: options.sesRate,
          }
        : { kind: 'mixed' as const, events: options.events, ratePerSecond: options.ratePerSecond },
      sweepEverySeconds: options.sweepEverySeconds,
      dispatchTiming: BENCH_DISPATCH_ENV,
      seconds: round2(seconds),
      events: delivered.size,
      notifications,
      byStatus: table.byStatus,
      allSent: notifications > 0 && sent === notifications && inFlight === 0,
      notTraced: untraced,
      onFailure: urgentTrigger.onFailure.length + routineTrigger.onFailure.length,
      providerThrottled: { SES: ses.throttled.EMAIL ?? 0, SNS: (sns.throttled.SMS ?? 0) + (sns.throttled.PUSH ?? 0) },
      sweeper: sweeps,
      failures,
      byChannelAndClass: Object.fromEntries(
        [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, of]) => [k, breakdown(of)]),
      ),
      ...(backlogMode
        ? {
            criticalBehindInStream: {
              notifications: spread(ahead),
              atQuotaMs: spread(ahead.map((n) => Math.round((n * 1000) / options.sesRate))),
            },
            drain: {
              normalEmailsSent: normalAccepts.length,
              seconds: round2(drainSeconds),
              perSecond: drainSeconds > 0 ? round2((normalAccepts.length - 1) / drainSeconds) : 0,
              ofQuota: drainSeconds > 0 ? round2((normalAccepts.length - 1) / drainSeconds / options.sesRate) : 0,
            },
          }
        : {}),
      load: {
        start: load.start,
        end: loadEnd,
        max: round2(Math.max(load.start, loadEnd, ...loads)),
        mean: round2(loads.length === 0 ? loadEnd : loads.reduce((a, b) => a + b, 0) / loads.length),
      },
    };
  } finally {
    forget();
    for (const stop of stops.reverse()) await stop();
  }
}

/** An attribute's value whether the input was still plain (document client) or already marshalled ({ S: … }). */
function attr(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { S?: unknown }).S === 'string')
    return (v as { S: string }).S;
  return undefined;
}

export type EndToEndReport = Awaited<ReturnType<typeof measureEndToEnd>>;

/** The human summary of a run. */
export function endToEndTable(r: EndToEndReport): string {
  const ms = (s: { p50: number; p99: number; max: number }) => `${s.p50} / ${s.p99} / ${s.max}`;
  const lines = [
    r.workload.kind === 'mixed'
      ? `End to end (record delivered to ingest → provider accepted): ${r.workload.events} events at ${r.workload.ratePerSecond}/s, ${r.seconds} s`
      : `End to end under a backlog: ${r.workload.backlog} normal emails at ${r.workload.sesRatePerSecond}/s with ${r.workload.critical} critical emails spread through the drain, ${r.seconds} s`,
    `notifications ${r.notifications}: ${Object.entries(r.byStatus)
      .map(([s, n]) => `${s} ${n}`)
      .join(
        ', ',
      )}${r.allSent ? ' — every one SENT' : ' — NOT ALL SENT'}; not traced ${r.notTraced}; sweeper runs ${r.sweeper.runs} (woken ${r.sweeper.woken}, redriven ${r.sweeper.redriven}); load average ${r.load.start} → ${r.load.end} (max ${r.load.max})`,
    '',
    `| channel class | n | total p50 / p99 / max ms | ${PHASES.join(' | ')} (p50 / p99 ms) | deferred first |`,
    `|---|---|---|${PHASES.map(() => '---|').join('')}---|`,
    ...Object.entries(r.byChannelAndClass).map(
      ([k, b]) =>
        `| ${k} | ${b.totalMs.count} | ${ms(b.totalMs)} | ${PHASES.map((p) => `${b.phasesMs[p].p50} / ${b.phasesMs[p].p99}`).join(' | ')} | ${b.deferredBeforeSent} |`,
    ),
    ...('drain' in r && r.drain !== undefined && r.criticalBehindInStream !== undefined
      ? [
          '',
          `backlog drain: ${r.drain.normalEmailsSent} emails in ${r.drain.seconds} s = ${r.drain.perSecond}/s (${r.drain.ofQuota} of the quota); SES throttled ${r.providerThrottled.SES}`,
          `a critical email found ${ms(r.criticalBehindInStream.notifications)} notifications ahead of it in the stream (p50 / p99 / max): ${ms(r.criticalBehindInStream.atQuotaMs)} ms at the quota`,
        ]
      : []),
    '',
  ];
  return lines.join('\n');
}
