/**
 * Whether replaying a quarantined record's stored value can end anywhere but in quarantine again. A replay feeds the
 * same bytes to the same rules: only a change on our side cures it — a schema registered, a type or channel added to
 * the catalogue, a limit raised, a fault or a decoding rule fixed. The preview asks this before anything is written,
 * so it never promises a replay the confirm cannot deliver (docs/operations.md "The operator CLI"). Pure.
 */
import type { RejectionReason } from './contract.ts';
import { decodeRecordValue } from './decode.ts';

/** Reasons a change on our side cures: the catalogue, the registry, a limit, a fault (`ops quarantine` lists them). */
export const CURABLE_BY_REPLAY: ReadonlySet<RejectionReason> = new Set<RejectionReason>([
  'UNKNOWN_SCHEMA',
  'UNKNOWN_TYPE',
  'UNKNOWN_CHANNEL',
  'TOO_LARGE',
  'UNPROCESSABLE',
]);

/** Reasons the event contract's decoder gives: the decoder deployed now reads the stored bytes again. */
const DECODER_REASONS: ReadonlySet<RejectionReason> = new Set<RejectionReason>([
  'NO_VALUE',
  'INVALID_ENCODING',
  'INVALID_JSON',
  'SCHEMA_VIOLATION',
  'INVALID_EVENT_ID',
  'INVALID_CONTACT',
  'UNSENDABLE_ADDRESS',
  'INVALID_AMOUNT',
  'MISSING_CONTACT',
]);

/**
 * Reasons no replay may cure, whatever the value: a copy MSK Replicator made from the other region's cluster is that
 * region's to take, from its own cluster. Replayed here without the Replicator's header, it would be judged as if
 * produced here — and could be sent by both regions.
 */
export const NEVER_REPLAYED: ReadonlyMap<RejectionReason, string> = new Map<RejectionReason, string>([
  [
    'REPLICATED_NOT_TAKEN',
    "a copy of a record from the other region's cluster: the other region takes this record from its own cluster; replaying it here could send it twice",
  ],
]);

/**
 * Of those, the catalogue's: it is compiled into the decoder the operator function runs, the one ingest runs, so the
 * decoder tells whether the type or channel is still unknown.
 */
const CATALOGUE_REASONS: ReadonlySet<RejectionReason> = new Set<RejectionReason>(['UNKNOWN_TYPE', 'UNKNOWN_CHANNEL']);

/** A registry-framed value (Confluent 0x00, Glue 0x03): its schema is the registry's, which a pure decoder cannot ask. */
const registryFramed = (storedValue: string) => {
  const first = Buffer.from(storedValue.slice(0, 4), 'base64')[0];
  return first === 0x00 || first === 0x03;
};

export type ReplayVerdict = { readonly cures: true } | { readonly cures: false; readonly why: string };

/**
 * What a replay of the stored value (base64, as kept) would meet: cured, or why it would be quarantined again —
 * the decoder's reason and detail now, or (an eventId the inbox holds with another meaning) the stored reason.
 */
export function replayAsIs(reason: RejectionReason, storedValue: string, maxBytes: number): ReplayVerdict {
  const never = NEVER_REPLAYED.get(reason);
  if (never !== undefined) return { cures: false, why: never };
  const catalogue = CATALOGUE_REASONS.has(reason) && !registryFramed(storedValue);
  if (CURABLE_BY_REPLAY.has(reason) && !catalogue) return { cures: true };
  if (!DECODER_REASONS.has(reason) && !catalogue) return { cures: false, why: reason };
  return decodedVerdict(storedValue, maxBytes);
}

/** What the decoder deployed now says of a value (base64): the same rules ingest applies to it. */
export function decodedVerdict(value: string, maxBytes: number): ReplayVerdict {
  const decoded = decodeRecordValue(value, maxBytes);
  if (decoded.ok) return { cures: true };
  return { cures: false, why: `${decoded.rejection.reason}: ${decoded.rejection.detail}` };
}
