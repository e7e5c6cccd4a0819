/**
 * Ingest on DynamoDB Local and under latency, notifier's batch path beside the Powertools baseline: alternating
 * rounds at 0% and at 10%, 50% and 100% duplicates, then with 10 ms per DynamoDB call at concurrency 1, 4, 16 and 64.
 * notifier's path is its ingest use case (functions/ingest/ingest-batch.ts) with its own store; what each record costs
 * is counted on the client (measure.ts).
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { type BatchDeps, ingestBatch as ingestOrReport } from '../../functions/ingest/ingest-batch.ts';
import { createTable, localClient } from '../local/dynamodb-local.ts';
import { latencyClient } from './latency-dynamodb.ts';
import { instrument, type Measure, measure, summarize, type Usage } from './measure.ts';
import type { BenchArgs } from './options.ts';
import { powertoolsBaseline } from './powertools-baseline.ts';
import { INGEST_CONCURRENCY, log, round2, workload } from './workload.ts';

export const LATENCY_MS = 10;
const CONCURRENCIES = [1, 4, 16, 64];
const DUPLICATE_SHARES = [0.1, 0.5, 1];

type Work = ReturnType<typeof workload>;
type Baseline = ReturnType<typeof powertoolsBaseline>;

/** A batch that failed, or a workload record quarantined, would make every figure wrong: stop the run instead. */
export async function ingestBatch(event: MSKEvent, deps: BatchDeps): Promise<void> {
  const summary = await ingestOrReport(event, deps);
  if (summary.failure !== undefined) throw summary.failure;
  const bad = summary.results.find((r) => r.kind === 'quarantined' || r.kind === 'conflict');
  if (bad !== undefined) throw new Error(`bench workload record not accepted: ${JSON.stringify(bad)}`);
}

export const ingestDeps = (concurrency: number) => ({
  limit: pLimit(concurrency),
  now: Date.now,
  retentionDays: 35,
  maxEventBytes: 65_536,
  // The workload's events carry a fixed date: the age rule is not what this measures.
  maxEventAgeSeconds: 0,
  transactionAttempts: 4,
});

/** Seeds the events the duplicates repeat (not measured), then measures the workload's batches. */
async function measureNotifier(store: DynamoInboxStore, usage: Usage, work: Work, concurrency = INGEST_CONCURRENCY) {
  for (const b of work.seed) await ingestBatch(b, { ...ingestDeps(64), store });
  return measure(usage, work.batches, async () => {
    for (const b of work.batches) await ingestBatch(b, { ...ingestDeps(concurrency), store });
  });
}
async function measureBaseline(baseline: Baseline, usage: Usage, work: Work, concurrency = INGEST_CONCURRENCY) {
  await baseline(work.seed, 64);
  return measure(usage, work.batches, () => baseline(work.batches, concurrency));
}

/** The two sides on DynamoDB Local, in alternating rounds; notifier at concurrency 1 too when asked. */
async function sideBySide(
  sides: { store: DynamoInboxStore; usage: Usage; baseline: Baseline; baseUsage: Usage },
  args: BenchArgs,
  dupShare: number,
  withSequential: boolean,
) {
  const results = { notifier: [] as Measure[], sequential: [] as Measure[], powertools: [] as Measure[] };
  for (let r = 0; r < args.rounds; r++) {
    const tag = `${dupShare}-${r}-${randomUUID().slice(0, 4)}`;
    // Alternate the order each round so neither side always runs on a warmer DynamoDB Local.
    const order = r % 2 === 0 ? ['notifier', 'powertools'] : ['powertools', 'notifier'];
    for (const which of order) {
      if (which === 'notifier') {
        results.notifier.push(
          await measureNotifier(sides.store, sides.usage, workload(`n-${tag}`, args.events, dupShare)),
        );
      } else {
        results.powertools.push(
          await measureBaseline(sides.baseline, sides.baseUsage, workload(`p-${tag}`, args.events, dupShare)),
        );
      }
    }
    if (withSequential) {
      results.sequential.push(
        await measureNotifier(sides.store, sides.usage, workload(`s-${tag}`, args.events, dupShare), 1),
      );
    }
    log(`ingest dup=${dupShare * 100}% round ${r + 1}/${args.rounds}`);
  }
  const notifier = summarize(results.notifier);
  const powertools = summarize(results.powertools);
  return {
    notifier,
    sequential: withSequential ? summarize(results.sequential) : undefined,
    powertools,
    ratioVsPowertools: round2(notifier.eventsPerSec / powertools.eventsPerSec),
  };
}

/** Ingest on DynamoDB Local: both sides at 0% duplicates (and notifier alone at concurrency 1), then with duplicates. */
export async function measureIngest(endpoint: string, args: BenchArgs) {
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
  raw.destroy();
  const notifierClient = localClient(endpoint);
  const baseClient = localClient(endpoint);
  const sides = {
    usage: instrument(notifierClient),
    store: new DynamoInboxStore(DynamoDBDocumentClient.from(notifierClient), table),
    baseUsage: instrument(baseClient),
    baseline: powertoolsBaseline(baseClient, table, idemTable),
  };
  const main = await sideBySide(sides, args, 0, true);
  const withDuplicates = [];
  for (const share of DUPLICATE_SHARES) {
    const { sequential: _, ...r } = await sideBySide(sides, args, share, false);
    withDuplicates.push({ duplicateShare: share, ...r });
  }
  return { ...main, withDuplicates };
}

/** One run of both sides against a DynamoDB answering after 10 ms per call (latency-dynamodb.ts). */
export async function underLatency(args: BenchArgs, dupShare: number, concurrency: number) {
  const events = args.quick ? Math.min(args.events, 100) : Math.min(args.events, 500);
  const tag = `l-${dupShare}-${concurrency}`;
  const nClient = latencyClient(LATENCY_MS);
  const n = await measureNotifier(
    new DynamoInboxStore(DynamoDBDocumentClient.from(nClient), 'slow'),
    instrument(nClient),
    workload(`n-${tag}`, events, dupShare),
    concurrency,
  );
  const pClient = latencyClient(LATENCY_MS);
  const p = await measureBaseline(
    powertoolsBaseline(pClient, 'slow', 'slow-idem'),
    instrument(pClient),
    workload(`p-${tag}`, events, dupShare),
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
}

/** Ingest with 10 ms per DynamoDB call: each concurrency without duplicates, then with each share. */
export async function measureLatency(args: BenchArgs) {
  const latency = [];
  for (const concurrency of CONCURRENCIES) {
    const { duplicateShare: _, ...l } = await underLatency(args, 0, concurrency);
    latency.push(l);
  }
  const latencyWithDuplicates = [];
  for (const share of DUPLICATE_SHARES) {
    for (const concurrency of CONCURRENCIES) latencyWithDuplicates.push(await underLatency(args, share, concurrency));
  }
  log('latency done');
  return { latency, latencyWithDuplicates };
}
