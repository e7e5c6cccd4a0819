/**
 * What the customer received, from the evidence store (docs/evidence-and-privacy.md "The evidence of a send"): every
 * send under an event or a notification, or every send of a customer through their pointers — also after the
 * table's items expired — each with the SHA-256 of the stored object and the provider's reports appended to it, each
 * read as first written, with what its versions say when they say anything (evidence-versions.ts).
 */
import { createHash } from 'node:crypto';
import {
  evidencePrefixOf,
  type FeedbackEvidence,
  parseEvidence,
  type SendEvidence,
  userPrefix,
} from '../domain/evidence.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';
import { readFirst } from '../stores/evidence-versions.ts';

export interface SendProof {
  readonly key: string;
  /** SHA-256 of the stored object, as it is in the store: what a dispute can check a copy against. */
  readonly sha256: string;
  readonly send: SendEvidence;
  readonly feedback: FeedbackEvidence[];
  /**
   * What the versions of its objects say beyond the record: a later version of a key (superseded) or a delete marker
   * over it (hidden). Both are denied by the bucket policy; a record is shown as first written either way.
   */
  readonly warnings?: string[];
}

/** Every send under a prefix (an event, or one notification), each with the reports appended to it. */
export async function readEvidence(store: EvidenceStore, prefix: string): Promise<SendProof[]> {
  const objects = await store.history(prefix);
  const proofs: SendProof[] = [];
  for (const o of objects.filter((x) => x.key.endsWith('.json') && !x.key.includes('.feedback/'))) {
    const read = await readFirst(store, o);
    if (read === undefined) continue;
    const record = parseEvidence(read.bytes);
    if (record.kind !== 'SEND') continue;
    const feedbackPrefix = `${o.key.slice(0, -'.json'.length)}.feedback/`;
    const feedback: FeedbackEvidence[] = [];
    const warnings = [...read.warnings];
    for (const f of objects.filter((x) => x.key.startsWith(feedbackPrefix))) {
      const report = await readFirst(store, f);
      if (report === undefined) continue;
      warnings.push(...report.warnings);
      const r = parseEvidence(report.bytes);
      if (r.kind === 'FEEDBACK') feedback.push(r);
    }
    const sha256 = createHash('sha256').update(read.bytes).digest('hex');
    proofs.push({ key: o.key, sha256, send: record, feedback, ...(warnings.length > 0 ? { warnings } : {}) });
  }
  return proofs.sort((a, b) => a.send.acceptedAt.localeCompare(b.send.acceptedAt));
}

/** The sends of an event (`eventId`) or of one notification (`eventId#CHANNEL`). */
export const evidenceOf = (store: EvidenceStore, id: string) => readEvidence(store, evidencePrefixOf(id));

/**
 * Every send proven for a customer: the customer's pointers (users/<userId>/…) lead to each send's record — every
 * pointer ever written, also one superseded or hidden: the send it names is found all the same.
 */
export async function userEvidence(store: EvidenceStore, userId: string): Promise<SendProof[]> {
  const proofs: SendProof[] = [];
  for (const pointer of await store.history(userPrefix(userId))) {
    const read = await readFirst(store, pointer);
    if (read === undefined) continue;
    for (const proof of await readEvidence(store, Buffer.from(read.bytes).toString('utf8'))) {
      const warnings = [...read.warnings, ...(proof.warnings ?? [])];
      proofs.push(warnings.length > 0 ? { ...proof, warnings } : proof);
    }
  }
  return proofs;
}
