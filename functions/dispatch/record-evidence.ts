/**
 * Step 10 of dispatch, after the provider accepted: the evidence of the send (domain/evidence.ts) — built before the
 * acceptance is written, so the SENT write carries its batch and its SHA-256 — joins the invocation's batch
 * (domain/evidence-batch.ts). The send slot is free once the outcome is recorded: the batch is written once, after the
 * invocation's records are done (`close`), never inside a send.
 *
 * Never lost to a dying invocation: before its first send, the invocation writes an intent naming its batch and the
 * notifications it was handed (stores/evidence-intents.ts), and closes it once the batch landed. An invocation that
 * dies in between leaves the intent open; the sweeper rebuilds the batch from those notifications, each record
 * accepted only when its bytes hash to the digest its SENT write carried (functions/sweeper/recover-evidence.ts).
 * A store that is slow or refuses leaves the batch's bytes in the table as a gap the sweeper writes; only when the
 * table refuses the gap too and the intent could not be kept is the evidence lost — counted and alarmed
 * (EvidenceLost), logged with ids only. Nothing here touches a notification's state: SENT stands whatever happens.
 */

import {
  evidenceBody,
  type ProviderRequest,
  type RetentionPolicy,
  type SendEvidence,
  type SendFacts,
  sendEvidence,
} from '../domain/evidence.ts';
import { type BatchWriter, batchName, sha256Hex } from '../domain/evidence-batch.ts';
import type { Message } from '../domain/templates.ts';
import { type BatchOutlets, type BatchWritten, writeBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceIntents } from '../stores/evidence-intents.ts';

/** How a send's record is built: the dispatch's and the sweeper's rebuild use this one function. */
export interface SendRecordDeps {
  readonly retention: RetentionPolicy;
  /** The provider request a send of this notification and message makes (the sender's own builder). */
  readonly requestOf: (n: SendFacts & { recipient: string }, m: Message) => ProviderRequest;
}

/** A send's record, its exact bytes and their SHA-256 (what the SENT write carries). */
export interface SendProof {
  readonly record: SendEvidence;
  readonly bytes: Buffer;
  readonly sha256: string;
}

export function sendProofOf(
  deps: SendRecordDeps,
  n: SendFacts & { recipient: string },
  message: Message,
  providerMessageId: string,
  acceptedAtMs: number,
): SendProof {
  const record = sendEvidence(n, deps.requestOf(n, message), providerMessageId, acceptedAtMs, deps.retention);
  const bytes = evidenceBody(record);
  return { record, bytes, sha256: sha256Hex(bytes) };
}

/** Where a send's proof goes: the invocation's batch. */
export interface SendBatch {
  readonly name: string;
  add(proof: SendProof): void;
}

export interface EvidenceDeps extends SendRecordDeps {
  /** This invocation's batch (the handler gives each invocation its own). */
  readonly batch: SendBatch;
}

/** The invocation's batch: its intent, its records, and the one write at the end. */
export class InvocationEvidence implements SendBatch {
  readonly name: string;
  private readonly proofs: SendProof[] = [];
  private intentKept = false;
  private opening: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly outlets: BatchOutlets & { readonly intents: EvidenceIntents },
    private readonly options: {
      readonly now: number;
      /** A random id of [0-9a-z] (the handler's): the batch's name is the invocation's own. */
      readonly id: string;
      /** After this (epoch ms) the invocation is surely over: an intent still open is the sweeper's. */
      readonly dueMs: number;
      readonly writer?: BatchWriter;
    },
  ) {
    this.name = batchName(options.writer ?? 'dispatch', options.now, options.id);
  }

  /**
   * The intent naming the notifications this invocation may send, written alongside its first claims. A table that
   * refuses it delays nothing: the sends go on, and the batch is only as safe as its own write at the end.
   */
  open(notificationIds: readonly string[]): Promise<{ kept: boolean; error?: string }> {
    const opened = this.outlets.intents.open({ name: this.name, dueMs: this.options.dueMs, notificationIds }).then(
      () => {
        this.intentKept = true;
        return { kept: true };
      },
      (e: unknown) => ({ kept: false, error: (e as Error)?.name ?? 'Error' }),
    );
    this.opening = opened;
    return opened;
  }

  add(proof: SendProof): void {
    this.proofs.push(proof);
  }

  get records(): readonly SendProof[] {
    return this.proofs;
  }

  /**
   * After the invocation's records: the batch, then its customers' refs, then the intent closed. The intent stays
   * open whenever something is not yet safe (the batch lost, or its refs not all indexed): the sweeper finishes it.
   */
  async close(timeLeftMs: number, timeoutMs: number, now: number): Promise<BatchWritten & { intentOpen: boolean }> {
    await this.opening;
    const written = await writeBatch(
      this.outlets,
      { name: this.name, writer: this.options.writer ?? 'dispatch', records: this.proofs },
      { timeoutMs: Math.min(timeoutMs, timeLeftMs), now },
    );
    const safe = written.outcome !== 'lost' && written.indexed;
    if (this.intentKept && safe) {
      try {
        await this.outlets.intents.close({ name: this.name, dueMs: this.options.dueMs });
        this.intentKept = false;
      } catch {
        // Left open, the sweeper finds the batch written (already there) and closes it: a little work, nothing lost.
      }
    }
    // Lost only if nothing can bring it back: a batch whose intent is open is rebuilt by the sweeper.
    const outcome = written.outcome === 'lost' && this.intentKept ? 'gap' : written.outcome;
    return { ...written, outcome, intentOpen: this.intentKept };
  }
}
