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
 * Where the time goes, per notification, from delivered (the record handed to the ingest handler) to the provider's
 * acceptance: e2e-trace.ts takes the timestamps, e2e-report.ts reads them.
 *
 * The run in steps: start the world (DynamoDB Local, the emulators, the handlers), trace the handlers, run the
 * triggers and the sweeper in the background, warm up, deliver the workload, wait until nothing is in flight, report.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { URGENT_BATCH_SIZE, urgentFilterPattern } from '../../functions/contracts/stream-filter.ts';
import { CRITICAL_TYPES } from '../../functions/domain/catalogue.ts';
import { onExit } from '../local/cli.ts';
import { createTable, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { mskEvent } from '../local/msk.ts';
import {
  countInFlight,
  type Handlers,
  KafkaMapping,
  lambdaContext,
  loadHandlers,
  readTable,
  StreamMapping,
} from '../local/pipeline.ts';
import { SendQuota, startSesEndpoint, startSnsEndpoint } from '../local/providers.ts';
import { StreamReader } from '../local/stream-reader.ts';
import { backlogFigures, byChannelAndClass, PHASES, round2, tracedRows, WARM_UP } from './e2e-report.ts';
import { type Tracing, traceTheHandlers } from './e2e-trace.ts';

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

/** Mixed workload: a normal, a critical and a bulk type in turn. */
const MIXED_TYPES = ['CardPayment', 'LoginFromNewDevice', 'StatementReady'] as const;
const BACKLOG_TYPE = 'CardPayment';
const CRITICAL_TYPE = 'LoginFromNewDevice';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
type Stop = () => Promise<void> | void;

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

/** DynamoDB Local, the SES emulator (with the quota under a backlog), local SNS, and the handlers configured on them. */
async function startWorld(options: EndToEndOptions, stops: Stop[]) {
  const db = await startDynamoDbLocal();
  stops.push(() => db.stop());
  const evidenceDir = mkdtempSync(join(tmpdir(), 'notifier-bench-e2e-evidence-'));
  stops.push(() => rmSync(evidenceDir, { recursive: true, force: true }));
  const ses = await startSesEndpoint();
  stops.push(() => ses.stop());
  const sns = await startSnsEndpoint();
  stops.push(() => sns.stop());
  const tableName = 'bench-e2e';
  await createTable(db.endpoint, tableName);
  const backlogMode = options.backlog > 0;
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
  return { db, ses, sns, tableName, handlers };
}
type World = Awaited<ReturnType<typeof startWorld>>;

/**
 * Dispatch's two triggers (lib/notifier-stack.ts), each reading the stream on its own and polling at once, as in AWS —
 * the urgent one (critical types only) and the routine one (every PENDING notification) — and the sweeper on its
 * schedule, all in the background until stopped. A poll or a sweeper run that fails is tried again on the next turn,
 * as Lambda's poller and schedule would; the failures are counted in the report.
 */
async function runTriggers(world: World, tracing: Tracing, options: EndToEndOptions, stops: Stop[]) {
  const readers = [
    new StreamReader(world.db.endpoint, world.tableName),
    new StreamReader(world.db.endpoint, world.tableName),
  ];
  stops.push(() => {
    for (const r of readers) r.close();
  });
  // Each trigger invokes its own Lambda environments: the urgent one gets a second instance of the dispatch module
  // (its own send slots and token bucket), so a critical record never queues for a slot a routine batch holds.
  const urgentModule = new URL('../../functions/dispatch/index.ts?environment=urgent', import.meta.url).href;
  const urgentHandler = ((await import(urgentModule)) as typeof import('../../functions/dispatch/index.ts')).handler;
  const routine = new StreamMapping(readers[1] as StreamReader, tracing.traced(world.handlers.dispatch));
  const urgent = new StreamMapping(readers[0] as StreamReader, tracing.traced(urgentHandler), {
    filter: urgentFilterPattern(CRITICAL_TYPES),
    batchSize: URGENT_BATCH_SIZE,
  });
  let running = true;
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
  const sweeps = { runs: 0, woken: 0, redriven: 0, resolved: 0 };
  const sweep = async (sweeper: Handlers['sweeper']) => {
    while (running) {
      for (let waited = 0; running && waited < options.sweepEverySeconds * 1000; waited += 250) await sleep(250);
      if (!running) break;
      try {
        const r = await sweeper({}, lambdaContext('notifier-sweeper', 55_000));
        sweeps.runs++;
        sweeps.woken += r.woken;
        sweeps.redriven += r.redriven;
        sweeps.resolved += r.resolvedRetry + r.resolvedUnknown + r.expired;
      } catch {
        failures.sweeperRuns++;
      }
    }
  };
  const background = Promise.all([poll(urgent), poll(routine), sweep(world.handlers.sweeper)]);
  return {
    failures,
    sweeps,
    onFailure: () => urgent.onFailure.length + routine.onFailure.length,
    stop: async () => {
      running = false;
      await background;
    },
  };
}

/** The workload's events, from the catalogue's examples, each to a customer of its own. */
function eventMaker() {
  const examples = catalogueExamples();
  let seq = 0;
  return (type: string, channels?: string[], prefix = 'e2e') => {
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
}

type MakeEvent = ReturnType<typeof eventMaker>;

/**
 * Warm-up, not measured: the first send of each type and channel pays for module and connection set-up once (a Lambda
 * environment's cold start), which would otherwise sit in the first figures of a short run.
 */
async function warmUp(world: World, kafka: KafkaMapping, value: MakeEvent) {
  const records = MIXED_TYPES.map((type, j) => ({
    topic: 'bench',
    partition: 0,
    offset: j,
    value: value(type, undefined, WARM_UP),
  }));
  await kafka.deliver(mskEvent(records));
  for (const started = Date.now(); Date.now() - started < 60_000; await sleep(250)) {
    if ((await countInFlight(world.db.endpoint, world.tableName)) === 0) break;
  }
}

/**
 * The workload on its schedule from `t0`: the mixed one a record at a time at its rate, or the backlog at once and
 * the critical emails spread through its drain. Each record's delivery time is noted, by eventId.
 */
async function deliverWorkload(
  kafka: KafkaMapping,
  tracing: Tracing,
  value: MakeEvent,
  options: EndToEndOptions,
  log: (m: string) => void,
  t0: number,
) {
  const ingesting = pLimit(4);
  const deliveries: Promise<void>[] = [];
  let offset = MIXED_TYPES.length;
  const deliver = (values: Record<string, unknown>[]) => {
    const at = offset;
    offset += values.length;
    return ingesting(async () => {
      const event = mskEvent(values.map((v, j) => ({ topic: 'bench', partition: 0, offset: at + j, value: v })));
      const now = Date.now();
      for (const v of values) tracing.delivered.set(String(v.eventId), now);
      await kafka.deliver(event);
    });
  };
  if (options.backlog === 0) {
    log(`e2e: ${options.events} events at ${options.ratePerSecond}/s, one record per delivery`);
    for (let i = 0; i < options.events; i++) {
      await sleep(Math.max(0, t0 + (i * 1000) / options.ratePerSecond - Date.now()));
      deliveries.push(deliver([value(MIXED_TYPES[i % MIXED_TYPES.length] as string)]));
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
          await deliver(Array.from({ length: n }, () => value(BACKLOG_TYPE, ['EMAIL'])));
        }
        log(`e2e: backlog ingested in ${round2((Date.now() - t0) / 1000)} s`);
      })(),
    );
    for (let k = 1; k <= options.critical; k++) {
      await sleep(Math.max(0, t0 + k * every - Date.now()));
      deliveries.push(deliver([value(CRITICAL_TYPE, ['EMAIL'])]));
    }
  }
  await Promise.all(deliveries);
}

/** Waits until no notification is PENDING or SENDING (or past a generous deadline): what is still in flight. */
async function drained(world: World, expectedMs: number, log: (m: string) => void, t0: number): Promise<number> {
  const deadline = Date.now() + expectedMs * 2 + 600_000;
  let inFlight = await countInFlight(world.db.endpoint, world.tableName);
  for (let lastLog = Date.now(); inFlight > 0 && Date.now() < deadline; ) {
    await sleep(1_000);
    inFlight = await countInFlight(world.db.endpoint, world.tableName);
    if (Date.now() - lastLog > 30_000) {
      lastLog = Date.now();
      log(`e2e: ${inFlight} notifications still PENDING or SENDING after ${Math.round((Date.now() - t0) / 1000)} s`);
    }
  }
  return inFlight;
}

/** The machine's load average, sampled every five seconds while the run lasts. */
function loadSampler(stops: Stop[]) {
  const start = round2(loadavg()[0] ?? 0);
  const loads: number[] = [];
  const timer = setInterval(() => loads.push(loadavg()[0] ?? 0), 5_000);
  stops.push(() => clearInterval(timer));
  return () => {
    const end = round2(loadavg()[0] ?? 0);
    return {
      start,
      end,
      max: round2(Math.max(start, end, ...loads)),
      mean: round2(loads.length === 0 ? end : loads.reduce((a, b) => a + b, 0) / loads.length),
    };
  };
}

/** One run of the pipeline under the workload; the handlers are loaded once per process (module-scope config). */
export async function measureEndToEnd(options: EndToEndOptions, log: (m: string) => void) {
  const backlogMode = options.backlog > 0;
  const stops: Stop[] = [];
  const forget = onExit(async () => {
    for (const stop of stops.reverse()) await stop();
  });
  try {
    const world = await startWorld(options, stops);
    const tracing = await traceTheHandlers();
    stops.push(() => tracing.restore());
    const triggers = await runTriggers(world, tracing, options, stops);
    const kafka = new KafkaMapping(world.handlers.ingest);
    const value = eventMaker();
    await warmUp(world, kafka, value);
    const t0 = Date.now();
    const load = loadSampler(stops);
    await deliverWorkload(kafka, tracing, value, options, log, t0);
    const inFlight = await drained(world, backlogMode ? (options.backlog / options.sesRate) * 1000 : 0, log, t0);
    const seconds = (Date.now() - t0) / 1000;
    await triggers.stop();
    const loadFigures = load();

    // ── What became of every notification, and where its time went ──
    const table = await readTable(world.db.endpoint, world.tableName);
    const accepted = new Map([...world.ses.sends, ...world.sns.sends].map((s) => [s.messageId, s.at]));
    const { rows, untraced } = tracedRows(table.notifications, tracing.traces, tracing.delivered, accepted);
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
      events: tracing.delivered.size,
      notifications,
      byStatus: table.byStatus,
      allSent: notifications > 0 && sent === notifications && inFlight === 0,
      notTraced: untraced,
      onFailure: triggers.onFailure(),
      providerThrottled: {
        SES: world.ses.throttled.EMAIL ?? 0,
        SNS: (world.sns.throttled.SMS ?? 0) + (world.sns.throttled.PUSH ?? 0),
      },
      sweeper: triggers.sweeps,
      failures: triggers.failures,
      byChannelAndClass: byChannelAndClass(rows, tracing.traces),
      ...(backlogMode ? backlogFigures(rows, tracing.traces, tracing.delivered, options.sesRate) : {}),
      load: loadFigures,
    };
  } finally {
    forget();
    for (const stop of stops.reverse()) await stop();
  }
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
