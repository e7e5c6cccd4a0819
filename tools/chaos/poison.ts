/**
 * Poison records: each a Kafka record value that must be quarantined with the reason written next to it, while the
 * records after it keep flowing. `make` receives a unique suffix so every poison record is a distinct record. A bad
 * contact point is poison only when it is the event's only channel (every channel refused); beside other channels it
 * refuses its own channel alone (INPUT_CASES).
 *
 * Display-text cases: third-party text (counterpartyName, reason) with controls, bidi, separators, ill-formed or
 * over-long content. Their expected outcome is the opposite of poison: accepted, and sent with the cleaned text.
 *
 * A string with a lone surrogate goes through JSON.stringify as the escape "\ud800", as a producer's JSON carries it.
 */
import type { Channel } from '../../functions/domain/channels.ts';
import type { DisplayField, RejectionReason } from '../../functions/domain/event/contract.ts';
import type { ChannelRefusalReason } from '../../functions/domain/routing.ts';

const ARN = 'arn:aws:sns:us-east-1:123456789012:endpoint/GCM/app/0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e4f';
const base = (id: string) => ({
  eventId: id,
  type: 'TransferCompleted',
  occurredAt: '2026-11-30T09:15:00Z',
  recipient: {
    userId: 'u-1',
    locale: 'en',
    email: 'poison@example.com',
    pushEndpointArn: ARN,
    phoneNumber: '+14155550100',
  },
  data: { transferId: 't-1', amount: '10.00', currency: 'USD', counterpartyName: 'Pat' },
});
type Event = ReturnType<typeof base> & Record<string, unknown>;
const json = (f: (e: Event) => unknown) => (id: string) => JSON.stringify(f(base(id) as Event));
const edit = (f: (e: Event) => void) =>
  json((e) => {
    f(e);
    return e;
  });
/** An edit of an event whose only contact point is the one named: a bad one refuses every channel. */
const only = (field: 'email' | 'pushEndpointArn' | 'phoneNumber', f: (e: Event) => void) =>
  edit((e) => {
    const r = e.recipient as Record<string, unknown>;
    for (const other of ['email', 'pushEndpointArn', 'phoneNumber']) if (other !== field) delete r[other];
    f(e);
  });

export interface PoisonKind {
  readonly kind: string;
  readonly reason: RejectionReason;
  readonly make: (uniqueId: string) => string | Buffer | null;
}

export const POISON_KINDS: readonly PoisonKind[] = [
  { kind: 'tombstone', reason: 'NO_VALUE', make: () => null },
  {
    kind: 'invalid UTF-8',
    reason: 'INVALID_ENCODING',
    make: (id) =>
      Buffer.concat([Buffer.from(`{"eventId":"${id}","x":"`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
  },
  { kind: 'lone surrogate bytes', reason: 'INVALID_ENCODING', make: () => Buffer.from([0xed, 0xa0, 0x80]) },
  { kind: 'invalid JSON', reason: 'INVALID_JSON', make: (id) => `{eventId: ${id}}` },
  {
    kind: 'duplicate key: two amounts',
    reason: 'INVALID_JSON',
    make: (id) => json((e) => e)(id).replace('"amount":"10.00"', '"amount":"1.00","amount":"1000.00"'),
  },
  { kind: 'truncated JSON', reason: 'INVALID_JSON', make: (id) => json((e) => e)(id).slice(0, 60) },
  { kind: 'empty object', reason: 'INVALID_EVENT_ID', make: () => '{}' },
  { kind: 'JSON array', reason: 'SCHEMA_VIOLATION', make: () => '[]' },
  { kind: 'JSON string', reason: 'SCHEMA_VIOLATION', make: (id) => JSON.stringify(id) },
  { kind: 'JSON null', reason: 'SCHEMA_VIOLATION', make: () => 'null' },
  { kind: 'eventId of wrong type', reason: 'INVALID_EVENT_ID', make: json((e) => ({ ...e, eventId: 42 })) },
  {
    kind: 'eventId with a slash',
    reason: 'INVALID_EVENT_ID',
    make: (id) => json((e) => ({ ...e, eventId: `${id}/x` }))(id),
  },
  { kind: 'missing type', reason: 'SCHEMA_VIOLATION', make: edit((e) => delete (e as Record<string, unknown>).type) },
  { kind: 'unknown type', reason: 'UNKNOWN_TYPE', make: edit((e) => (e.type = 'LoanApproved')) },
  { kind: 'unknown channel', reason: 'UNKNOWN_CHANNEL', make: edit((e) => (e.channels = ['EMAIL', 'PIGEON'])) },
  { kind: 'channels not an array', reason: 'SCHEMA_VIOLATION', make: edit((e) => (e.channels = 'EMAIL')) },
  {
    kind: 'missing contact for a listed channel',
    reason: 'MISSING_CONTACT',
    make: edit((e) => {
      e.channels = ['SMS'];
      delete (e.recipient as Record<string, unknown>).phoneNumber;
    }),
  },
  {
    kind: 'bad email, the only contact point',
    reason: 'INVALID_CONTACT',
    make: only('email', (e) => (e.recipient.email = 'poison@@example')),
  },
  {
    kind: 'email SES cannot send to, the only contact point',
    reason: 'UNSENDABLE_ADDRESS',
    make: only('email', (e) => (e.recipient.email = '毒@example.com')),
  },
  {
    kind: 'phone without a country code, the only contact point',
    reason: 'INVALID_CONTACT',
    make: only('phoneNumber', (e) => (e.recipient.phoneNumber = '03-1234-5678')),
  },
  {
    kind: 'bad endpoint ARN, the only contact point',
    reason: 'INVALID_CONTACT',
    make: only('pushEndpointArn', (e) => (e.recipient.pushEndpointArn = 'arn:aws:sns:us-east-1:1:topic')),
  },
  {
    kind: 'float money',
    reason: 'INVALID_AMOUNT',
    make: edit((e) => ((e.data as Record<string, unknown>).amount = 10.5)),
  },
  { kind: 'scientific money', reason: 'INVALID_AMOUNT', make: edit((e) => (e.data.amount = '1e3')) },
  { kind: 'unknown currency', reason: 'INVALID_AMOUNT', make: edit((e) => (e.data.currency = 'ZZZ')) },
  {
    kind: 'missing recipient',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => delete (e as Record<string, unknown>).recipient),
  },
  { kind: 'missing data', reason: 'SCHEMA_VIOLATION', make: edit((e) => delete (e as Record<string, unknown>).data) },
  {
    kind: 'wrong type for userId',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => ((e.recipient as Record<string, unknown>).userId = { id: 1 })),
  },
  { kind: 'bad occurredAt', reason: 'SCHEMA_VIOLATION', make: edit((e) => (e.occurredAt = '30/11/2026')) },
  {
    kind: 'occurredAt without an offset (whose local time?)',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => (e.occurredAt = '2026-11-30T09:15:00')),
  },
  {
    kind: 'PreferencesUpdated dated next year',
    reason: 'SCHEMA_VIOLATION',
    make: (id) =>
      JSON.stringify({
        eventId: id,
        type: 'PreferencesUpdated',
        occurredAt: '2099-01-01T00:00:00Z',
        recipient: { userId: `u-${id}` },
        data: { optOut: ['SMS'] },
      }),
  },
  { kind: 'TransferFailed without reason', reason: 'SCHEMA_VIOLATION', make: edit((e) => (e.type = 'TransferFailed')) },
  { kind: 'NUL in an identifier', reason: 'SCHEMA_VIOLATION', make: edit((e) => (e.data.transferId = 't\u0000')) },
  { kind: 'oversized value', reason: 'TOO_LARGE', make: edit((e) => (e.data.counterpartyName = 'x'.repeat(70_000))) },
  {
    kind: 'deep nesting',
    reason: 'INVALID_JSON',
    make: () => `${'['.repeat(100_000)}${']'.repeat(100_000)}`.slice(0, 60_000),
  },
  {
    kind: 'deep nesting in a field',
    reason: 'SCHEMA_VIOLATION',
    make: (id) => json((e) => ({ ...e, data: JSON.parse(`${'{"a":'.repeat(500)}1${'}'.repeat(500)}`) }))(id),
  },
  // ── Strict fields: identifiers and addresses never carry ill-formed or invisible characters ──
  {
    kind: 'lone surrogate in the eventId',
    reason: 'INVALID_EVENT_ID',
    make: (id) => json((e) => ({ ...e, eventId: `${id}\ud800` }))(id),
  },
  {
    kind: 'lone surrogate in the userId',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => (e.recipient.userId = 'u\ud800')),
  },
  {
    kind: 'lone low surrogate in the transferId',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => (e.data.transferId = '\udc00t')),
  },
  {
    kind: 'noncharacter in the transferId',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => (e.data.transferId = 't\uffff')),
  },
  {
    kind: 'bidi override in the transferId',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => (e.data.transferId = 't\u202e1')),
  },
  {
    kind: 'line separator in the userId',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => (e.recipient.userId = 'u\u2028')),
  },
  {
    kind: 'lone surrogate in the email, the only contact point',
    reason: 'INVALID_CONTACT',
    make: only('email', (e) => (e.recipient.email = 'poison\ud800@example.com')),
  },
  {
    kind: 'lone surrogate in occurredAt',
    reason: 'SCHEMA_VIOLATION',
    make: edit((e) => (e.occurredAt = '2026-11-30T09:15:00\ud800Z')),
  },
  // ── Money: more fraction digits than the currency's ISO 4217 minor unit, or not money at all ──
  { kind: 'sub-cent USD', reason: 'INVALID_AMOUNT', make: edit((e) => (e.data.amount = '0.004')) },
  {
    kind: 'fractional JPY',
    reason: 'INVALID_AMOUNT',
    make: edit((e) => Object.assign(e.data, { amount: '10000.5', currency: 'JPY' })),
  },
  {
    kind: '15 digits with 4 decimals in USD',
    reason: 'INVALID_AMOUNT',
    make: edit((e) => (e.data.amount = '999999999999999.9999')),
  },
  {
    kind: '4 decimals in BHD (minor unit 3)',
    reason: 'INVALID_AMOUNT',
    make: edit((e) => Object.assign(e.data, { amount: '1.2345', currency: 'BHD' })),
  },
  {
    kind: '5 decimals in CLF (minor unit 4)',
    reason: 'INVALID_AMOUNT',
    make: edit((e) => Object.assign(e.data, { amount: '1.23456', currency: 'CLF' })),
  },
  { kind: '16 integer digits', reason: 'INVALID_AMOUNT', make: edit((e) => (e.data.amount = '1234567890123456')) },
  {
    kind: 'gold is not money',
    reason: 'INVALID_AMOUNT',
    make: edit((e) => Object.assign(e.data, { amount: '1', currency: 'XAU' })),
  },
];

/**
 * Producers' inputs that are not poison (docs/event.md "Spellings", "A refused channel"): applied to a generated event
 * that has all three contact points (their addresses follow the eventId, so the witness can tie every send back), the
 * channel list removed unless the case writes one. A spelling with one reading is accepted and sent as the event it
 * means, to the normalised address; a bad contact point refuses its channel alone (`refuses`): REFUSED, never sent,
 * and the event's other channels are sent.
 */
export interface InputCase {
  readonly kind: string;
  /** Rewrites the event (a copy) as the producer would. */
  readonly apply: (event: Record<string, unknown>) => void;
  readonly refuses?: { readonly channel: Channel; readonly reason: ChannelRefusalReason };
}

type Recipient = Record<string, string>;
const recipientOf = (e: Record<string, unknown>) => e.recipient as Recipient;

export const INPUT_CASES: readonly InputCase[] = [
  {
    kind: 'language tag as Java writes it',
    apply: (e) => {
      const r = recipientOf(e);
      r.locale = r.locale === 'ja' ? 'ja_JP' : 'en_US';
    },
  },
  { kind: 'a language the brand does not write', apply: (e) => (recipientOf(e).locale = 'pt-BR') },
  { kind: 'a time zone the runtime does not know', apply: (e) => (recipientOf(e).timeZone = 'Mars/Olympus_Mons') },
  {
    kind: 'phone number in E.123 notation',
    apply: (e) => {
      const r = recipientOf(e);
      const d = (r.phoneNumber as string).slice(2);
      r.phoneNumber = `+1 (${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6)}`;
    },
  },
  {
    kind: 'phone number with the 00 international prefix',
    apply: (e) => (recipientOf(e).phoneNumber = `00 ${(recipientOf(e).phoneNumber as string).slice(1)}`),
  },
  {
    kind: 'email domain in Unicode',
    apply: (e) => {
      const r = recipientOf(e);
      r.email = (r.email as string).replace('@example.com', '@例え.jp');
    },
  },
  { kind: 'channels in any case, repeated', apply: (e) => (e.channels = ['email', 'Push', 'SMS', 'EMAIL']) },
  { kind: 'an empty channel list: recorded, nothing sent', apply: (e) => (e.channels = []) },
  {
    kind: 'amount with a + and leading zeros, currency in lower case',
    apply: (e) => {
      const data = e.data as Record<string, string>;
      data.amount = ` +000${data.amount} `;
      data.currency = (data.currency as string).toLowerCase();
    },
  },
  {
    kind: 'RFC 3339 in lower case with an offset without colon',
    apply: (e) => (e.occurredAt = '2026-11-30t18:15:00+0900'),
  },
  {
    kind: 'phone number without a country code',
    apply: (e) => (recipientOf(e).phoneNumber = '090-1234-5678'),
    refuses: { channel: 'SMS', reason: 'INVALID_CONTACT' },
  },
  {
    kind: 'email SES cannot send to (a non-ASCII local part)',
    apply: (e) => {
      const r = recipientOf(e);
      r.email = `山田.${r.email as string}`;
    },
    refuses: { channel: 'EMAIL', reason: 'UNSENDABLE_ADDRESS' },
  },
  {
    kind: 'malformed endpoint ARN',
    apply: (e) => (recipientOf(e).pushEndpointArn = 'arn:aws:sns:us-east-1:123456789012:topic/x'),
    refuses: { channel: 'PUSH', reason: 'INVALID_CONTACT' },
  },
  {
    kind: 'a listed channel without its contact point',
    apply: (e) => {
      delete recipientOf(e).phoneNumber;
      e.channels = ['EMAIL', 'SMS'];
    },
    refuses: { channel: 'SMS', reason: 'MISSING_CONTACT' },
  },
];

export interface DisplayTextCase {
  readonly kind: string;
  readonly field: DisplayField;
  readonly value: string;
}

/** Expected: accepted, every notification sent once, the stored and sent text cleaned (cleanDisplayText). */
export const DISPLAY_TEXT_CASES: readonly DisplayTextCase[] = [
  { kind: 'CR/LF header injection in a name', field: 'counterpartyName', value: 'Pat\r\nBcc: all@example.com' },
  { kind: 'CR/LF in a reason', field: 'reason', value: 'limit\r\nSubject: you won' },
  { kind: 'NUL in a name', field: 'counterpartyName', value: 'Pat\u0000Lee' },
  { kind: 'ESC sequence in a name', field: 'counterpartyName', value: '\u001b[31mred' },
  { kind: 'bidi override in a name', field: 'counterpartyName', value: '\u202egnp.exe Lee' },
  { kind: 'bidi isolates in a reason', field: 'reason', value: '\u2067limit\u2069 \u200freached' },
  { kind: 'line separator in a name', field: 'counterpartyName', value: 'Pat\u2028Lee' },
  { kind: 'paragraph separator in a reason', field: 'reason', value: 'daily\u2029limit' },
  { kind: 'lone surrogate in a name', field: 'counterpartyName', value: 'Pat\ud800' },
  { kind: 'noncharacter in a reason', field: 'reason', value: 'limit\uffff' },
  { kind: 'name too long', field: 'counterpartyName', value: 'n'.repeat(141) },
  { kind: 'reason too long', field: 'reason', value: 'r '.repeat(300) },
  { kind: 'combining marks stacked on a name', field: 'counterpartyName', value: `Z${'\u0301\u0316'.repeat(100)}algo` },
  { kind: 'decomposed accents in a name', field: 'counterpartyName', value: 'Jose\u0301' },
  { kind: 'zero-width characters in a name', field: 'counterpartyName', value: 'P\u200ba\ufefft' },
  { kind: 'name of controls only', field: 'counterpartyName', value: '\r\n\u0000\u202e' },
  { kind: 'reason of controls only', field: 'reason', value: '\u2028\u0007' },
];
