/**
 * What the customer received, from the evidence store (docs/evidence-and-privacy.md "The evidence of a send"): every
 * send under an event or a notification, or every send of a customer through their pointers — also after the
 * table's items expired — each with the SHA-256 of the stored object and the provider's reports appended to it.
 */
import { createHash } from 'node:crypto';
import {
  type EvidenceRecord,
  evidencePrefixOf,
  type FeedbackEvidence,
  parseEvidence,
  type SendEvidence,
  userPrefix,
} from '../domain/evidence.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';

export interface SendProof {
  readonly key: string;
  /** SHA-256 of the stored object, as it is in the store: what a dispute can check a copy against. */
  readonly sha256: string;
  readonly send: SendEvidence;
  readonly feedback: FeedbackEvidence[];
}

async function readRecord(store: EvidenceStore, key: string): Promise<{ record: EvidenceRecord; sha256: string }> {
  const bytes = await store.get(key);
  if (bytes === undefined) throw new Error(`evidence object ${key} listed but not readable`);
  return { record: parseEvidence(bytes), sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Every send under a prefix (an event, or one notification), each with the reports appended to it. */
export async function readEvidence(store: EvidenceStore, prefix: string): Promise<SendProof[]> {
  const keys = await store.list(prefix);
  const proofs: SendProof[] = [];
  for (const key of keys.filter((k) => k.endsWith('.json') && !k.includes('.feedback/'))) {
    const { record, sha256 } = await readRecord(store, key);
    if (record.kind !== 'SEND') continue;
    const feedbackPrefix = `${key.slice(0, -'.json'.length)}.feedback/`;
    const feedback: FeedbackEvidence[] = [];
    for (const f of keys.filter((k) => k.startsWith(feedbackPrefix))) {
      const r = (await readRecord(store, f)).record;
      if (r.kind === 'FEEDBACK') feedback.push(r);
    }
    proofs.push({ key, sha256, send: record, feedback });
  }
  return proofs.sort((a, b) => a.send.acceptedAt.localeCompare(b.send.acceptedAt));
}

/** The sends of an event (`eventId`) or of one notification (`eventId#CHANNEL`). */
export const evidenceOf = (store: EvidenceStore, id: string) => readEvidence(store, evidencePrefixOf(id));

/** Every send proven for a customer: the customer's pointers (users/<userId>/…) lead to each send's record. */
export async function userEvidence(store: EvidenceStore, userId: string): Promise<SendProof[]> {
  const proofs: SendProof[] = [];
  for (const pointer of await store.list(userPrefix(userId))) {
    const target = await store.get(pointer);
    if (target === undefined) continue;
    proofs.push(...(await readEvidence(store, Buffer.from(target).toString('utf8'))));
  }
  return proofs;
}
