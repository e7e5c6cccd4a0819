/** What a reader of send evidence answers (stores/evidence-reader.ts): a send shown, and one named but not shown. */
import type { FeedbackEvidence, SendEvidence } from '../domain/evidence.ts';
import { type BatchEntry, digestMatches } from '../domain/evidence-batch.ts';

export interface SendProof {
  /** The object the record is in: its batch, or (before batches) its own. */
  readonly key: string;
  /** The record's place in its batch (absent for an object of its own). */
  readonly record?: number;
  /** SHA-256 of the record's bytes as stored: what a dispute can check a copy against. */
  readonly sha256: string;
  readonly send: SendEvidence;
  readonly feedback: FeedbackEvidence[];
  /**
   * What the versions of its objects say beyond the record: a later version of a key (superseded) or a delete marker
   * over it (hidden) — both denied by the bucket policy; and a digest the SENT write or the index carried that is not
   * the stored record's. A record is shown as first written either way.
   */
  readonly warnings?: string[];
  /** The object's version read (its first): with the key, what a third party fetches to check the record. */
  readonly versionId?: string;
  /** The record's entry in its batch's header: where its bytes are, and their SHA-256. */
  readonly entry?: BatchEntry;
  /** The record's exact bytes (base64), only when asked (a dispute's export): they hash to `sha256`. */
  readonly bytes?: string;
}

/** A send named by the table or the index whose record could not be shown, and what is known of why. */
export interface UnfoundSend {
  readonly notificationId: string;
  readonly batch: string;
  /** The digest the SENT write or the index carried. */
  readonly sha256?: string;
  /**
   * gap: the batch waits in the table for the store; pending: its intent is open, the sweeper rebuilds it; lost:
   * neither; unknown: the table was not asked; notInBatch: the batch is stored without this record; damaged: the
   * record does not match its hash (its neighbours are shown all the same).
   */
  readonly state: 'gap' | 'pending' | 'lost' | 'unknown' | 'notInBatch' | 'damaged';
  /** What an operator reads. */
  readonly says: string;
}

/** What a read found: the sends shown, and those named but not shown, with why. */
export interface SendsFound {
  readonly proofs: SendProof[];
  readonly unfound: UnfoundSend[];
}

/** Each digest named for each notification, or the notification alone when none is: what an unfound send reports. */
export const eachNamed = (ids: ReadonlyMap<string, ReadonlySet<string>>): [string, string | undefined][] =>
  [...ids].flatMap(([id, digests]): [string, string | undefined][] =>
    digests.size === 0 ? [[id, undefined]] : [...digests].map((d) => [id, d]),
  );

/** The warnings of a record no digest named for its notification matches (none when none is named). */
export const unnamedDigest = (what: string, sha256: string, named: ReadonlySet<string> | undefined) =>
  [...(named ?? [])].some((d) => digestMatches(d, sha256))
    ? []
    : [...(named ?? [])].map((d) => `the ${what} sha256 ${sha256} is not the ${d} its SENT write or the index carried`);

/**
 * A digest named for a notification, once per record: the whole one its SENT write carried and the first 128 bits the
 * index keeps name the same record (the whole one is kept); two attempts' records are two digests.
 */
export function addDigest(digests: Set<string>, sha256: string): void {
  if ([...digests].some((d) => d.startsWith(sha256))) return;
  for (const d of digests) if (sha256.startsWith(d)) digests.delete(d);
  digests.add(sha256);
}
