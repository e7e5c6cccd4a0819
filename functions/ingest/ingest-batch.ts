/**
 * One MSK batch: every record of every topic-partition through the ingest use case, with bounded concurrency.
 *
 * The lowest offset is the original: every record is admitted first (pure), then records that share an eventId run
 * one after another in (partition, offset) order, so of two different payloads under one eventId the earlier record is
 * written and the later one is the conflict — also when the same batch is delivered twice at once. Different eventIds
 * run concurrently under the `limit` bound.
 *
 * Decides only: the handler logs and counts what it decided (report.ts).
 *
 * The figures reconcile per invocation: received = accepted + duplicates + conflicts + quarantined + requarantined +
 * failed, where `failed` counts the records that met an infrastructure failure (or waited behind one of their eventId)
 * in an invocation that then throws for the event source mapping to redeliver (`failure`: the handler throws it).
 */
import type { MSKEvent } from 'aws-lambda';
import type { LimitFunction } from 'p-limit';
import { admittedEventId } from '../domain/admission.ts';
import { type IngestFigures, tally } from './figures.ts';
import {
  type AdmittedRecord,
  admit,
  applyAdmission,
  type IngestDeps,
  type IngestInput,
  type IngestResult,
} from './ingest-record.ts';

export { FIGURE_METRICS, type IngestFigures, reconciles, tally } from './figures.ts';

export interface BatchDeps extends IngestDeps {
  readonly limit: LimitFunction;
}

export interface BatchSummary {
  readonly records: number;
  readonly results: IngestResult[];
  readonly figures: IngestFigures;
  /** Set when records met an infrastructure failure: the handler throws it, and the batch is redelivered. */
  readonly failure?: unknown;
}

interface ChainOutcome {
  /** Each result with the index of its record in the batch. */
  results: [number, IngestResult][];
  /** Records of the chain not ingested: the one whose processing threw, and those after it. */
  failed: number;
  error?: unknown;
}

export async function ingestBatch(event: MSKEvent, deps: BatchDeps): Promise<BatchSummary> {
  const inputs: IngestInput[] = Object.values(event.records ?? {})
    .flat()
    .map((record) => ({
      source: { topic: record.topic, partition: record.partition, offset: record.offset },
      value: record.value,
    }));
  const chains = chainsByEventId(inputs.map((input, index) => ({ index, ...admit(input, deps) })));
  const outcomes = await Promise.all(chains.map((chain) => deps.limit(() => runChain(chain, deps))));

  // In the batch's own order, whatever order they ran in.
  const results = outcomes
    .flatMap((o) => o.results)
    .sort(([a], [b]) => a - b)
    .map(([, result]) => result);
  const failed = outcomes.reduce((n, o) => n + o.failed, 0);
  const figures = tally(inputs.length, results, failed);
  if (failed === 0) return { records: inputs.length, results, figures };
  return { records: inputs.length, results, figures, failure: outcomes.find((o) => o.failed > 0)?.error };
}

type Indexed = AdmittedRecord & { readonly index: number };

/**
 * Records sharing an eventId form one chain, in (topic, partition, offset) order; a record without one is its own
 * chain. Within a partition that is Kafka's own order; across partitions there is none, so the lower partition goes
 * first, which at least makes every delivery of the batch choose the same original.
 */
function chainsByEventId(records: Indexed[]): Indexed[][] {
  const byId = new Map<string, Indexed[]>();
  const alone: Indexed[][] = [];
  for (const record of records) {
    const eventId = admittedEventId(record.admission);
    if (eventId === undefined) {
      alone.push([record]);
      continue;
    }
    const chain = byId.get(eventId);
    if (chain === undefined) byId.set(eventId, [record]);
    else chain.push(record);
  }
  const order = ({ input: { source: x } }: Indexed, { input: { source: y } }: Indexed) =>
    (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : 0) || x.partition - y.partition || x.offset - y.offset;
  return [...[...byId.values()].map((chain) => chain.sort(order)), ...alone];
}

async function runChain(chain: Indexed[], deps: IngestDeps): Promise<ChainOutcome> {
  const results: [number, IngestResult][] = [];
  for (const [i, record] of chain.entries()) {
    try {
      results.push([record.index, await applyAdmission(record, deps)]);
    } catch (error) {
      // A later record of this eventId must not run before this one is settled: it waits for the redelivery.
      return { results, failed: chain.length - i, error };
    }
  }
  return { results, failed: 0 };
}
