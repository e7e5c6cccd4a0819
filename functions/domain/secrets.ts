/**
 * Secrets: fields of kind `secret` (a one-time code). A secret is sent and never kept (docs/evidence-and-privacy.md
 * "Secrets"):
 * - the notification item holds it apart from `data`, in `secrets`, and every terminal write removes it;
 * - the payloadHash covers a keyed MAC of it (a plain hash of six digits is undone by trying a million codes), and the
 *   evidence keeps that MAC and the message with the secret redacted, so "was this code sent" can still be proven by
 *   whoever may compute the MAC (the key's policy), never read back from what is stored;
 * - a quarantined record's kept copy has its bytes masked, as a card number's are.
 * Pure: the MAC itself is computed by an adapter (functions/stores/secret-mac.ts: a KMS HMAC key, or a local key).
 */
import { EVENT_TYPES, secretFieldsOf } from './catalogue.ts';

/** What a secret becomes in the evidence, the console and every other copy: the same word everywhere. */
export const REDACTED = '[redacted]';

/** The secret fields of a type present in `data`: name → value. */
export function secretsOf(type: string, data: Readonly<Record<string, unknown>>): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const name of secretFieldsOf(type)) {
    const value = data[name];
    if (typeof value === 'string' && value !== '') secrets[name] = value;
  }
  return secrets;
}

/** `data` without the type's secret fields: what a notification keeps as its data. */
export function withoutSecrets<T extends Readonly<Record<string, string>>>(type: string, data: T): T {
  const names = secretFieldsOf(type);
  if (names.length === 0) return data;
  return Object.fromEntries(Object.entries(data).filter(([name]) => !names.includes(name))) as T;
}

/**
 * The bytes a secret's MAC is computed over: the event, the field and the value, so the same code in two events (or two
 * fields) never has the same MAC — nothing links them — and a verifier holding the event id and a candidate code
 * recomputes it. Versioned: another layout is another prefix.
 */
export const secretMacMessage = (eventId: string, field: string, value: string) =>
  JSON.stringify(['notifier.secret.v1', eventId, field, value]);

/** How the evidence names what the MAC covers, with the value left out. */
export const SECRET_MAC_LAYOUT = '["notifier.secret.v1", <eventId>, <field>, <value>] as JSON, UTF-8';

/** A MAC as it is kept: the algorithm and the base64 of the MAC's bytes. */
export const macDigest = (mac: Uint8Array) => `HMAC_SHA_256:${Buffer.from(mac).toString('base64')}`;

/** Every copy of each secret in `text` replaced by REDACTED (a code is ASCII: it is written alike in every channel). */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let redacted = text;
  // Longest first: a code that contains another is redacted whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret !== '') redacted = redacted.replaceAll(secret, REDACTED);
  }
  return redacted;
}

/**
 * The secrets a record value may hold, read as well as it can be: a JSON object whose `type` names a type with secret
 * fields — as spelled, or spelled another way (any case, `_`, `-` or spaces: ONE_TIME_PASSCODE), since the record is
 * refused precisely when its spelling is wrong — and their values in `data` whatever they are (a malformed code is
 * still a code: a string, or a number a producer's serializer wrote for an int field). Nothing for a value that is not
 * such JSON — a record too broken to name its type cannot say where a secret is (docs/evidence-and-privacy.md
 * "Secrets").
 */
export function secretsInRecordText(text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof value !== 'object' || value === null) return [];
  const { type, data } = value as { type?: unknown; data?: unknown };
  if (typeof type !== 'string' || typeof data !== 'object' || data === null) return [];
  return secretFieldsOf(typeLike(type)).flatMap((name) => {
    const given = (data as Record<string, unknown>)[name];
    if (typeof given === 'number' && Number.isFinite(given)) return [String(given)];
    return typeof given === 'string' && given !== '' ? [given] : [];
  });
}

const looseName = (type: string) => type.toLowerCase().replace(/[\s_-]/g, '');
/** The catalogue's type a spelling names, loosely (for masking only: decoding still refuses the spelling). */
const typeLike = (type: string): string => EVENT_TYPES.find((t) => looseName(t) === looseName(type)) ?? type;

/**
 * The bytes with every copy of each secret's UTF-8 bytes replaced by as many `*`: every length and offset kept, so an
 * Avro or Protobuf record still reads (with the secret masked), as for card numbers.
 */
export function maskSecretsInBytes(
  bytes: Uint8Array,
  secrets: readonly string[],
): { bytes: Uint8Array; masked: boolean } {
  const out = Buffer.from(bytes);
  let masked = false;
  for (const secret of secrets) {
    const needle = Buffer.from(secret, 'utf8');
    if (needle.length === 0) continue;
    for (let at = out.indexOf(needle); at !== -1; at = out.indexOf(needle, at + needle.length)) {
      out.fill(0x2a, at, at + needle.length);
      masked = true;
    }
  }
  return { bytes: out, masked };
}
