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
 *
 * An invocation of few records spools them (domain/evidence-spool.ts) and writes no intent: each record is put in the
 * spool before its SENT write (`putFirst`), so no record exists only in memory once its outcome is recorded — a holder
 * that dies after the put is made SENT from its record by the sweeper (sweeper/spooled-send.ts), and an index write it
 * missed is filled by the roll-up. A put that does not land in time opens the intent then, and the invocation goes on
 * as one of many records does.
 */

import { gzipSync } from 'node:zlib';
import {
  evidenceBody,
  type ProviderRequest,
  type RetentionPolicy,
  type SendEvidence,
  type SendFacts,
  sendEvidence,
} from '../domain/evidence.ts';
import { type BatchWriter, batchName, sha256Hex } from '../domain/evidence-batch.ts';
import {
  maySpool,
  parseSliceBatch,
  retentionDaysOf,
  SPOOL_BELOW_RECORDS,
  sliceBatchName,
} from '../domain/evidence-spool.ts';
import type { Message } from '../domain/templates.ts';
import { type BatchOutlets, type BatchWritten, writeBatch } from '../stores/evidence-batch-writer.ts';
import type { EvidenceIntentWriter } from '../stores/evidence-intents.ts';
import type { EvidenceSpool } from '../stores/evidence-spool.ts';
import { type SpoolSettled, SpoolWriter } from '../stores/evidence-spool-writer.ts';
import type { SentEvidence } from '../stores/notification-port.ts';

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

/** The moment-dependent part of a push as sent (its TTL and collapse id): what a rebuilt record needs; none else. */
function pushMomentOf(m: Message): { push?: { ttlSeconds?: number; collapseId?: string } } {
  const { ttlSeconds, collapseId } = m as { ttlSeconds?: number; collapseId?: string };
  if (ttlSeconds === undefined && collapseId === undefined) return {};
  return {
    push: {
      ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
      ...(collapseId === undefined ? {} : { collapseId }),
    },
  };
}

/**
 * What the SENT write carries of a send's evidence: its batch, its digest, its acceptedAt and attempt, a push's
 * moment. A message that carried a secret can never be rendered again (that write forgets the secret), so its redacted
 * record's exact bytes, gzipped, go on it too: the sweeper rebuilds a dying invocation's batch from them
 * (sweeper/rebuild-evidence.ts). Only then: an SMS or push record is a few hundred bytes gzipped, while an email's
 * ~3.7 KB would multiply the write units of the SENT write and of every feedback update after it. A record already in
 * the spool (put before the SENT write) is never rebuilt: the caller leaves its bytes off the item
 * (dispatch-notification.ts `sent`), so `record` gzips them only when called — once the caller knows they are needed.
 */
export function sentWriteOf(
  n: SendFacts,
  proof: SendProof,
  batch: string,
  message: Message,
): { evidence: SentEvidence; record?: () => Uint8Array } {
  const { acceptedAt, attempt } = proof.record;
  const evidence = { batch, sha256: proof.sha256, acceptedAt, attempt, ...pushMomentOf(message) };
  return Object.keys(n.secrets ?? {}).length === 0 ? { evidence } : { evidence, record: () => gzipSync(proof.bytes) };
}

/** Where a send's proof goes: the invocation's batch. */
export interface SendBatch {
  readonly name: string;
  /**
   * Before a provider call: waits for the batch's intent (written beside the first claims, so no wait in practice)
   * and answers the batch the send's record will join — the SENT write names it. Never throws.
   */
  ready(): Promise<string>;
  /** After the SENT write: the proof joins the batch `ready` named. */
  add(proof: SendProof, batch: string): void;
  /**
   * Where the record will be, for the SENT write to name: the batch `ready` named, or — when the invocation spools its
   * few records — the slice of the spool its record lands in (domain/evidence-spool.ts).
   */
  addressOf?(proof: SendProof, batch: string): string;
  /**
   * An invocation that spools its few records without an intent: the record put in the spool now, before the SENT
   * write, within PUT_FIRST_MS — true when it landed (nothing else to write for it; `add` is not called), false when
   * not (it was taken over by an intent opened then, or goes as a late object at close: the SENT write then keeps
   * what a rebuild needs). Undefined when this batch does not put first: the record joins it after the SENT write.
   */
  putFirst?(proof: SendProof, at: string): Promise<boolean> | undefined;
}

export interface EvidenceDeps extends SendRecordDeps {
  /** This invocation's batch (the handler gives each invocation its own). */
  readonly batch: SendBatch;
}

/**
 * The longest a provider call waits for its invocation's intent: the intent went out beside the first claim, a write
 * of the same table, and lands in milliseconds. One still unanswered after this is taken as refused.
 */
export const INTENT_WAIT_MS = 1_000;

/**
 * The longest a send slot waits for its record's spool put (a put of the same table as the SENT write after it, in
 * milliseconds): one still unanswered after this is taken as refused, and the invocation's intent is opened then.
 */
export const PUT_FIRST_MS = 200;

/** A record written as a batch of its own, and how that went (a refused intent's records: InvocationEvidence). */
export type AloneWritten = BatchWritten & { readonly proof: SendProof };

/**
 * The invocation's batch: its intent, its records, and the one write at the end. An intent the table refused cannot
 * cover a later death, so from then on each record is written at once as a batch of its own (the store, else a gap
 * in the table, else counted lost), beside the sends: a dying invocation then loses at most the record whose write was
 * in flight, never silently the whole batch.
 */
export class InvocationEvidence implements SendBatch {
  readonly name: string;
  private readonly proofs: SendProof[] = [];
  private intentKept = false;
  /** The intent was asked for and refused: records are written one by one as they come. */
  private intentRefused = false;
  /** Taken as refused after INTENT_WAIT_MS without an answer (onIntentLate counted it). */
  private intentLate = false;
  /** The intent asked for (at `open`, or late: a spooling invocation's put that did not land); none yet: undefined. */
  private opening: Promise<unknown> | undefined;
  private readonly alone: Promise<AloneWritten>[] = [];
  private aloneNames = 0;
  /** Set by `open` when the invocation holds few records: they go to the spool, rolled up by the sweeper. */
  private spooled: SpoolWriter | undefined;
  /** The notifications the invocation was handed: what an intent opened late names. */
  private notificationIds: readonly string[] = [];

  constructor(
    private readonly outlets: BatchOutlets & {
      readonly intents: EvidenceIntentWriter;
      readonly spool?: Pick<EvidenceSpool, 'put'>;
    },
    private readonly options: {
      readonly now: number;
      /** A random id of [0-9a-z] (the handler's): the batch's name is the invocation's own. */
      readonly id: string;
      /** After this (epoch ms) the invocation is surely over: an intent still open is the sweeper's. */
      readonly dueMs: number;
      readonly writer?: BatchWriter;
      /** Fewer records than this go to the spool (given an outlet for it); SPOOL_BELOW_RECORDS when absent. */
      readonly spoolBelow?: number;
      /** The PUT timeout of a record written alone (after a refused intent). */
      readonly putTimeoutMs?: number;
      /** The longest a provider call waits for the intent (INTENT_WAIT_MS). */
      readonly intentWaitMs?: number;
      /**
       * The intent went unanswered for that long and is taken as refused (the records go alone): counted as not
       * written, as a refusal is — however it ends later. Also an intent opened late (a spooling invocation's put that
       * did not land in time: `putFirst`) and refused: its error's name.
       */
      readonly onIntentLate?: (error?: string) => void;
      /** The longest a send slot waits for a record's spool put (PUT_FIRST_MS). */
      readonly putFirstMs?: number;
    },
  ) {
    this.name = batchName(options.writer ?? 'dispatch', options.now, options.id);
  }

  /**
   * The intent naming the notifications this invocation may send, written alongside its first claims; each provider
   * call waits for it (`ready`). A table that refuses it holds no send back: the records are then written one by one.
   * An invocation of few records that spools them writes none (`spooling`, resolved `{ kept: false, spooling: true }`):
   * each record is put in the spool before its SENT write (`putFirst`), so no record exists only in memory after its
   * outcome is recorded — an intent is opened only if a put does not land in time.
   */
  open(notificationIds: readonly string[]): Promise<{ kept: boolean; error?: string; spooling?: true }> {
    const { spool } = this.outlets;
    this.notificationIds = notificationIds;
    if (
      spool !== undefined &&
      notificationIds.length < (this.options.spoolBelow ?? SPOOL_BELOW_RECORDS) &&
      maySpool(this.options.now, this.options.dueMs)
    ) {
      this.spooled = new SpoolWriter(spool, this.outlets);
      return Promise.resolve({ kept: false, spooling: true });
    }
    return this.openIntent();
  }

  private openIntent(): Promise<{ kept: boolean; error?: string }> {
    const opened = this.outlets.intents
      .open({ name: this.name, dueMs: this.options.dueMs, notificationIds: this.notificationIds })
      .then(
        () => {
          this.intentKept = true;
          return { kept: true };
        },
        (e: unknown) => {
          this.intentRefused = true;
          return { kept: false, error: (e as Error)?.name ?? 'Error' };
        },
      );
    this.opening = opened;
    return opened;
  }

  putFirst(proof: SendProof, at: string): Promise<boolean> | undefined {
    const spooled = this.spooled;
    // Only a landed intent covers a record not yet put: while one asked late is unanswered (or was refused), a send
    // that passed `ready` before it was asked still puts its record first, and waits for the intent if that misses.
    if (spooled === undefined || this.intentKept || parseSliceBatch(at) === undefined) return undefined;
    return this.putThenCover(spooled, proof, at);
  }

  /**
   * The put, awaited at most PUT_FIRST_MS; one not landed by then stays in flight (`close` awaits it) and the intent is
   * opened now, awaited like `ready` (at most INTENT_WAIT_MS): once it landed the invocation is covered as one of many
   * records is, and its later sends take that path. Refused too, its unlanded records go as late objects at close.
   */
  private async putThenCover(spooled: SpoolWriter, proof: SendProof, at: string): Promise<boolean> {
    if (await spooled.putNow(proof, at, Date.now(), this.options.putFirstMs ?? PUT_FIRST_MS)) return true;
    if (this.opening === undefined) {
      void this.openIntent().then((opened) => {
        if (opened.error && !this.intentLate) this.options.onIntentLate?.(opened.error);
      });
    }
    await this.intentAnswered();
    return false;
  }

  async ready(): Promise<string> {
    await this.intentAnswered();
    if (!this.intentRefused) return this.name;
    const { writer = 'dispatch', now, id } = this.options;
    return batchName(writer, now, `${id}r${this.aloneNames++}`);
  }

  /** The intent's answer, or refused after INTENT_WAIT_MS without one: no send, nor the batch, waits longer for it. */
  private async intentAnswered(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (!this.intentKept && !this.intentRefused) {
          this.intentRefused = true;
          this.intentLate = true;
          this.options.onIntentLate?.();
        }
        resolve();
      }, this.options.intentWaitMs ?? INTENT_WAIT_MS);
    });
    await Promise.race([this.opening, late]).finally(() => clearTimeout(timer));
  }

  /** Whether this invocation's records go to the spool. */
  get spooling(): boolean {
    return this.spooled !== undefined;
  }

  addressOf(proof: SendProof, batch: string): string {
    if (this.spooled === undefined || batch !== this.name) return batch;
    return sliceBatchName(this.options.now, retentionDaysOf(proof.record));
  }

  add(proof: SendProof, batch: string = this.name): void {
    if (this.spooled !== undefined && parseSliceBatch(batch) !== undefined) {
      this.spooled.add(proof, batch, Date.now());
      return;
    }
    if (batch === this.name) {
      this.proofs.push(proof);
      return;
    }
    const written = writeBatch(
      this.outlets,
      { name: batch, writer: this.options.writer ?? 'dispatch', records: [proof] },
      // No intent finishes a record written alone: an index write it misses is left to the gap filler.
      { timeoutMs: this.options.putTimeoutMs ?? 2_000, now: Date.now(), unindexedAsGap: true },
    ).then((w) => ({ ...w, proof }));
    this.alone.push(written);
  }

  /** The records of the batch itself (not those written alone). */
  get records(): readonly SendProof[] {
    return this.proofs;
  }

  /** Whether the intent was taken as refused for want of an answer in time (already counted by onIntentLate). */
  get intentTimedOut(): boolean {
    return this.intentLate;
  }

  /**
   * After the invocation's records: the batch, then its customers' refs, then the intent closed. The intent stays
   * open whenever something is not yet safe (the batch lost, or its refs not all indexed): the sweeper finishes it.
   */
  async close(
    timeLeftMs: number,
    timeoutMs: number,
    now: number,
  ): Promise<BatchWritten & { intentOpen: boolean; alone: readonly AloneWritten[]; spool?: SpoolSettled }> {
    await this.intentAnswered();
    const alone = await Promise.all(this.alone);
    if (this.spooled !== undefined) return { ...(await this.closeSpool(Math.min(timeoutMs, timeLeftMs), now)), alone };
    const written = await writeBatch(
      this.outlets,
      { name: this.name, writer: this.options.writer ?? 'dispatch', records: this.proofs },
      // Without a kept intent nothing else would index it: then a missed index write is left to the gap filler.
      { timeoutMs: Math.min(timeoutMs, timeLeftMs), now, unindexedAsGap: !this.intentKept },
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
    return { ...written, outcome, intentOpen: this.intentKept, alone };
  }

  /** The spooled records' puts awaited and indexed, then the intent closed once nothing is left to recover. */
  private async closeSpool(
    timeoutMs: number,
    now: number,
  ): Promise<BatchWritten & { intentOpen: boolean; spool: SpoolSettled }> {
    const spool = await (this.spooled as SpoolWriter).settle(this.intentKept, { timeoutMs, now });
    const safe = spool.refused.length === 0 && spool.indexed;
    if (this.intentKept && safe) {
      try {
        await this.outlets.intents.close({ name: this.name, dueMs: this.options.dueMs });
        this.intentKept = false;
      } catch {
        // Left open: the sweeper finds every record spooled or stored and closes it.
      }
    }
    const late = (o: string) => spool.late.some((l) => l.outcome === o);
    // A refused put is the intent's to recover while it is open; else it went to a late object (or its gap).
    const outcome =
      spool.refused.length === 0
        ? 'written'
        : this.intentKept || late('gap')
          ? 'gap'
          : late('lost')
            ? 'lost'
            : 'written';
    return {
      outcome,
      key: this.name,
      records: spool.spooled + spool.refused.length,
      indexed: spool.indexed,
      ...(spool.unindexedItems === undefined ? {} : { unindexedItems: spool.unindexedItems }),
      ...(spool.error === undefined ? {} : { error: spool.error }),
      intentOpen: this.intentKept,
      spool,
    };
  }
}
