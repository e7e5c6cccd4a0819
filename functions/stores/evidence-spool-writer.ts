/**
 * A writer's records on their way to the spool (domain/evidence-spool.ts): each record is put as soon as its outcome
 * is recorded — beside the sends — or, for a dispatch invocation that writes no intent, before its SENT write
 * (`putNow`, awaited a bounded time) — and at the end of the invocation (`settle`) the puts are
 * awaited and the customers' index is written naming the slice each record lands in (its writer knows: the name is
 * deterministic). A put the table refused is not dropped: with an open intent the sweeper rebuilds it
 * (recover-evidence.ts); without one the record is written at once as a late object of its slice (the store, else a
 * gap, else counted lost), found by the slice's prefix like any late record.
 */
import type { EvidenceRecord } from '../domain/evidence.ts';
import { sendsOf } from '../domain/evidence-batch.ts';
import { lateBatchName } from '../domain/evidence-spool.ts';
import { type BatchOutlets, type BatchWritten, putIndexOf, writeBatch } from './evidence-batch-writer.ts';
import type { EvidenceSpool } from './evidence-spool.ts';

export interface SpoolProof {
  readonly record: EvidenceRecord;
  readonly bytes: Buffer;
  readonly sha256: string;
}

export interface SpoolSettled {
  /** Records the spool holds now. */
  readonly spooled: number;
  /** Records whose put the table refused (left to the intent's recovery, or written as late objects). */
  readonly refused: readonly SpoolProof[];
  /** Late objects written for refused puts when no intent covers them. */
  readonly late: readonly (BatchWritten & { proof: SpoolProof })[];
  /** Every spooled record's index entry is written. */
  readonly indexed: boolean;
  readonly unindexedItems?: number;
  readonly error?: string;
}

type PutSettled = { proof: SpoolProof; slice: string; ok: boolean; error?: string };

/**
 * Each put as it settled within `timeoutMs` — the time the invocation kept for its evidence — or refused
 * (`SpoolTimeout`) past it: a hung or throttled put must not hold the invocation, and with it the shard's next sends,
 * to its timeout. A put that lands later is the same item (keyed by its digest): the intent's rebuild finds it there.
 */
async function withinTime(
  puts: readonly { readonly proof: SpoolProof; readonly slice: string; readonly done: Promise<PutSettled> }[],
  timeoutMs: number,
): Promise<PutSettled[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, timeoutMs));
  });
  try {
    return await Promise.all(
      puts.map(({ proof, slice, done }) =>
        Promise.race([done, late.then((): PutSettled => ({ proof, slice, ok: false, error: 'SpoolTimeout' }))]),
      ),
    );
  } finally {
    clearTimeout(timer);
  }
}

export class SpoolWriter {
  private readonly puts: { readonly proof: SpoolProof; readonly slice: string; readonly done: Promise<PutSettled> }[] =
    [];

  constructor(
    private readonly spool: Pick<EvidenceSpool, 'put'>,
    private readonly outlets: BatchOutlets,
  ) {}

  get pending(): number {
    return this.puts.length;
  }

  /** The record goes to the spool now, not awaited: `settle` awaits it. */
  add(proof: SpoolProof, slice: string, nowMs: number): void {
    this.start(proof, slice, nowMs);
  }

  /**
   * The record goes to the spool now, awaited at most `withinMs`: true when it landed by then. One that did not stays
   * in flight like any put, and `settle` awaits (and reports) it.
   */
  async putNow(proof: SpoolProof, slice: string, nowMs: number, withinMs: number): Promise<boolean> {
    const [settled] = await withinTime([this.start(proof, slice, nowMs)], withinMs);
    return settled?.ok === true;
  }

  private start(proof: SpoolProof, slice: string, nowMs: number) {
    const put = this.spool
      .put(
        [
          {
            slice,
            sha256: proof.sha256,
            notificationId: proof.record.notificationId,
            recordKind: proof.record.kind,
            bytes: proof.bytes,
          },
        ],
        nowMs,
      )
      .then(
        (): PutSettled => ({ proof, slice, ok: true }),
        (e: unknown): PutSettled => ({ proof, slice, ok: false, error: (e as Error)?.name ?? 'Error' }),
      );
    const started = { proof, slice, done: put };
    this.puts.push(started);
    return started;
  }

  /**
   * The puts awaited, then the index. `covered`: an open intent covers a refused put (the sweeper rebuilds it);
   * otherwise a refused record is written now as a late object of its slice.
   */
  async settle(covered: boolean, options: { timeoutMs: number; now: number }): Promise<SpoolSettled> {
    const done = await withinTime(this.puts, options.timeoutMs);
    const landed = done.filter((d) => d.ok);
    const refused = done.filter((d) => !d.ok);
    const late = covered
      ? []
      : await Promise.all(
          refused.map(async ({ proof, slice }) => ({
            ...(await writeBatch(
              this.outlets,
              { name: lateBatchName(slice, [proof.sha256]), writer: 'dispatch', records: [proof] },
              { ...options, unindexedAsGap: true },
            )),
            proof,
          })),
        );
    const bySlice = new Map<string, SpoolProof[]>();
    for (const { proof, slice } of landed) bySlice.set(slice, [...(bySlice.get(slice) ?? []), proof]);
    // Every slice's sends in one index write: an event's channels of two retention classes share a customer item.
    const {
      indexed,
      unindexedItems = 0,
      error,
    } = await putIndexOf(
      this.outlets,
      [...bySlice].map(([name, proofs]) => ({ name, sends: sendsOf(proofs) })),
    );
    return {
      spooled: landed.length,
      refused: refused.map((r) => r.proof),
      late,
      indexed,
      ...(unindexedItems > 0 ? { unindexedItems } : {}),
      ...(error === undefined ? {} : { error }),
    };
  }
}
