/**
 * What the customer received, from the evidence store (docs/evidence-and-privacy.md "The evidence of a send"): every
 * send of an event or a notification, or every send of a customer — also after the table's items expired — each with
 * the SHA-256 of its record as stored and the provider's reports appended to it, each read as first written, with
 * what its versions say when they say anything (stores/evidence-versions.ts). Sends are found through the batches the
 * table and the customers' evidence index name (stores/evidence-reader.ts), never by listing the bucket; sends
 * recorded before batches under their own objects.
 */
import { evidencePrefixOf, userPrefix } from '../domain/evidence.ts';
import { type BatchEntry, batchNameOfKey, decodeBatch, isSendBatch } from '../domain/evidence-batch.ts';
import { parseNotificationId } from '../domain/keys.ts';
import {
  batchSendsOfEvent,
  type EvidenceLocator,
  readEvidence,
  readSends,
  type SendProof,
  type SendRef,
} from '../stores/evidence-reader.ts';
import { type EvidenceStore, FileEvidenceStore } from '../stores/evidence-store.ts';
import { readFirst } from '../stores/evidence-versions.ts';

export { readEvidence, type SendProof } from '../stores/evidence-reader.ts';

/**
 * The sends of an event (`eventId`) or one notification (`eventId#CHANNEL`): from the batches its notifications and
 * its customers' index name (`user` when the table no longer holds the event), and the objects of sends recorded
 * before batches (under the event's prefix). Without the table, a local run's folder is read whole instead.
 */
export async function evidenceOf(
  store: EvidenceStore,
  id: string,
  locator?: EvidenceLocator,
  user?: string,
): Promise<SendProof[]> {
  const ref = parseNotificationId(id);
  const eventId = ref?.eventId ?? id;
  const scan = () =>
    scannedSends(store, (e) =>
      ref === undefined ? parseNotificationId(e.notificationId)?.eventId === id : e.notificationId === id,
    );
  let batched: SendProof[];
  try {
    batched =
      locator === undefined ? await scan() : await batchSendsOfEvent(store, locator, eventId, ref?.channel, user);
  } catch (error) {
    // A local run's table gone (DynamoDB Local stopped): its folder is read whole instead; never S3.
    if (!(store instanceof FileEvidenceStore)) throw error;
    batched = await scan();
  }
  return dedupe([...(await readEvidence(store, evidencePrefixOf(id))), ...batched]);
}

/** A local folder without its table: every batch's sends, filtered (S3 is never listed so: docs/evidence-and-privacy.md). */
async function scannedSends(store: EvidenceStore, wanted: (send: BatchEntry) => boolean): Promise<SendProof[]> {
  if (!(store instanceof FileEvidenceStore)) return [];
  const refs: SendRef[] = [];
  for (const key of await store.list('batches/')) {
    const name = batchNameOfKey(key);
    const object = name === undefined || !isSendBatch(name) ? undefined : await store.get(key);
    if (name === undefined || object === undefined) continue;
    for (const { entry } of decodeBatch(object).records) {
      if (entry.kind === 'SEND' && wanted(entry)) refs.push({ batch: name, notificationId: entry.notificationId });
    }
  }
  return readSends(store, refs);
}

/** One proof per send (a batch named by both the table and the index is read once). */
function dedupe(proofs: SendProof[]): SendProof[] {
  const seen = new Set<string>();
  return proofs
    .filter((p) => {
      const id = `${p.send.notificationId}@${p.send.providerMessageId}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    })
    .sort((a, b) => a.send.acceptedAt.localeCompare(b.send.acceptedAt));
}

/**
 * Every send proven for a customer: their evidence index names each batch (also years after the table's items), and
 * the customer's pointers (users/<userId>/…) each send recorded before batches — every pointer ever written, also one
 * superseded or hidden: the send it names is found all the same.
 */
export async function userEvidence(
  store: EvidenceStore,
  userId: string,
  locator?: EvidenceLocator,
): Promise<SendProof[]> {
  const proofs: SendProof[] =
    locator === undefined
      ? await scannedSends(store, (e) => e.userId === userId)
      : await readSends(store, await locator.ofUser(userId));
  for (const pointer of await store.history(userPrefix(userId))) {
    const read = await readFirst(store, pointer);
    if (read === undefined) continue;
    for (const proof of await readEvidence(store, Buffer.from(read.bytes).toString('utf8'))) {
      const warnings = [...read.warnings, ...(proof.warnings ?? [])];
      proofs.push(warnings.length > 0 ? { ...proof, warnings } : proof);
    }
  }
  return dedupe(proofs);
}
