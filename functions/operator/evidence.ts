/**
 * What the customer received, from the evidence store (docs/evidence-and-privacy.md "The evidence of a send"): every
 * send of an event or a notification, or every send of a customer — also after the table's items expired — each with
 * the SHA-256 of its record as stored and the provider's reports appended to it, each read as first written, with
 * what its versions say when they say anything (stores/evidence-versions.ts). Sends are found through the batches the
 * table and the customers' evidence index name (stores/evidence-reader.ts), never by listing the bucket; sends
 * recorded before batches under their own objects.
 */
import { evidencePrefixOf, userPrefix } from '../domain/evidence.ts';
import { type BatchEntry, batchNameOfKey, isSendBatch, readBatch } from '../domain/evidence-batch.ts';
import { parseNotificationId } from '../domain/keys.ts';
import {
  batchSendsOfEvent,
  type EvidenceLocator,
  findSends,
  type ReadOptions,
  readEvidence,
  type SendProof,
  type SendRef,
  type SendsFound,
} from '../stores/evidence-reader.ts';
import { type EvidenceStore, FileEvidenceStore } from '../stores/evidence-store.ts';
import { readFirst } from '../stores/evidence-versions.ts';

export { readEvidence, type SendProof, type SendsFound, type UnfoundSend } from '../stores/evidence-reader.ts';

/** The sends of an event or one notification that could be shown (evidenceFound says also which could not, and why). */
export async function evidenceOf(
  store: EvidenceStore,
  id: string,
  locator?: EvidenceLocator,
  user?: string,
): Promise<SendProof[]> {
  return (await evidenceFound(store, id, locator, user)).proofs;
}

/**
 * The sends of an event (`eventId`) or one notification (`eventId#CHANNEL`): from the batches its notifications and
 * the evidence index name — by event, so also after the table's items expired; `user` adds that customer's index —
 * and the objects of sends recorded before batches (under the event's prefix). Without the table, a local run's
 * folder is read whole instead. A send named but not shown is in `unfound`, with why: never "not sent".
 */
export async function evidenceFound(
  store: EvidenceStore,
  id: string,
  locator?: EvidenceLocator,
  user?: string,
): Promise<SendsFound> {
  const ref = parseNotificationId(id);
  const eventId = ref?.eventId ?? id;
  const scan = () =>
    scannedSends(store, (e) =>
      ref === undefined ? parseNotificationId(e.notificationId)?.eventId === id : e.notificationId === id,
    );
  let batched: SendsFound;
  try {
    batched =
      locator === undefined ? await scan() : await batchSendsOfEvent(store, locator, eventId, ref?.channel, user);
  } catch (error) {
    // A local run's table gone (DynamoDB Local stopped): its folder is read whole instead; never S3.
    if (!(store instanceof FileEvidenceStore)) throw error;
    batched = await scan();
  }
  return {
    proofs: dedupe([...(await readEvidence(store, evidencePrefixOf(id))), ...batched.proofs]),
    unfound: batched.unfound,
  };
}

/** A local folder without its table: every batch's sends, filtered (S3 is never listed so: docs/evidence-and-privacy.md). */
async function scannedSends(
  store: EvidenceStore,
  wanted: (send: BatchEntry) => boolean,
  options: ReadOptions = {},
): Promise<SendsFound> {
  if (!(store instanceof FileEvidenceStore)) return { proofs: [], unfound: [] };
  const refs: SendRef[] = [];
  const feedback: string[] = [];
  for (const key of await store.list('batches/')) {
    const name = batchNameOfKey(key);
    const object = name === undefined || !isSendBatch(name) ? undefined : await store.get(key);
    if (name === undefined || object === undefined) continue;
    const { header } = readBatch(object);
    if (header.writer === 'feedback') feedback.push(name);
    for (const entry of header.records) {
      if (entry.kind === 'SEND' && wanted(entry)) refs.push({ batch: name, notificationId: entry.notificationId });
    }
  }
  // Without the table that names a send batch's feedback batches, every feedback batch of the folder is read.
  return findSends(store, refs, { ...options, locator: { reportsOf: async () => feedback } });
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
  return (await userEvidenceFound(store, userId, locator)).proofs;
}

/** Every send proven for a customer (`raw`: with each record's exact bytes), and each one named but not shown. */
export async function userEvidenceFound(
  store: EvidenceStore,
  userId: string,
  locator?: EvidenceLocator,
  options: { readonly raw?: boolean } = {},
): Promise<SendsFound> {
  const found =
    locator === undefined
      ? await scannedSends(store, (e) => e.userId === userId, options)
      : await findSends(store, await locator.ofUser(userId), { ...options, locator });
  const proofs = [...found.proofs];
  for (const pointer of await store.history(userPrefix(userId))) {
    const read = await readFirst(store, pointer);
    if (read === undefined) continue;
    for (const proof of await readEvidence(store, Buffer.from(read.bytes).toString('utf8'))) {
      const warnings = [...read.warnings, ...(proof.warnings ?? [])];
      proofs.push(warnings.length > 0 ? { ...proof, warnings } : proof);
    }
  }
  return { proofs: dedupe(proofs), unfound: found.unfound };
}
