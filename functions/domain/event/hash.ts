/**
 * The payloadHash: sha-256 of an event's meaning, not its spelling (docs/event.md "What the payloadHash covers"). Under
 * one eventId, the same hash is a duplicate and another one a conflict, so the hash must move exactly when the meaning
 * does — in particular never when a deploy adds an optional field to a type and the event does not have it.
 *
 * How `data` is covered:
 * - the fields each shipped type had when the hash learnt to leave absent fields out (POSITIONAL_FIELDS) are covered by
 *   position, an absent one as null: every hash stored before stays what it was;
 * - any other field of the definition — a field added since, or a field of a type added since — is covered by name,
 *   and only when the event has it: a field added to the definition adds nothing to the meaning of an event without
 *   it, wherever it stands in the definition.
 * Pure.
 */
import { createHash } from 'node:crypto';
import { dataNamesOf, definitionOf, type FieldDefinition } from '../catalogue.ts';
import type { Channel } from '../channels.ts';
import { CONTACT_FIELD_OF, type ContactField } from '../contact.ts';
import { readInstant } from '../moment.ts';
import { canonicalAmount } from '../money.ts';

/** Version of the payloadHash definition, stored as its prefix: a later definition must not be compared with it. */
export const PAYLOAD_HASH_VERSION = 'v2';

/**
 * The data names each shipped type's hash covers by position, in that order (a money field's currency after its
 * amount, a shared currency once per money field): the definitions as they were when the hash learnt to leave absent
 * fields out. Frozen — an edit here moves the stored hash of every event of the type (test/fixtures pins them); a
 * field added to a definition, or a type added to the catalogue, needs nothing here. A name no longer in its
 * definition keeps its slot, as null.
 */
export const POSITIONAL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  CardPayment: ['paymentId', 'amount', 'currency', 'merchantName', 'cardLast4', 'method'],
  DirectDebitUpcoming: ['mandateId', 'amount', 'currency', 'creditorName', 'collectionDate', 'accountLast4'],
  LoginFromNewDevice: ['sessionId', 'deviceName', 'location'],
  LowBalance: ['accountLast4', 'balance', 'currency', 'threshold', 'currency'],
  PasswordChanged: ['changeId', 'via', 'deviceName'],
  PaymentDue: ['billId', 'amount', 'currency', 'dueDate', 'minimumPayment', 'currency', 'payee'],
  StatementReady: ['accountLast4', 'periodEnd', 'closingBalance', 'currency'],
  TransferCompleted: ['transferId', 'amount', 'currency', 'counterpartyName', 'reason'],
  TransferFailed: ['transferId', 'amount', 'currency', 'counterpartyName', 'reason'],
};

/** The event as its hash reads it: contract.ts BankingEvent (declared here, so the hash needs nothing of the contract). */
export interface HashedEvent {
  readonly eventId: string;
  readonly type: string;
  readonly recipient: { readonly userId: string; readonly locale: string; readonly timeZone?: string } & Readonly<
    Partial<Record<ContactField, string>>
  >;
  readonly data: Readonly<Record<string, string>>;
  readonly channels?: readonly Channel[];
}

/** Everything a transfer's hashes are computed from: the event, its instant, and the contact points it refused. */
export interface HashInput {
  readonly event: HashedEvent;
  /** occurredAt as its UTC instant (readInstant's `iso`). */
  readonly instant: string;
  /** The contact points refused, as given: part of the event's meaning, so a resend of the same bad event is a duplicate. */
  readonly refusedGiven: Readonly<Partial<Record<ContactField, unknown>>>;
  /**
   * The contact points given empty and read as absent (spellings.ts). Before that reading they were refused as given,
   * so the hash of an event stored then covered `{"refused": ""}`: earlierPayloadHashes recomputes it.
   */
  readonly emptied?: Readonly<Partial<Record<ContactField, string>>>;
  /**
   * The keyed MAC of each secret field's value (functions/domain/secrets.ts): what the hash covers of a secret, never
   * the value itself — a plain hash of a six-digit code is undone by trying a million codes. Set by ingest before the
   * hash is stored; without it a secret counts as absent.
   */
  readonly secretMacs?: Readonly<Record<string, string>>;
}

export const versioned = (meaning: unknown[]) =>
  `${PAYLOAD_HASH_VERSION}:${createHash('sha256').update(JSON.stringify(meaning)).digest('hex')}`;

/**
 * The JSON array a transfer's hashes cover, in this order: the definition's name, eventId, type, occurredAt as its UTC
 * instant, userId, locale (negotiated), email, pushEndpointArn, phoneNumber (each normalised; a refused one as
 * `{"refused": <the value as given>}`; null when absent, and null for the channels in `blank`), the data's positional
 * fields, channels sorted (null when not listed), then — each only when present, so every hash stored before it
 * existed is unchanged — the recipient's timeZone in lower case (only when the runtime knows it; IANA names are
 * case-insensitive) and `{"data": {…}}`, the data's other fields by name.
 */
function meaningOf(h: HashInput, name: string, blank: readonly Channel[]): unknown[] {
  const { recipient: r } = h.event;
  const data = dataMeaning(h.event.type, h.event.data, h.secretMacs ?? {});
  return [
    name,
    h.event.eventId,
    h.event.type,
    h.instant,
    r.userId,
    r.locale,
    contactMeaning(h, 'EMAIL', blank),
    contactMeaning(h, 'PUSH', blank),
    contactMeaning(h, 'SMS', blank),
    ...data.positional,
    h.event.channels === undefined ? null : [...h.event.channels].sort(),
    ...(r.timeZone === undefined ? [] : [r.timeZone.toLowerCase()]),
    ...(data.named === undefined ? [] : [{ data: data.named }]),
  ];
}

/**
 * The data's part of the meaning, each value as its kind reads it: identifiers, display text (cleaned), dates and enum
 * values as they are; money as its decimal (trailing fraction zeros dropped) and its currency; a number as its
 * decimal; an instant as its UTC instant. By position for the names of POSITIONAL_FIELDS (null when absent), by name
 * for the others present (sorted, so the definition's order is free), or undefined when there are none.
 */
function dataMeaning(
  type: string,
  d: HashedEvent['data'],
  macs: Readonly<Record<string, string>>,
): { positional: unknown[]; named?: Record<string, unknown> } {
  const def = definitionOf(type);
  if (def === undefined) return { positional: [] };
  const kindOf = new Map<string, FieldDefinition['kind'] | 'currency'>();
  for (const field of def.data) {
    const [name, currency] = dataNamesOf(field);
    kindOf.set(name as string, field.kind);
    if (currency !== undefined) kindOf.set(currency, 'currency');
  }
  const hashedValue = (name: string): unknown => {
    const value = d[name];
    const kind = kindOf.get(name);
    if (value === undefined || kind === undefined) return null;
    if (kind === 'money' || kind === 'number') return canonicalAmount(value);
    if (kind === 'instant') return readInstant(value)?.iso ?? value;
    if (kind === 'secret') return macs[name] === undefined ? null : { mac: macs[name] };
    return value;
  };
  const positionalNames = POSITIONAL_FIELDS[type] ?? [];
  const others = [...kindOf.keys()].filter((name) => !positionalNames.includes(name) && d[name] !== undefined).sort();
  return {
    positional: positionalNames.map(hashedValue),
    ...(others.length === 0 ? {} : { named: Object.fromEntries(others.map((name) => [name, hashedValue(name)])) }),
  };
}

/** A contact point in the hash: normalised, `{refused: <as given>}`, or null (absent, or left out for a repair). */
function contactMeaning(h: HashInput, channel: Channel, blank: readonly Channel[]): unknown {
  const field = CONTACT_FIELD_OF[channel];
  if (blank.includes(channel)) return null;
  if (field in h.refusedGiven) return { refused: h.refusedGiven[field] };
  return h.event.recipient[field] ?? null;
}

/**
 * sha-256 of the event's meaning, not its spelling. Every spelling the contract accepted before other spellings were
 * read normalises to itself, and a field added to a definition adds nothing to an event without it, so a hash stored
 * before either is what it always was (test/unit/payload-hash-compat.test.ts, payload-hash-evolution.test.ts).
 */
export function payloadHash(h: HashInput): string {
  return versioned(meaningOf(h, `notifier.event.${PAYLOAD_HASH_VERSION}`, []));
}

/**
 * The payloadHashes the same event had under earlier readings of its spellings — an empty contact point was refused as
 * given before it was read as absent — so a producer's resend that crosses that deploy is still a duplicate, never an
 * EVENT_ID_CONFLICT. Empty for almost every event.
 */
export function earlierPayloadHashes(h: HashInput): string[] {
  if (h.emptied === undefined || Object.keys(h.emptied).length === 0) return [];
  const { emptied, ...rest } = h;
  return [payloadHash({ ...rest, refusedGiven: { ...h.refusedGiven, ...emptied } })];
}

/**
 * The event's meaning apart from the contact points of `channels`: equal for the event whose channels were refused and
 * the producer's corrected resend of it, which may differ only there (docs/event.md "A refused channel"). Its own
 * definition name, so it never equals a payloadHash.
 */
export function repairHash(h: HashInput, channels: readonly Channel[]): string {
  return versioned(meaningOf(h, `notifier.event.${PAYLOAD_HASH_VERSION}.repair`, channels));
}
