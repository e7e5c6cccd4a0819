/**
 * One MSK batch: every record of every topic-partition through the ingest use case, with bounded concurrency.
 *
 * The lowest offset is the original: every record is admitted first (pure), then records that share an eventId run
 * one after another in (partition, offset) order, so of two different payloads under one eventId the earlier record is
 * written and the later one is the conflict — also when the same batch is delivered twice at once.
 *
 * One customer's records are applied in their order too: records that share an eventId *or a customer* (the userId,
 * known once admitted) form one chain, so a PreferencesUpdated published before a transfer of the same customer is
 * settled — its opt-out in force — before the transfer's notifications are written and can reach dispatch. Different
 * customers' chains run concurrently under the `limit` bound.
 *
 * Before any transaction, one strongly consistent look-up reads the inbox items of all the batch's eventIds
 * (BatchGetItem, 100 keys a request): an event found with the same payloadHash is a duplicate with no write at all, one
 * found with another hash is a conflict; only unseen events go to their transaction, which stays the guard — a race
 * between the read and the write ends as it always did, in a cancelled transaction. A batch redelivered whole costs
 * about one request per 100 records instead of one per record. The look-up is an optimisation: if it fails, every event
 * goes to its transaction (`lookupFailure` says so).
 *
 * Decides only: the handler logs and counts what it decided (report.ts).
 *
 * The figures reconcile per invocation: received = accepted + duplicates + conflicts + quarantined + requarantined +
 * failed, where `failed` counts the records that met an infrastructure failure (or waited behind one of their chain:
 * the same eventId or the same customer) in an invocation that then throws for the event source mapping to redeliver
 * (`failure`: the handler throws it).
 */

import type { MSKEvent } from 'aws-lambda';
import type { LimitFunction } from 'p-limit';
import type { IngestFigures } from '../contracts/ingest-figures.ts';
import { admittedEventId } from '../domain/admission.ts';
import { tally } from './figures.ts';
import type { KnownEvents, KnownInbox } from './inbox-port.ts';
import {
  type AdmittedRecord,
  admitLoading,
  applyAdmission,
  type IngestDeps,
  type IngestInput,
  type IngestResult,
} from './ingest-record.ts';
import { producerOf, replicatedFromOf } from './producer-trace.ts';
import { readWireRecords, type Schemas, schemasOnFirstUse } from './wire-records.ts';

export { FIGURE_METRICS, type IngestFigures, reconciles } from '../contracts/ingest-figures.ts';
export { tally } from './figures.ts';

export interface BatchDeps extends IngestDeps {
  readonly limit: LimitFunction;
  /**
   * Runs once before the batch's first write (the handler raises the sweep shard mark here). If it fails, nothing is
   * written: every record counts as failed and the batch is redelivered, so the figures still reconcile.
   */
  readonly beforeWrites?: () => Promise<void>;
  /**
   * Writer schemas of schema-registry records (wire-records.ts). Without one, such records are quarantined as
   * UNKNOWN_SCHEMA; if the registry cannot answer, nothing is written and the batch is redelivered.
   */
  readonly schemas?: Schemas;
}

const NO_REGISTRY = schemasOnFirstUse(async () => new (await import('./schema-registry.ts')).SchemaCache(undefined));

export interface BatchSummary {
  readonly records: number;
  readonly results: IngestResult[];
  readonly figures: IngestFigures;
  /** Set when records met an infrastructure failure: the handler throws it, and the batch is redelivered. */
  readonly failure?: unknown;
  /** Set when the inbox look-up failed: every event went to its transaction instead (reported, never thrown). */
  readonly lookupFailure?: unknown;
}

interface ChainOutcome {
  /** Each result with the index of its record in the batch. */
  results: [number, IngestResult][];
  /** Records of the chain not ingested: the one whose processing threw, and those after it. */
  failed: number;
  error?: unknown;
}

export async function ingestBatch(event: MSKEvent, deps: BatchDeps): Promise<BatchSummary> {
  const given: IngestInput[] = Object.values(event.records ?? {})
    .flat()
    .map((record) => {
      const replicatedFrom = replicatedFromOf(record);
      return {
        source: { topic: record.topic, partition: record.partition, offset: record.offset },
        value: record.value,
        producer: producerOf(record),
        ...(replicatedFrom === undefined ? {} : { replicatedFrom }),
      };
    });
  let inputs: IngestInput[];
  try {
    inputs = await readWireRecords(given, deps.schemas ?? NO_REGISTRY, deps.maxEventBytes);
  } catch (error) {
    // The registry could not answer: no record is at fault, all wait for the redelivery.
    return { records: given.length, results: [], figures: tally(given.length, [], given.length), failure: error };
  }
  let admitted: Indexed[];
  try {
    admitted = await Promise.all(inputs.map(async (input, index) => ({ index, ...(await admitLoading(input, deps)) })));
  } catch (error) {
    // Rules a record needs (phone numbers, card numbers) did not load: no record is at fault, all wait for the
    // redelivery — a record is never read without them.
    return { records: inputs.length, results: [], figures: tally(inputs.length, [], inputs.length), failure: error };
  }
  const chains = chainsOf(admitted);
  try {
    await deps.beforeWrites?.();
  } catch (error) {
    return { records: inputs.length, results: [], figures: tally(inputs.length, [], inputs.length), failure: error };
  }
  const { known, lookupFailure } = await lookUp(chains, deps);
  const outcomes = await Promise.all(chains.map((chain) => deps.limit(() => runChain(chain, deps, known))));

  // In the batch's own order, whatever order they ran in.
  const results = outcomes
    .flatMap((o) => o.results)
    .sort(([a], [b]) => a - b)
    .map(([, result]) => result);
  const failed = outcomes.reduce((n, o) => n + o.failed, 0);
  const figures = tally(inputs.length, results, failed);
  const lookup = lookupFailure === undefined ? {} : { lookupFailure };
  if (failed === 0) return { records: inputs.length, results, figures, ...lookup };
  return { records: inputs.length, results, figures, failure: outcomes.find((o) => o.failed > 0)?.error, ...lookup };
}

type Indexed = AdmittedRecord & { readonly index: number };

/** The customer an admitted record is about (a transfer's recipient, a preferences event's userId). */
function customerOf(admission: Indexed['admission']): string | undefined {
  if (!admission.ok) return undefined;
  return 'preferences' in admission ? admission.preferences.userId : admission.event.recipient.userId;
}

/**
 * Records sharing an eventId or a customer form one chain (the connected records, joined through either key), in
 * (topic, partition, offset) order; a record with neither is its own chain. Within a partition that is Kafka's own
 * order — producers key a customer's events to one partition, so a preference and the transfer after it keep their
 * order; across partitions there is none, so the lower partition goes first, which at least makes every delivery of
 * the batch choose the same order.
 */
function chainsOf(records: Indexed[]): Indexed[][] {
  // Union-find over the records, joined by each key they carry.
  const parent = records.map((_, i) => i);
  const root = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    for (let at = i; at !== r; ) {
      const next = parent[at] as number;
      parent[at] = r;
      at = next;
    }
    return r;
  };
  const firstWith = new Map<string, number>();
  for (const [i, record] of records.entries()) {
    const eventId = admittedEventId(record.admission);
    const customer = customerOf(record.admission);
    for (const key of [
      eventId === undefined ? undefined : `e:${eventId}`,
      customer === undefined ? undefined : `u:${customer}`,
    ]) {
      if (key === undefined) continue;
      const seen = firstWith.get(key);
      if (seen === undefined) firstWith.set(key, i);
      else parent[root(i)] = root(seen);
    }
  }
  const chains = new Map<number, Indexed[]>();
  for (const [i, record] of records.entries()) {
    const r = root(i);
    const chain = chains.get(r);
    if (chain === undefined) chains.set(r, [record]);
    else chain.push(record);
  }
  const order = ({ input: { source: x } }: Indexed, { input: { source: y } }: Indexed) =>
    (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : 0) || x.partition - y.partition || x.offset - y.offset;
  return [...chains.values()].map((chain) => chain.sort(order));
}

/** The inbox items of the batch's admitted events, read once; none when the store has no look-up or it failed. */
async function lookUp(chains: Indexed[][], deps: IngestDeps): Promise<{ known: KnownEvents; lookupFailure?: unknown }> {
  const eventIds = chains.flatMap((chain) =>
    chain.flatMap((r) => (r.admission.ok ? [admittedEventId(r.admission) as string] : [])),
  );
  if (deps.store.findInboxes === undefined || eventIds.length === 0) return { known: new Map() };
  try {
    return { known: await deps.store.findInboxes(eventIds) };
  } catch (error) {
    // Only an optimisation: the transactions decide as they did before it existed.
    return { known: new Map(), lookupFailure: error };
  }
}

const eventIdOf = (record: Indexed): string | undefined => admittedEventId(record.admission);

async function runChain(chain: Indexed[], deps: IngestDeps, known: KnownEvents): Promise<ChainOutcome> {
  const results: [number, IngestResult][] = [];
  // What the inbox holds for each eventId, as far as this invocation knows: the look-up's answer, then what the
  // chain's own records wrote (a later record with the same payload is then a duplicate without a write).
  const stored = new Map<string, KnownInbox>();
  for (const [i, record] of chain.entries()) {
    const eventId = eventIdOf(record);
    const storedHere = eventId === undefined ? undefined : (stored.get(eventId) ?? known.get(eventId));
    try {
      const result = await applyAdmission(record, deps, record.admission.ok ? storedHere : undefined);
      results.push([record.index, result]);
      if (eventId !== undefined && record.admission.ok && (result.kind === 'accepted' || result.kind === 'duplicate')) {
        stored.set(eventId, { payloadHash: record.admission.payloadHash });
      }
    } catch (error) {
      // A later record of this eventId or this customer must not run before this one is settled: it waits for the
      // redelivery (an opt-out that could not be written must not let the transfer after it go out).
      return { results, failed: chain.length - i, error };
    }
  }
  return { results, failed: 0 };
}
