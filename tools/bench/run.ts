/**
 * `npm run bench`: figures measured side by side in one run, so a noisy machine still gives fair ratios.
 *
 *   npm run bench -- [--events N] [--rounds R] [--json] [--quick]
 *
 * - ingest on DynamoDB Local: notifier's batch path (a), the same at concurrency 1 (b), and the Powertools
 *   Idempotency baseline (c), in alternating rounds; events/s (median), DynamoDB requests and the read and write
 *   units DynamoDB bills per record (tools/bench/billing.ts); again with 10%, 50% and 100% duplicates — records of events
 *   ingested before the measurement (a redelivery or a resend), spread evenly through the stream.
 * - ingest against a DynamoDB answering after 10 ms per call (tools/bench/latency-dynamodb.ts), at concurrency 1/4/16/64,
 *   with no duplicates and with 10%, 50% and 100%.
 * - the cost of one million notifications on list prices (tools/bench/prices.ts), notifier next to the baseline, and the
 *   capacity model at 10,000 notifications per second (tools/bench/capacity.ts) from the units and durations measured here.
 * - `--quick`: small sizes, one round, for development (the figures are noisy; the full run is the one to quote).
 * - CPU per event (decode + validate + route + build the transaction) with an instant client.
 * - dispatch sends/s at batch 100 against providers with 50 ms latency, at the stack's concurrency.
 * - each function's bundle size and its init time in a fresh Node process (median of 10).
 * - `--pipeline`: only the whole pipeline, end to end, as `npm start -- --events FILE` runs it, at two sizes
 *   (tools/bench/pipeline.ts): its rate and its peak memory.
 * - `--e2e`: only the end-to-end latency of a notice, record delivered to ingest → provider accepted, through the
 *   local pipeline with every part running at once (tools/bench/e2e.ts); with `--critical --backlog N`, critical
 *   emails while a backlog of N normal emails drains at the SES quota, and where their time goes.
 */
import './env.ts';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import { build } from 'esbuild';
import pLimit from 'p-limit';
import { neverHeld } from '../../functions/dispatch/channel-breaker.ts';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { unpaced } from '../../functions/dispatch/pacer.ts';
import { brandEnvValue } from '../../functions/domain/brand.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { buildInbox, buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { contactFor, route } from '../../functions/domain/routing.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { type BatchDeps, ingestBatch as ingestOrReport } from '../../functions/ingest/ingest-batch.ts';
import { BUNDLE } from '../../lib/bundling.ts';
import { EXIT, intOption, onExit, parseCommandLine, runCommand, UsageError } from '../local/cli.ts';
import { createTable, localClient, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';
import { mskEvent } from '../local/msk.ts';
import { itemBytes, noUnits, requestUnits, type Units, writeUnits } from './billing.ts';
import { capacityModel, type Measured } from './capacity.ts';
import { endToEndTable, measureEndToEnd } from './e2e.ts';
import { latencyClient } from './latency-dynamodb.ts';
import { MemoryNotificationStore } from './memory-store.ts';
import { type PipelineRun, runPipeline } from './pipeline.ts';
import { costOf, US_EAST_1_PRICES } from './prices.ts';
import { measureCriticalUnderBacklog, measurePacing, measureSweeperDrain } from './quota.ts';

/** A batch that failed, or a workload record quarantined, would make every figure wrong: stop the run instead. */
async function ingestBatch(event: MSKEvent, deps: BatchDeps): Promise<void> {
  const summary = await ingestOrReport(event, deps);
  if (summary.failure !== undefined) throw summary.failure;
  const bad = summary.results.find((r) => r.kind === 'quarantined' || r.kind === 'conflict');
  if (bad !== undefined) throw new Error(`bench workload record not accepted: ${JSON.stringify(bad)}`);
}

const USAGE = `
Usage: npm run bench -- [--events N] [--rounds R] [--json] [--quota | --critical [--backlog N] | --pipeline | --cpu [--baseline DIR]] [--quick]
       npm run bench -- --e2e [--events N] [--rate R] [--critical --backlog N --critical-count C] [--sweep-every S] [--json] [--quick]

Measures ingest, dispatch, CPU, bundle size and init time side by side on DynamoDB Local (README "Performance").

  --events N   events per ingest measurement (default 1000)
  --rounds R   alternating rounds per comparison; medians are reported (default 3)
  --json       standard output is exactly one JSON document
  --quota      only the pacing and sweeper-drain figures (tools/bench/quota.ts)
  --critical   only critical first: --backlog N normal emails (default 10000) drain at 14/s through 5 environments
               while a critical email arrives every 2 s; its token wait p50/p99, the drain rate (tools/bench/quota.ts)
  --backlog N  with --critical: the normal emails of the backlog
  --pipeline   only the whole pipeline as npm start runs it, 2,000 and 6,000 events (tools/bench/pipeline.ts): rate and
               peak memory, DynamoDB Local on disk (and 2,000 in memory, for comparison)
  --cpu        only the CPU per event of the ingest path (no DynamoDB): 5 warm-up runs, then R × 5 runs of
               max(N, 2000) events; each figure (wall and the process's own CPU time) and their medians
  --baseline DIR
               with --cpu: another checkout's ingest path (e.g. git worktree add ../base main) alternating with this
               one in the same process, and the median ratio: a change's cost on a busy machine
  --e2e        only the end-to-end latency of a notice, record delivered to ingest → provider accepted, through the
               local pipeline (the real handlers on DynamoDB Local, the stream polled 4 times a second, the sweeper on
               its schedule, the SES emulator and local SNS; tools/bench/e2e.ts): p50/p99/max per channel and class, and
               where the time goes (ingest, stream, dispatch queue, claim, pacing wait, audience check, provider).
               Alone: --events N (default 300) events at --rate R per second (default 10), a normal, a critical and a
               bulk type in turn, every channel each allows, providers without a quota.
               With --critical: --backlog N normal emails (default 10000) at once into a 14/s SES account (emulator
               quota and the real shared token bucket), and --critical-count C critical emails (default 100) spread
               through the drain; the drain rate against 14/s, and whether every notification ended SENT
  --rate R     with --e2e: events per second of the mixed workload
  --critical-count C
               with --e2e --critical: the critical emails sent during the drain
  --sweep-every S
               with --e2e: the sweeper's schedule in seconds (default 60, production's)
  --quick      small sizes and one round: for development, not for quoting
               (--e2e: 60 events; with --critical, a backlog of 300 and 5 critical emails)
  -h, --help   this text

Exit codes: 0 measured; 1 a measurement failed; 2 usage (unknown flag, bad value); 130/143/129 interrupted.
`;
function parseOptions() {
  const { values } = parseCommandLine(
    {
      usage: USAGE,
      options: {
        events: { type: 'string' },
        rounds: { type: 'string', default: '3' },
        json: { type: 'boolean', default: false },
        quota: { type: 'boolean', default: false },
        critical: { type: 'boolean', default: false },
        backlog: { type: 'string' },
        pipeline: { type: 'boolean', default: false },
        cpu: { type: 'boolean', default: false },
        baseline: { type: 'string' },
        quick: { type: 'boolean', default: false },
        e2e: { type: 'boolean', default: false },
        rate: { type: 'string' },
        'critical-count': { type: 'string' },
        'sweep-every': { type: 'string' },
      },
    },
    process.argv.slice(2),
  );
  if ([values.quota, values.pipeline, values.cpu, values.critical].filter((v) => v === true).length > 1) {
    throw new UsageError('--quota, --pipeline, --cpu and --critical are separate runs: give one of them');
  }
  if (values.e2e === true && [values.quota, values.pipeline, values.cpu].some((v) => v === true)) {
    throw new UsageError('--e2e is a run of its own: give it alone, or with --critical');
  }
  const e2eOnly = {
    rate: values.rate,
    'critical-count': values['critical-count'],
    'sweep-every': values['sweep-every'],
  };
  for (const [flag, value] of Object.entries(e2eOnly)) {
    if (value !== undefined && values.e2e !== true)
      throw new UsageError(`--${flag} belongs to --e2e: give it with --e2e`);
  }
  if (values['critical-count'] !== undefined && values.critical !== true) {
    throw new UsageError('--critical-count is the critical emails during a backlog: give it with --e2e --critical');
  }
  if (values.backlog !== undefined && values.critical !== true) {
    throw new UsageError('--backlog is the normal emails critical ones must overtake: give it with --critical');
  }
  if (values.e2e === true && values.critical === true && (values.events ?? values.rate) !== undefined) {
    throw new UsageError(
      '--events and --rate size the mixed --e2e workload; under a backlog: --backlog, --critical-count',
    );
  }
  if (values.baseline !== undefined && values.cpu !== true) {
    throw new UsageError('--baseline compares the CPU per event: give it with --cpu');
  }
  return {
    json: values.json === true,
    quota: values.quota === true,
    critical: values.critical === true,
    backlog: intOption('backlog', values.backlog, 1) ?? 10_000,
    e2e: values.e2e === true,
    rate: intOption('rate', values.rate, 1, 1_000) ?? 10,
    criticalCount: intOption('critical-count', values['critical-count'], 1),
    sweepEvery: intOption('sweep-every', values['sweep-every'], 1, 3_600) ?? 60,
    eventsGiven: intOption('events', values.events, 1),
    pipeline: values.pipeline === true,
    cpu: values.cpu === true,
    baseline: values.baseline,
    quick: values.quick === true,
    events: intOption('events', values.events, 1) ?? 1000,
    backlogGiven: values.backlog !== undefined,
    rounds: intOption('rounds', values.rounds, 1) ?? 3,
  };
}
// Set by the command line before anything is measured (runCommand below).
let args: ReturnType<typeof parseOptions>;
let EVENTS: number;
let ROUNDS: number;
const LATENCY_MS = 10;
const CONCURRENCIES = [1, 4, 16, 64];
const DUPLICATE_SHARES = [0.1, 0.5, 1];
const INGEST_CONCURRENCY = 16; // the stack's INGEST_CONCURRENCY
const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
/** The repository's root: the functions' sources for the bundles, and where `npm start` runs for --pipeline. */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round2 = (n: number) => Math.round(n * 100) / 100;

// ── Workload ──
const CHANNEL_SETS = [['EMAIL'], ['EMAIL', 'PUSH'], ['EMAIL', 'PUSH', 'SMS']];
function eventValue(eventId: string, i: number) {
  return {
    eventId,
    type: i % 5 === 0 ? 'TransferFailed' : 'TransferCompleted',
    occurredAt: '2026-11-30T09:15:00Z',
    recipient: {
      userId: `u-${i}`,
      locale: i % 2 ? 'ja' : 'en',
      email: `user${i}@example.com`,
      pushEndpointArn: `arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/0f9c1d2e-3b4a-5c6d-7e8f-${String(i).padStart(12, '0')}`,
      phoneNumber: `+8190${String(10_000_000 + i).slice(-8)}`,
    },
    data: {
      transferId: `t-${i}`,
      // JPY has no minor unit (ISO 4217): a whole amount.
      amount: String(1000 + i),
      currency: 'JPY',
      counterpartyName: 'Taro Yamada',
      reason: 'insufficient funds',
    },
    channels: CHANNEL_SETS[i % 3],
  };
}
/**
 * n records, `dupShare` of which are events ingested before (`seed`, delivered first and not measured): redeliveries
 * and resends, spread evenly through the stream. At 100% the measured batches are the seed's batches again: a batch
 * redelivered whole.
 */
function workload(prefix: string, n: number, dupShare: number): { seed: MSKEvent[]; batches: MSKEvent[] } {
  const dups = Math.round(n * dupShare);
  const seedValues = Array.from({ length: dups }, (_, i) => eventValue(`${prefix}-seen-${i}`, i));
  const values: object[] = [];
  let seen = 0;
  for (let i = 0; i < n; i++) {
    const dup = Math.floor(((i + 1) * dups) / n) > Math.floor((i * dups) / n);
    values.push(dup ? (seedValues[seen++] as object) : eventValue(`${prefix}-${i}`, i));
  }
  return { seed: batchesOf(seedValues), batches: batchesOf(values) };
}
function batchesOf(values: object[]): MSKEvent[] {
  const batches: MSKEvent[] = [];
  for (let i = 0; i < values.length; i += 100) {
    batches.push(
      mskEvent(values.slice(i, i + 100).map((value, j) => ({ topic: 'bench', partition: 0, offset: i + j, value }))),
    );
  }
  return batches;
}

// ── DynamoDB accounting: a middleware counts requests and the units DynamoDB bills for each (tools/bench/billing.ts) ──
interface Usage extends Units {
  requests: number;
}
function instrument(client: DynamoDBClient): Usage {
  const usage: Usage = { requests: 0, ...noUnits() };
  client.middlewareStack.add(
    (next, context) => async (a) => {
      usage.requests++;
      const input = a.input as Record<string, unknown>;
      let output: Record<string, unknown> | undefined;
      let error: string | undefined;
      try {
        const out = await next(a);
        output = out.output as unknown as Record<string, unknown>;
        return out;
      } catch (e) {
        error = (e as Error).name;
        throw e;
      } finally {
        const u = requestUnits(String(context.commandName), input, output, error, { inboxBytes: SIZES.inboxBytes });
        usage.rru += u.rru;
        usage.wru += u.wru;
        usage.indexWru += u.indexWru;
      }
    },
    { step: 'initialize', name: 'benchUsage' },
  );
  return usage;
}

interface Measure {
  eventsPerSec: number;
  requestsPerEvent: number;
  /** Billed write request units per record, sweep index included. */
  wruPerEvent: number;
  /** Billed read request units per record. */
  rruPerEvent: number;
}

/** The sizes of the items the code builds for a typical bench event, as DynamoDB counts them. */
const SIZES = (() => {
  const value = eventValue('size-sample-000123', 1);
  const d = decodeRecordValue(Buffer.from(JSON.stringify(value)).toString('base64'), 65_536);
  if (!isTransfer(d)) throw new Error('bench event invalid');
  const now = Date.now();
  const source = { topic: 'bench', partition: 0, offset: 123_456 };
  const inbox = buildInbox(d.event, `v1:${'0'.repeat(64)}`, ['EMAIL', 'PUSH'], source, now, { retentionDays: 35 });
  const notifications = (['EMAIL', 'PUSH', 'SMS'] as const).map((c) =>
    itemBytes(
      buildNotification(d.event, c, contactFor(d.event.recipient, c) as string, now, { retentionDays: 35 }) as never,
    ),
  );
  return {
    inboxBytes: itemBytes(inbox as never),
    notificationBytes: Math.max(...notifications),
    eventBytes: Buffer.byteLength(JSON.stringify(value)),
  };
})();

async function main() {
  if (args.pipeline) return { pipeline: await measurePipeline() };
  if (args.e2e) return { endToEnd: await measureE2e() };
  if (args.cpu) return measureCpuOnly();
  const db = await startDynamoDbLocal();
  const forget = onExit(() => db.stop());
  try {
    if (args.quota) return { quota: await measureQuota(db.endpoint) };
    if (args.critical) {
      log(
        `critical first: ${args.backlog} normal emails at 14/s (${Math.round(args.backlog / 14)} s) with a critical one every 2 s`,
      );
      return {
        criticalFirst: await measureCriticalUnderBacklog(db.endpoint, {
          rate: 14,
          environments: 5,
          backlog: args.backlog,
          criticalEveryMs: 2_000,
        }),
      };
    }
    return await measureAll(db.endpoint);
  } finally {
    forget();
    await db.stop();
  }
}

async function measureAll(endpoint: string) {
  const table = `bench-${randomUUID().slice(0, 6)}`;
  await createTable(endpoint, table);
  const idemTable = `${table}-idem`;
  const raw = localClient(endpoint);
  await raw.send(
    new CreateTableCommand({
      TableName: idemTable,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }),
  );

  const notifierClient = localClient(endpoint);
  const notifierUsage = instrument(notifierClient);
  const store = new DynamoInboxStore(DynamoDBDocumentClient.from(notifierClient), table);
  const baseClient = localClient(endpoint);
  const baseUsage = instrument(baseClient);
  const baseline = powertoolsBaseline(baseClient, table, idemTable);

  const runIngest = async (dupShare: number, withSequential: boolean) => {
    const results = { notifier: [] as Measure[], sequential: [] as Measure[], powertools: [] as Measure[] };
    for (let r = 0; r < ROUNDS; r++) {
      const tag = `${dupShare}-${r}-${randomUUID().slice(0, 4)}`;
      // Alternate the order each round so neither side always runs on a warmer DynamoDB Local.
      const order = r % 2 === 0 ? ['notifier', 'powertools'] : ['powertools', 'notifier'];
      for (const which of order) {
        if (which === 'notifier') {
          results.notifier.push(await measureNotifier(store, notifierUsage, workload(`n-${tag}`, EVENTS, dupShare)));
        } else {
          results.powertools.push(await measureBaseline(baseline, baseUsage, workload(`p-${tag}`, EVENTS, dupShare)));
        }
      }
      if (withSequential) {
        results.sequential.push(await measureNotifier(store, notifierUsage, workload(`s-${tag}`, EVENTS, dupShare), 1));
      }
      log(`ingest dup=${dupShare * 100}% round ${r + 1}/${ROUNDS}`);
    }
    const notifier = summarize(results.notifier);
    const powertools = summarize(results.powertools);
    return {
      notifier,
      sequential: withSequential ? summarize(results.sequential) : undefined,
      powertools,
      ratioVsPowertools: round2(notifier.eventsPerSec / powertools.eventsPerSec),
    };
  };

  const main = await runIngest(0, true);
  const withDuplicates = [];
  for (const share of DUPLICATE_SHARES) {
    const r = await runIngest(share, false);
    withDuplicates.push({
      duplicateShare: share,
      notifier: r.notifier,
      powertools: r.powertools,
      ratioVsPowertools: r.ratioVsPowertools,
    });
  }

  // ── Under latency: 10 ms per DynamoDB call, answered in the client (tools/bench/latency-dynamodb.ts) ──
  const latencyEvents = args.quick ? Math.min(EVENTS, 100) : Math.min(EVENTS, 500);
  const latencyRun = async (dupShare: number, concurrency: number) => {
    const tag = `l-${dupShare}-${concurrency}`;
    const nClient = latencyClient(LATENCY_MS);
    const n = await measureNotifier(
      new DynamoInboxStore(DynamoDBDocumentClient.from(nClient), 'slow'),
      instrument(nClient),
      workload(`n-${tag}`, latencyEvents, dupShare),
      concurrency,
    );
    const pClient = latencyClient(LATENCY_MS);
    const p = await measureBaseline(
      powertoolsBaseline(pClient, 'slow', 'slow-idem'),
      instrument(pClient),
      workload(`p-${tag}`, latencyEvents, dupShare),
      concurrency,
    );
    return {
      duplicateShare: dupShare,
      concurrency,
      eventsPerSec: Math.round(n.eventsPerSec),
      powertoolsEventsPerSec: Math.round(p.eventsPerSec),
      ratioVsPowertools: round2(n.eventsPerSec / p.eventsPerSec),
      requestsPerEvent: round2(n.requestsPerEvent),
      powertoolsRequestsPerEvent: round2(p.requestsPerEvent),
    };
  };
  const latency = [];
  for (const concurrency of CONCURRENCIES) {
    const { duplicateShare: _, ...l } = await latencyRun(0, concurrency);
    latency.push(l);
  }
  const latencyWithDuplicates = [];
  for (const share of DUPLICATE_SHARES) {
    for (const concurrency of CONCURRENCIES) latencyWithDuplicates.push(await latencyRun(share, concurrency));
  }
  log('latency done');

  const cpuMicrosPerEvent = await measureCpu();
  log('cpu done');

  // ── Dispatch: batch 100, providers at 50 ms, the stack's concurrency (5 invocations × 10 sends each) ──
  const dispatch = await measureDispatch();
  log('dispatch done');

  const bundles = await measureBundles(args.quick ? 3 : Math.min(10, Math.max(3, ROUNDS * 3)));
  log('bundles done');

  const quota = await measureQuota(endpoint);

  raw.destroy();
  const ingest = { ...main, withDuplicates };
  const measured = measuredPerRecord(ingest, latency, latencyWithDuplicates, dispatch, quota);
  return {
    machine: { node: process.version, cpus: (await import('node:os')).cpus().length },
    events: EVENTS,
    rounds: ROUNDS,
    quick: args.quick,
    itemSizes: SIZES,
    ingest,
    latency,
    latencyWithDuplicates,
    cpuMicrosPerEvent,
    dispatch,
    bundles,
    quota,
    costPerMillionNotifications: costPerMillion(ingest, latency, latencyWithDuplicates, dispatch, quota),
    // Issue 18: the model at 10,000 notifications per second (and at 100 and 1,000 for README "Scaling"), from the
    // units and durations this run measured.
    capacity: capacityAt(10_000, measured),
    capacityByPeak: [100, 1_000, 10_000].map((n) => capacityAt(n, measured)),
    measuredForCapacity: measured,
  };
}

const capacityAt = (notificationsPerSec: number, measured: Measured) =>
  capacityModel({
    notificationsPerSec,
    channelsPerEvent: WORKLOAD_MIX.channelsPerEvent,
    channelMix: WORKLOAD_MIX.channelMix,
    duplicateShare: 0.1,
    measured,
    sizes: SIZES,
  });

/**
 * CPU per event (decode + validate + normalise + hash + route + build the transaction), the ingest batch path against
 * an instant client: no network, no DynamoDB, only our code.
 */
async function measureCpu(code: IngestCode = { ingestBatch: ingestOrReport, DynamoInboxStore }): Promise<number> {
  const instant = new code.DynamoInboxStore(
    { send: async () => ({}) } as unknown as DynamoDBDocumentClient,
    'instant',
  ) as DynamoInboxStore;
  const run = async (b: MSKEvent) => {
    const summary = await code.ingestBatch(b, { ...ingestDeps(16), store: instant });
    if (summary.failure !== undefined || summary.results.some((r) => r.kind !== 'accepted')) {
      throw new Error('bench workload record not accepted');
    }
  };
  const cpuBatches = workload('cpu', args.quick ? 1000 : Math.max(EVENTS, 2000), 0).batches;
  for (const b of cpuBatches.slice(0, 5)) await run(b); // warm up
  const tCpu = performance.now();
  const cpu0 = process.cpuUsage();
  for (const b of cpuBatches) await run(b);
  const used = process.cpuUsage(cpu0);
  lastProcessCpuMicrosPerEvent = round2((used.user + used.system) / (cpuBatches.length * 100));
  return round2(((performance.now() - tCpu) * 1000) / (cpuBatches.length * 100));
}
/** The process's own CPU time (user + system) per event in the last measureCpu: what a busy machine does not inflate. */
let lastProcessCpuMicrosPerEvent = 0;

/** The ingest path under measurement: this checkout's, or another checkout's (--baseline). */
interface IngestCode {
  readonly ingestBatch: typeof ingestOrReport;
  readonly DynamoInboxStore: new (client: DynamoDBDocumentClient, tableName: string) => unknown;
}

/**
 * --cpu: the CPU per event, R × 5 runs after 5 warm-up runs. With --baseline DIR (another checkout of notifier, e.g.
 * `git worktree add ../base main`), the other checkout's ingest path runs in the same process, alternating run by
 * run with this one: both meet the same machine (a shared machine's load would otherwise decide the comparison), and
 * the median of the per-run ratios says what the change costs.
 */
async function measureCpuOnly() {
  const baseline: IngestCode | undefined =
    args.baseline === undefined
      ? undefined
      : {
          ingestBatch: (await import(pathToFileURL(join(args.baseline, 'functions/ingest/ingest-batch.ts')).href))
            .ingestBatch,
          DynamoInboxStore: (await import(pathToFileURL(join(args.baseline, 'functions/ingest/inbox-store.ts')).href))
            .DynamoInboxStore,
        };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const measure = async (code?: IngestCode) => ({ wall: await measureCpu(code), cpu: lastProcessCpuMicrosPerEvent });
  // The JIT settles over the first runs: five are not counted.
  for (let i = 0; i < 5; i++) {
    await measure();
    if (baseline) await measure(baseline);
  }
  const mine: { wall: number; cpu: number }[] = [];
  const theirs: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < ROUNDS * 5; i++) {
    mine.push(await measure());
    if (baseline) theirs.push(await measure(baseline));
  }
  const summary = (runs: { wall: number; cpu: number }[]) => ({
    cpuMicrosPerEventMedian: median(runs.map((r) => r.wall)),
    processCpuMicrosPerEventMedian: median(runs.map((r) => r.cpu)),
    runs: runs.map((r) => r.wall),
    processRuns: runs.map((r) => r.cpu),
  });
  if (baseline === undefined) return { cpu: summary(mine) };
  return {
    cpu: {
      ...summary(mine),
      baseline: { dir: args.baseline, ...summary(theirs) },
      // This checkout over the baseline, run by run (each pair met the same moment of the machine).
      ratioMedian: round2(median(mine.map((m, i) => m.wall / (theirs[i]?.wall ?? m.wall)))),
      processRatioMedian: round2(median(mine.map((m, i) => m.cpu / (theirs[i]?.cpu ?? m.cpu)))),
    },
  };
}

const ingestDeps = (concurrency: number) => ({
  limit: pLimit(concurrency),
  now: Date.now,
  retentionDays: 35,
  maxEventBytes: 65_536,
  // The workload's events carry a fixed date: the age rule is not what this measures.
  maxEventAgeSeconds: 0,
  transactionAttempts: 4,
});

/** Seeds the events the duplicates repeat (not measured), then measures the workload's batches. */
async function measureNotifier(
  store: DynamoInboxStore,
  usage: Usage,
  work: { seed: MSKEvent[]; batches: MSKEvent[] },
  concurrency = INGEST_CONCURRENCY,
): Promise<Measure> {
  for (const b of work.seed) await ingestBatch(b, { ...ingestDeps(64), store });
  return measure(usage, work.batches, async () => {
    for (const b of work.batches) await ingestBatch(b, { ...ingestDeps(concurrency), store });
  });
}
async function measureBaseline(
  baseline: ReturnType<typeof powertoolsBaseline>,
  usage: Usage,
  work: { seed: MSKEvent[]; batches: MSKEvent[] },
  concurrency = INGEST_CONCURRENCY,
): Promise<Measure> {
  await baseline(work.seed, 64);
  return measure(usage, work.batches, () => baseline(work.batches, concurrency));
}
async function measure(usage: Usage, batches: MSKEvent[], work: () => Promise<unknown>): Promise<Measure> {
  const events = batches.reduce((n, b) => n + Object.values(b.records).flat().length, 0);
  const before = { ...usage };
  const t = performance.now();
  await work();
  const seconds = (performance.now() - t) / 1000;
  return {
    eventsPerSec: events / seconds,
    requestsPerEvent: (usage.requests - before.requests) / events,
    wruPerEvent: (usage.wru - before.wru) / events,
    rruPerEvent: (usage.rru - before.rru) / events,
  };
}
function summarize(ms: Measure[]): Measure {
  return {
    eventsPerSec: Math.round(median(ms.map((m) => m.eventsPerSec))),
    requestsPerEvent: round2(median(ms.map((m) => m.requestsPerEvent))),
    wruPerEvent: round2(median(ms.map((m) => m.wruPerEvent))),
    rruPerEvent: round2(median(ms.map((m) => m.rruPerEvent))),
  };
}

/** The workload's channels: 1, 2 or 3 per event in turn, EMAIL in every one, SMS in a third. */
const WORKLOAD_MIX = {
  channelsPerEvent: 2,
  channelMix: { EMAIL: 1 / 2, PUSH: 1 / 3, SMS: 1 / 6 },
} as const;

type IngestReport = {
  notifier: Measure;
  powertools: Measure;
  withDuplicates: { duplicateShare: number; notifier: Measure; powertools: Measure }[];
};
type LatencyRow = { concurrency: number; eventsPerSec: number; powertoolsEventsPerSec: number };
type LatencyDupRow = LatencyRow & { duplicateShare: number };

/** Per-record units at a duplicate share (0: the main run), for one side. */
function unitsAt(ingest: IngestReport, share: number, side: 'notifier' | 'powertools'): Measure {
  if (share === 0) return ingest[side];
  const row = ingest.withDuplicates.find((d) => d.duplicateShare === share);
  if (row === undefined) throw new Error(`no ingest run at ${share}`);
  return row[side];
}
/** Invocation seconds per record at the stack's concurrency under 10 ms per call, for one side. */
function secondsPerRecordAt(
  latency: LatencyRow[],
  withDups: LatencyDupRow[],
  share: number,
  side: 'notifier' | 'powertools',
): number {
  const row =
    share === 0
      ? latency.find((l) => l.concurrency === INGEST_CONCURRENCY)
      : withDups.find((l) => l.duplicateShare === share && l.concurrency === INGEST_CONCURRENCY);
  if (row === undefined) throw new Error(`no latency run at ${share}`);
  return 1 / (side === 'notifier' ? row.eventsPerSec : row.powertoolsEventsPerSec);
}

type DispatchReport = Awaited<ReturnType<typeof measureDispatch>>;
type QuotaReport = Awaited<ReturnType<typeof measureQuota>>;

/** What the capacity model needs, from this run: per new event and per duplicate, and per send. */
function measuredPerRecord(
  ingest: IngestReport,
  latency: LatencyRow[],
  withDups: LatencyDupRow[],
  dispatch: DispatchReport,
  quota: QuotaReport,
): Measured {
  const all = unitsAt(ingest, 1, 'notifier');
  return {
    ingestWruPerEvent: ingest.notifier.wruPerEvent,
    ingestRruPerEvent: ingest.notifier.rruPerEvent,
    ingestWruPerDuplicate: all.wruPerEvent,
    ingestRruPerDuplicate: all.rruPerEvent,
    ingestSecondsPerRecord: secondsPerRecordAt(latency, withDups, 0.1, 'notifier'),
    dispatchSecondsPerSend: dispatchSecondsPerSend(dispatch),
    pacerWritesPerSend: Math.max(...quota.pacing.map((p) => p.writesPerSend)),
  };
}
/** Invocation time per send: the measured send rate per invocation, inverted. */
const dispatchSecondsPerSend = (d: DispatchReport) => d.invocations / d.sendsPerSec;

/**
 * One million notifications on list prices, at 0%, 10% and 50% duplicates: ingest as measured for each side
 * (units per record on DynamoDB Local, invocation time per record under 10 ms per call at the stack's concurrency);
 * dispatch and the providers the same for both (the baseline only replaces ingest): its DynamoDB units from the
 * notification's size and the key design (capacity.ts), its time as measured, the pacer's writes as measured.
 */
function costPerMillion(
  ingest: IngestReport,
  latency: LatencyRow[],
  withDups: LatencyDupRow[],
  dispatch: DispatchReport,
  quota: QuotaReport,
) {
  const NOTIFICATIONS = 1_000_000;
  const events = NOTIFICATIONS / WORKLOAD_MIX.channelsPerEvent;
  const memoryGb = 0.5;
  const dispatchWru =
    NOTIFICATIONS *
    (writeUnits(SIZES.notificationBytes + 120) +
      writeUnits(SIZES.notificationBytes + 160) +
      3 +
      Math.max(...quota.pacing.map((p) => p.writesPerSend)));
  const dispatchGbSeconds = NOTIFICATIONS * memoryGb * dispatchSecondsPerSend(dispatch);
  const side = (share: number, which: 'notifier' | 'powertools') => {
    const records = events / (1 - share);
    const u = unitsAt(ingest, share, which);
    return costOf({
      wru: records * u.wruPerEvent + dispatchWru,
      rru: records * u.rruPerEvent,
      lambdaGbSeconds: records * memoryGb * secondsPerRecordAt(latency, withDups, share, which) + dispatchGbSeconds,
      lambdaRequests: records / 100 + NOTIFICATIONS / 100,
      emails: NOTIFICATIONS * WORKLOAD_MIX.channelMix.EMAIL,
      pushes: NOTIFICATIONS * WORKLOAD_MIX.channelMix.PUSH,
      sms: NOTIFICATIONS * WORKLOAD_MIX.channelMix.SMS,
    });
  };
  return {
    prices: US_EAST_1_PRICES,
    channelMix: WORKLOAD_MIX.channelMix,
    byDuplicateShare: [0, 0.1, 0.5].map((share) => ({
      duplicateShare: share,
      notifier: side(share, 'notifier'),
      powertools: side(share, 'powertools'),
    })),
  };
}

/** Pacing against a quota and the sweeper's drain rate (tools/bench/quota.ts); full size from 1,000 events up. */
async function measureQuota(_sharedEndpoint: string) {
  // A DynamoDB Local of their own: after the ingest phases the shared one holds over a gigabyte of items, and the
  // sweeper's queries ran 50 times slower there (5,000 items drained in 510 s instead of 10 s) — a measure of that
  // process, not of the sweeper.
  const own = await startDynamoDbLocal();
  const forget = onExit(() => own.stop());
  try {
    return await measureQuotaOn(own.endpoint);
  } finally {
    forget();
    await own.stop();
  }
}

async function measureQuotaOn(endpoint: string) {
  const full = EVENTS >= 1000;
  const pacing = [];
  for (const rate of [14, 100]) {
    pacing.push(await measurePacing(endpoint, { rate, environments: 4, seconds: full ? 10 : 2 }));
    log(`pacing at ${rate}/s done`);
  }
  const sweeper = await measureSweeperDrain(endpoint, { items: full ? 5_000 : 200 });
  log('sweeper drain done');
  return { pacing, sweeper };
}

/**
 * The baseline a team would otherwise write: Powertools Idempotency keyed on eventId (DynamoDB persistence) around a
 * function that validates the event and puts each notification item.
 */
function powertoolsBaseline(client: DynamoDBClient, table: string, idemTable: string) {
  const doc = DynamoDBDocumentClient.from(client);
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'event.eventId' });
  config.registerLambdaContext({ getRemainingTimeInMillis: () => 60_000 } as never);
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName: idemTable, awsSdkV3Client: client });
  const putNotifications = makeIdempotent(
    async (record: { event: ReturnType<typeof eventValue> }) => {
      const decoded = decodeRecordValue(Buffer.from(JSON.stringify(record.event)).toString('base64'), 65_536);
      if (!isTransfer(decoded)) return 'bad';
      const routed = route(decoded.event, decoded.contactRefusals);
      if (!routed.ok) return 'bad';
      for (const channel of routed.channels) {
        const address = contactFor(decoded.event.recipient, channel) as string;
        const item = buildNotification(decoded.event, channel, address, Date.now(), { retentionDays: 35 });
        await doc.send(new PutCommand({ TableName: table, Item: item }));
      }
      return 'ok';
    },
    { persistenceStore, config },
  );
  return async (batches: MSKEvent[], concurrency: number) => {
    const limit = pLimit(concurrency);
    for (const b of batches) {
      await Promise.all(
        Object.values(b.records)
          .flat()
          .map((r) =>
            limit(() =>
              putNotifications({ event: JSON.parse(Buffer.from(r.value, 'base64').toString('utf8')) }).catch(
                (error) => {
                  // A duplicate racing its original inside one batch: the baseline answers "in progress", which a
                  // real handler turns into a redelivery. Counted here as handled, in the baseline's favour.
                  if (!(error instanceof IdempotencyAlreadyInProgressError)) throw error;
                },
              ),
            ),
          ),
      );
    }
  };
}

async function measureDispatch() {
  const INVOCATIONS = 5;
  const PER_INVOCATION = 10;
  const BATCH = 100;
  const store = new MemoryNotificationStore();
  const keys: { pk: string; sk: string }[][] = [];
  for (let inv = 0; inv < INVOCATIONS; inv++) {
    const batch = [];
    for (let i = 0; i < BATCH; i++) {
      const d = decodeRecordValue(
        Buffer.from(JSON.stringify(eventValue(`d-${inv}-${i}`, i))).toString('base64'),
        65_536,
      );
      if (!isTransfer(d)) throw new Error('bench event invalid');
      const item: NotificationItem = buildNotification(d.event, 'EMAIL', 'x@example.com', Date.now(), {
        retentionDays: 35,
      });
      store.put(item);
      batch.push({ pk: item.pk, sk: item.sk });
    }
    keys.push(batch);
  }
  const sender = { send: () => new Promise<string>((r) => setTimeout(() => r(randomUUID()), 50)) };
  const deps: DispatchDeps = {
    store,
    sender,
    pacer: unpaced,
    breaker: neverHeld,
    now: Date.now,
    sleep: async () => undefined,
    policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' } as const,
    leaseMs: 120_000,
    sendTimeoutMs: 5_000,
    maxSendAttempts: 5,
    retryBaseMs: 1_000,
    retryMaxMs: 300_000,
    nearRetryMs: 2_000,
    pendingThresholdMs: DEFAULT_SWEEP_PLACEMENT.pendingThresholdMs,
    maxAgeMs: 86_400_000,
    brand: EXAMPLE_BRAND,
  };
  const budget = { finishBy: Date.now() + 600_000, maxWaitMs: 10_000 };
  const t = performance.now();
  await Promise.all(
    keys.map(async (batch) => {
      const limit = pLimit(PER_INVOCATION);
      await Promise.all(
        batch.map((k) => limit(() => dispatchNotification({ key: k, retryAt: undefined }, deps, budget))),
      );
    }),
  );
  const seconds = (performance.now() - t) / 1000;
  const sent = [...store.items.values()].filter((n) => n.status === 'SENT').length;
  return {
    batchSize: BATCH,
    providerLatencyMs: 50,
    invocations: INVOCATIONS,
    concurrencyPerInvocation: PER_INVOCATION,
    sends: sent,
    sendsPerSec: Math.round(sent / seconds),
  };
}

/** The end-to-end latency through the local pipeline (tools/bench/e2e.ts), mixed or under a backlog. */
function measureE2e() {
  const quick = args.quick;
  const backlog = args.critical ? (quick && !args.backlogGiven ? 300 : args.backlog) : 0;
  return measureEndToEnd(
    {
      events: args.eventsGiven ?? (quick ? 60 : 300),
      ratePerSecond: args.rate,
      backlog,
      critical: args.criticalCount ?? (quick ? 5 : 100),
      sesRate: 14,
      sweepEverySeconds: args.sweepEvery,
    },
    log,
  );
}

/**
 * `npm start` itself at two sizes on disk, and the smaller in memory: the rate a large file runs at, and whether
 * anything grows with the file (tools/bench/pipeline.ts).
 */
async function measurePipeline(): Promise<PipelineRun[]> {
  const [small, large] = args.quick ? [200, 600] : [2000, 6000];
  const dir = mkdtempSync(join(tmpdir(), 'notifier-bench-pipeline-'));
  const values = (n: number) => Array.from({ length: n }, (_, i) => eventValue(`pipe-${n}-${i}`, i));
  const runs: PipelineRun[] = [];
  try {
    for (const [n, storage] of [
      [small, 'memory'],
      [small, 'disk'],
      [large, 'disk'],
    ] as const) {
      runs.push(await runPipeline(REPO, dir, values(n), storage));
      log(`pipeline ${n} events (${storage}) done`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return runs;
}

async function measureBundles(samples: number) {
  const out = mkdtempSync(join(tmpdir(), 'notifier-bundles-'));
  const result = [];
  for (const name of ['ingest', 'dispatch', 'sweeper']) {
    const outfile = join(out, `${name}.mjs`);
    // The same options as the house NotifierFunction construct.
    await build({
      entryPoints: [join(REPO, 'functions', name, 'index.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      // The stack's bundling (lib/bundling.ts): the bench measures what is deployed.
      format: 'esm',
      target: BUNDLE.target,
      minify: BUNDLE.minify,
      sourcemap: BUNDLE.sourceMap ? 'external' : false,
      mainFields: [...BUNDLE.mainFields],
      banner: { js: BUNDLE.banner },
      logLevel: 'silent',
    });
    const times = [];
    for (let i = 0; i < samples; i++) {
      const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(outfile).href)}); process.stdout.write(String(performance.now() - t));`;
      const ms = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          ...process.env,
          TABLE_NAME: 'bench',
          SENDER_EMAIL: 'bench@example.com',
          BRAND: brandEnvValue(EXAMPLE_BRAND),
          AWS_REGION: 'us-east-1',
          // As in Lambda: the Tracer and the X-Ray SDK are loaded (functions/commons/powertools.ts), tracing on.
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
          POWERTOOLS_TRACE_ENABLED: 'true',
        },
        encoding: 'utf8',
      });
      times.push(Number(ms));
    }
    result.push({ name, bytes: statSync(outfile).size, initMs: round2(median(times)) });
  }
  return result;
}

function table(report: Awaited<ReturnType<typeof measureAll>>): string {
  const i = report.ingest;
  const row = (name: string, m: Measure | undefined) =>
    m ? `| ${name} | ${m.eventsPerSec} | ${m.requestsPerEvent} | ${m.wruPerEvent} | ${m.rruPerEvent} |` : '';
  const cost = report.costPerMillionNotifications;
  const cap = report.capacity;
  return [
    `notifier benchmark — ${report.events} events × ${report.rounds} rounds${report.quick ? ' (--quick)' : ''}, Node ${report.machine.node}, ${report.machine.cpus} cores`,
    '',
    'Ingest on DynamoDB Local (median of rounds; units as DynamoDB bills them, tools/bench/billing.ts)',
    '| path | events/s | DynamoDB requests/event | WRU/event | RRU/event |',
    '|---|---|---|---|---|',
    row(`notifier (concurrency ${INGEST_CONCURRENCY})`, i.notifier),
    row('notifier (concurrency 1)', i.sequential),
    row('Powertools Idempotency baseline', i.powertools),
    `ratio notifier / Powertools: ${i.ratioVsPowertools}×`,
    '',
    '| duplicates | notifier events/s | req/event | WRU/event | RRU/event | Powertools events/s | req/event | WRU/event | RRU/event | ratio |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...[{ duplicateShare: 0, ...i }, ...i.withDuplicates].map(
      (d) =>
        `| ${d.duplicateShare * 100}% | ${d.notifier.eventsPerSec} | ${d.notifier.requestsPerEvent} | ${d.notifier.wruPerEvent} | ${d.notifier.rruPerEvent} | ${d.powertools.eventsPerSec} | ${d.powertools.requestsPerEvent} | ${d.powertools.wruPerEvent} | ${d.powertools.rruPerEvent} | ${d.ratioVsPowertools}× |`,
    ),
    '',
    `Ingest with ${LATENCY_MS} ms per DynamoDB call (the network in AWS)`,
    '| duplicates | concurrency | notifier events/s | req/event | Powertools events/s | req/event | ratio |',
    '|---|---|---|---|---|---|---|',
    ...[...report.latency.map((l) => ({ duplicateShare: 0, ...l })), ...report.latencyWithDuplicates].map(
      (l) =>
        `| ${l.duplicateShare * 100}% | ${l.concurrency} | ${l.eventsPerSec} | ${l.requestsPerEvent} | ${l.powertoolsEventsPerSec} | ${l.powertoolsRequestsPerEvent} | ${l.ratioVsPowertools}× |`,
    ),
    '',
    `One million notifications on list prices (${cost.prices.region}, ${cost.prices.asOf}; USD; channel mix EMAIL ½, PUSH ⅓, SMS ⅙)`,
    '| duplicates | notifier DynamoDB | Lambda | own total | Powertools DynamoDB | Lambda | own total | SES + SNS (both) |',
    '|---|---|---|---|---|---|---|---|',
    ...cost.byDuplicateShare.map(
      (c) =>
        `| ${c.duplicateShare * 100}% | ${c.notifier.dynamodb} | ${c.notifier.lambda} | ${c.notifier.notifierOwn} | ${c.powertools.dynamodb} | ${c.powertools.lambda} | ${c.powertools.notifierOwn} | ${round2(c.notifier.ses + c.notifier.sns)} |`,
    ),
    '',
    `Capacity at ${cap.notificationsPerSec} notifications/s (${cap.duplicateShare * 100}% duplicates): ${cap.sweepShards} sweep shards, hottest index key ${cap.hottestKeyWritesPerSec} writes/s (${cap.hottestKeyWritesPerSecAllOneChannel} if all on one channel), table ${cap.tableWcuPerSec} WRU/s + index ${cap.indexWcuPerSec} WRU/s, ${cap.tableRcuPerSec} RRU/s, ${cap.mskPartitions} MSK partitions, Lambda ${cap.lambdaConcurrency.ingest} + ${cap.lambdaConcurrency.dispatch} + 1, first limit: ${cap.firstLimit}`,
    '',
    `CPU per event (decode + validate + route + build): ${report.cpuMicrosPerEvent} µs`,
    `Dispatch: ${report.dispatch.sendsPerSec} sends/s (${report.dispatch.invocations} invocations × ${report.dispatch.concurrencyPerInvocation} concurrent sends, batch ${report.dispatch.batchSize}, provider ${report.dispatch.providerLatencyMs} ms)`,
    '',
    '| bundle | bytes | init ms (median) |',
    '|---|---|---|',
    ...report.bundles.map((b) => `| ${b.name} | ${b.bytes} | ${b.initMs} |`),
    '',
    'Pacing against a quota (4 environments × 10 senders, shared token bucket on DynamoDB Local)',
    '| quota/s | achieved/s | of quota | max in any 1 s window | writes/send | WCU/send |',
    '|---|---|---|---|---|---|',
    ...report.quota.pacing.map(
      (p) =>
        `| ${p.quotaPerSecond} | ${p.achievedPerSecond} | ${p.ofQuota} | ${p.maxInAnyWindow} | ${p.writesPerSend} | ${p.wcuPerSend} |`,
    ),
    '',
    `Sweeper drain: ${report.quota.sweeper.items} due items in ${report.quota.sweeper.seconds} s (${report.quota.sweeper.itemsPerSecond} items/s, ${report.quota.sweeper.wcuPerItem} WCU/item); 100,000 ≈ ${report.quota.sweeper.extrapolated100k.minutesOfSweeping} min of sweeping, ${report.quota.sweeper.extrapolated100k.scheduledRuns} scheduled runs`,
    '',
  ].join('\n');
}

function pipelineTable(runs: PipelineRun[]): string {
  return [
    '| events | DynamoDB Local | seconds | events/s | sends/s | peak RSS node | peak RSS DynamoDB Local | data on disk |',
    '|---|---|---|---|---|---|---|---|',
    ...runs.map(
      (r) =>
        `| ${r.events} | ${r.storage} | ${r.seconds} | ${r.eventsPerSec} | ${r.sendsPerSec} | ${r.peakRssMb.node} MB | ${r.peakRssMb.dynamodbLocal} MB | ${r.peakDataMb} MB |`,
    ),
    '',
  ].join('\n');
}

runCommand('bench', async () => {
  args = parseOptions();
  EVENTS = args.quick ? Math.min(args.events, 200) : args.events;
  ROUNDS = args.quick ? 1 : args.rounds;
  const report = await main();
  if ('pipeline' in report && report.pipeline !== undefined && !args.json)
    process.stdout.write(pipelineTable(report.pipeline));
  else if ('endToEnd' in report && report.endToEnd !== undefined && !args.json)
    process.stdout.write(endToEndTable(report.endToEnd));
  else if (!('ingest' in report)) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : table(report));
  return EXIT.OK;
});
