/**
 * `npm run bench`: figures measured side by side in one run, so a noisy machine still gives fair ratios.
 *
 *   npm run bench -- [--events N] [--rounds R] [--json]
 *
 * - ingest on DynamoDB Local: notifier's batch path (a), the same at concurrency 1 (b), and the Powertools
 *   Idempotency baseline (c), in alternating rounds; events/s (median), DynamoDB requests and WCU per event; again with
 *   10% and 50% duplicates.
 * - ingest against a client with 10 ms injected per call, at concurrency 1/4/16/64.
 * - CPU per event (decode + validate + route + build the transaction) with an instant client.
 * - dispatch sends/s at batch 100 against providers with 50 ms latency, at the stack's concurrency.
 * - each function's bundle size and its init time in a fresh Node process (median of 10).
 */
import './env.ts';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
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
import { neverHeld } from '../functions/dispatch/channel-breaker.ts';
import { type DispatchDeps, dispatchNotification } from '../functions/dispatch/dispatch-notification.ts';
import { unpaced } from '../functions/dispatch/pacer.ts';
import { brandEnvValue } from '../functions/domain/brand.ts';
import { decodeRecordValue } from '../functions/domain/event.ts';
import { buildNotification, type NotificationItem } from '../functions/domain/notification.ts';
import { contactFor, route } from '../functions/domain/routing.ts';
import { DynamoInboxStore } from '../functions/ingest/inbox-store.ts';
import { type BatchDeps, ingestBatch as ingestOrReport } from '../functions/ingest/ingest-batch.ts';
import { BUNDLE } from '../lib/bundling.ts';
import { EXIT, intOption, onExit, parseCommandLine, runCommand } from '../local/cli.ts';
import { createTable, localClient, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';
import { mskEvent } from '../local/msk.ts';
import { MemoryNotificationStore } from './memory-store.ts';
import { measurePacing, measureSweeperDrain } from './quota.ts';

/** A batch that failed, or a workload record quarantined, would make every figure wrong: stop the run instead. */
async function ingestBatch(event: MSKEvent, deps: BatchDeps): Promise<void> {
  const summary = await ingestOrReport(event, deps);
  if (summary.failure !== undefined) throw summary.failure;
  const bad = summary.results.find((r) => r.kind === 'quarantined' || r.kind === 'conflict');
  if (bad !== undefined) throw new Error(`bench workload record not accepted: ${JSON.stringify(bad)}`);
}

const USAGE = `
Usage: npm run bench -- [--events N] [--rounds R] [--json] [--quota]

Measures ingest, dispatch, CPU, bundle size and init time side by side on DynamoDB Local (README "Performance").

  --events N   events per ingest measurement (default 1000)
  --rounds R   alternating rounds per comparison; medians are reported (default 3)
  --json       standard output is exactly one JSON document
  --quota      only the pacing and sweeper-drain figures (bench/quota.ts)
  -h, --help   this text

Exit codes: 0 measured; 1 a measurement failed; 2 usage (unknown flag, bad value); 130/143/129 interrupted.
`;
function parseOptions() {
  const { values } = parseCommandLine(
    {
      usage: USAGE,
      options: {
        events: { type: 'string', default: '1000' },
        rounds: { type: 'string', default: '3' },
        json: { type: 'boolean', default: false },
        quota: { type: 'boolean', default: false },
      },
    },
    process.argv.slice(2),
  );
  return {
    json: values.json === true,
    quota: values.quota === true,
    events: intOption('events', values.events, 1) ?? 1000,
    rounds: intOption('rounds', values.rounds, 1) ?? 3,
  };
}
// Set by the command line before anything is measured (runCommand below).
let args: ReturnType<typeof parseOptions>;
let EVENTS: number;
let ROUNDS: number;
const INGEST_CONCURRENCY = 16; // the stack's INGEST_CONCURRENCY
const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
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
/** n records, `dupShare` of which repeat an earlier event of the same list (a redelivery or a resend). */
function workload(prefix: string, n: number, dupShare: number): MSKEvent[] {
  const values: object[] = [];
  const unique = Math.max(1, Math.round(n * (1 - dupShare)));
  for (let i = 0; i < n; i++) values.push(i < unique ? eventValue(`${prefix}-${i}`, i) : values[(i * 7919) % unique]!);
  const batches: MSKEvent[] = [];
  for (let i = 0; i < n; i += 100) {
    batches.push(
      mskEvent(values.slice(i, i + 100).map((value, j) => ({ topic: 'bench', partition: 0, offset: i + j, value }))),
    );
  }
  return batches;
}

// ── DynamoDB accounting: a middleware counts requests and sums consumed write capacity ──
interface Usage {
  requests: number;
  wcu: number;
}
function instrument(client: DynamoDBClient): Usage {
  const usage: Usage = { requests: 0, wcu: 0 };
  client.middlewareStack.add(
    (next) => async (a) => {
      usage.requests++;
      (a.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity ??= 'TOTAL';
      const out = await next(a);
      const cc = (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      for (const c of [cc].flat() as { CapacityUnits?: number; WriteCapacityUnits?: number }[]) {
        usage.wcu += c?.WriteCapacityUnits ?? c?.CapacityUnits ?? 0;
      }
      return out;
    },
    { step: 'initialize', name: 'benchUsage' },
  );
  return usage;
}

interface Measure {
  eventsPerSec: number;
  requestsPerEvent: number;
  wcuPerEvent: number;
}

async function main() {
  const db = await startDynamoDbLocal();
  const forget = onExit(() => db.stop());
  try {
    if (args.quota) return { quota: await measureQuota(db.endpoint) };
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
  const ingestDeps = (concurrency: number) => ({
    store,
    limit: pLimit(concurrency),
    now: Date.now,
    retentionDays: 35,
    maxEventBytes: 65_536,
    // The workload's events carry a fixed date: the age rule is not what this measures.
    maxEventAgeSeconds: 0,
    transactionAttempts: 4,
  });

  const baseClient = localClient(endpoint);
  const baseUsage = instrument(baseClient);
  const baseline = powertoolsBaseline(baseClient, table, idemTable);

  const measure = async (usage: Usage, work: () => Promise<unknown>, events: number): Promise<Measure> => {
    const before = { ...usage };
    const t = performance.now();
    await work();
    const seconds = (performance.now() - t) / 1000;
    return {
      eventsPerSec: events / seconds,
      requestsPerEvent: (usage.requests - before.requests) / events,
      wcuPerEvent: (usage.wcu - before.wcu) / events,
    };
  };
  const summarize = (ms: Measure[]): Measure => ({
    eventsPerSec: Math.round(median(ms.map((m) => m.eventsPerSec))),
    requestsPerEvent: round2(median(ms.map((m) => m.requestsPerEvent))),
    wcuPerEvent: round2(median(ms.map((m) => m.wcuPerEvent))),
  });

  const runIngest = async (dupShare: number, withSequential: boolean) => {
    const results = { notifier: [] as Measure[], sequential: [] as Measure[], powertools: [] as Measure[] };
    for (let r = 0; r < ROUNDS; r++) {
      const tag = `${dupShare}-${r}-${randomUUID().slice(0, 4)}`;
      // Alternate the order each round so neither side always runs on a warmer DynamoDB Local.
      const order = r % 2 === 0 ? ['notifier', 'powertools'] : ['powertools', 'notifier'];
      for (const which of order) {
        if (which === 'notifier') {
          const batches = workload(`n-${tag}`, EVENTS, dupShare);
          results.notifier.push(
            await measure(
              notifierUsage,
              async () => {
                for (const b of batches) await ingestBatch(b, ingestDeps(INGEST_CONCURRENCY));
              },
              EVENTS,
            ),
          );
        } else {
          const batches = workload(`p-${tag}`, EVENTS, dupShare);
          results.powertools.push(await measure(baseUsage, () => baseline(batches, INGEST_CONCURRENCY), EVENTS));
        }
      }
      if (withSequential) {
        const batches = workload(`s-${tag}`, EVENTS, dupShare);
        results.sequential.push(
          await measure(
            notifierUsage,
            async () => {
              for (const b of batches) await ingestBatch(b, ingestDeps(1));
            },
            EVENTS,
          ),
        );
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
  for (const share of [0.1, 0.5]) {
    const r = await runIngest(share, false);
    withDuplicates.push({
      duplicateShare: share,
      notifier: r.notifier,
      powertools: r.powertools,
      ratioVsPowertools: r.ratioVsPowertools,
    });
  }

  // ── Concurrency under latency: 10 ms per DynamoDB call (real SDK clients answered by a middleware, no network) ──
  const latency = [];
  const latencyEvents = Math.min(EVENTS, 500);
  for (const concurrency of [1, 4, 16, 64]) {
    const slowStore = new DynamoInboxStore(DynamoDBDocumentClient.from(latencyClient(10)), 'slow');
    const batches = workload(`l-${concurrency}`, latencyEvents, 0);
    let t = performance.now();
    for (const b of batches) await ingestBatch(b, { ...ingestDeps(concurrency), store: slowStore });
    const notifierRate = latencyEvents / ((performance.now() - t) / 1000);
    const slowBaseline = powertoolsBaseline(latencyClient(10), 'slow', `slow-idem-${concurrency}`);
    t = performance.now();
    await slowBaseline(workload(`lp-${concurrency}`, latencyEvents, 0), concurrency);
    const baselineRate = latencyEvents / ((performance.now() - t) / 1000);
    latency.push({
      concurrency,
      eventsPerSec: Math.round(notifierRate),
      powertoolsEventsPerSec: Math.round(baselineRate),
      ratioVsPowertools: round2(notifierRate / baselineRate),
    });
  }
  log('latency done');

  // ── CPU per event: an instant client ──
  const instant = new DynamoInboxStore({ send: async () => ({}) } as unknown as DynamoDBDocumentClient, 'instant');
  const cpuBatches = workload('cpu', Math.max(EVENTS, 2000), 0);
  for (const b of cpuBatches.slice(0, 5)) await ingestBatch(b, { ...ingestDeps(16), store: instant }); // warm up
  const tCpu = performance.now();
  for (const b of cpuBatches) await ingestBatch(b, { ...ingestDeps(16), store: instant });
  const cpuMicrosPerEvent = round2(((performance.now() - tCpu) * 1000) / (cpuBatches.length * 100));
  log('cpu done');

  // ── Dispatch: batch 100, providers at 50 ms, the stack's concurrency (5 invocations × 10 sends each) ──
  const dispatch = await measureDispatch();
  log('dispatch done');

  const bundles = await measureBundles(Math.min(10, Math.max(3, ROUNDS * 3)));
  log('bundles done');

  const quota = await measureQuota(endpoint);

  raw.destroy();
  return {
    machine: { node: process.version, cpus: (await import('node:os')).cpus().length },
    events: EVENTS,
    rounds: ROUNDS,
    ingest: { ...main, withDuplicates },
    latency,
    cpuMicrosPerEvent,
    dispatch,
    bundles,
    quota,
  };
}

/** Pacing against a quota and the sweeper's drain rate (bench/quota.ts); full size from 1,000 events up. */
async function measureQuota(endpoint: string) {
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
      if (!decoded.ok) return 'bad';
      const routed = route(decoded.event);
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

/** A real DynamoDB client whose every call takes `ms` and succeeds, answered in its middleware: no network. */
function latencyClient(ms: number): DynamoDBClient {
  const client = localClient('http://127.0.0.1:9');
  client.middlewareStack.add(
    () => async () => {
      await new Promise((r) => setTimeout(r, ms));
      return { output: { $metadata: {} }, response: {} };
    },
    { step: 'initialize', name: 'injectedLatency', priority: 'high' },
  );
  return client;
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
      if (!d.ok) throw new Error('bench event invalid');
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
    stuckAfterMs: 900_000,
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

async function measureBundles(samples: number) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const out = mkdtempSync(join(tmpdir(), 'notifier-bundles-'));
  const result = [];
  for (const name of ['ingest', 'dispatch', 'sweeper']) {
    const outfile = join(out, `${name}.mjs`);
    // The same options as the house NotifierFunction construct.
    await build({
      entryPoints: [join(root, 'functions', name, 'index.ts')],
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
          POWERTOOLS_TRACE_ENABLED: 'false',
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
    m ? `| ${name} | ${m.eventsPerSec} | ${m.requestsPerEvent} | ${m.wcuPerEvent} |` : '';
  return [
    `notifier benchmark — ${report.events} events × ${report.rounds} rounds, Node ${report.machine.node}, ${report.machine.cpus} cores`,
    '',
    'Ingest on DynamoDB Local (median of rounds)',
    '| path | events/s | DynamoDB requests/event | WCU/event |',
    '|---|---|---|---|',
    row(`notifier (concurrency ${INGEST_CONCURRENCY})`, i.notifier),
    row('notifier (concurrency 1)', i.sequential),
    row('Powertools Idempotency baseline', i.powertools),
    `ratio notifier / Powertools: ${i.ratioVsPowertools}×`,
    '',
    '| duplicates | notifier events/s | req/event | Powertools events/s | req/event | ratio |',
    '|---|---|---|---|---|---|',
    ...i.withDuplicates.map(
      (d) =>
        `| ${d.duplicateShare * 100}% | ${d.notifier.eventsPerSec} | ${d.notifier.requestsPerEvent} | ${d.powertools.eventsPerSec} | ${d.powertools.requestsPerEvent} | ${d.ratioVsPowertools}× |`,
    ),
    '',
    'Ingest with 10 ms per DynamoDB call (the network in AWS)',
    '| concurrency | notifier events/s | Powertools events/s | ratio |',
    '|---|---|---|---|',
    ...report.latency.map(
      (l) => `| ${l.concurrency} | ${l.eventsPerSec} | ${l.powertoolsEventsPerSec} | ${l.ratioVsPowertools}× |`,
    ),
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

runCommand('bench', async () => {
  args = parseOptions();
  EVENTS = args.events;
  ROUNDS = args.rounds;
  const report = await main();
  if (!('ingest' in report)) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : table(report));
  return EXIT.OK;
});
