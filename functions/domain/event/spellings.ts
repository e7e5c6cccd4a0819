/**
 * The spellings of an event with exactly one reading, read to their canonical form before the schema sees them
 * (docs/event.md says which RFC each follows): language tags, time zones, contact points, channel names, amounts,
 * currency codes, RFC 3339 date-times; optional fields given as JSON null read as absent. A field it cannot read is
 * left as given for the schema to refuse — except a contact point, which is taken out and refused for its own channel,
 * and a presentation hint, which falls back. Pure.
 */
import { type Definition, dataNamesOf, definitionOf } from '../catalogue.ts';
import { CHANNELS } from '../channels.ts';
import { CONTACT_FIELD_OF, CONTACT_READERS, type ContactField } from '../contact.ts';
import { negotiateLocale } from '../locale.ts';
import { readInstant, readTimeZone } from '../moment.ts';
import { normaliseAmount, normaliseCurrency } from '../money.ts';
import type { ContactRefusal, Fallback } from './contract.ts';

/**
 * Optional fields given as JSON null, read as absent. Many producers write null for an absent optional (Jackson's and
 * System.Text.Json's defaults): a `"counterpartyName": null` or `"phoneNumber": null` is not bad input, and refusing
 * it would drop the customer's notice. Absent and null hash alike (payloadHash writes null for both). Required fields
 * stay required: a null eventId, type or amount is still rejected.
 */
const NULLABLE_RECIPIENT = ['locale', 'email', 'pushEndpointArn', 'phoneNumber', 'timeZone'];
/** Of a type's data: its optional fields, and its display text (a required one null is then "needs data.<name>"). */
const nullableData = (def: Definition | undefined): string[] =>
  (def?.data ?? []).filter((f) => !f.required || f.kind === 'text').flatMap(dataNamesOf);
/**
 * Of a type's data: its optional fields that are not display text, where "" (or spaces) has one reading — absent — as
 * null does. Display text keeps its blank: a blank name is said without (display-text.ts); a required field stays
 * required.
 */
const blankAsAbsentData = (def: Definition | undefined): string[] =>
  (def?.data ?? []).filter((f) => !f.required && f.kind !== 'text').flatMap(dataNamesOf);
const isBlank = (value: unknown): value is string => typeof value === 'string' && value.trim() === '';
export function withoutNullOptionals(raw: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...raw };
  if (copy.channels === null) delete copy.channels;
  const def = typeof raw.type === 'string' ? definitionOf(raw.type) : undefined;
  const nullable = { recipient: NULLABLE_RECIPIENT, data: nullableData(def) };
  for (const [part, fields] of Object.entries(nullable)) {
    const value = copy[part];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const inner: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const field of fields) if (inner[field] === null) delete inner[field];
    copy[part] = inner;
  }
  const data = objectAt(copy, 'data');
  if (data !== undefined) for (const field of blankAsAbsentData(def)) if (isBlank(data[field])) delete data[field];
  return copy;
}

export const objectAt = (raw: Record<string, unknown>, key: string): Record<string, unknown> | undefined => {
  const value = raw[key];
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
};

export interface Spellings {
  /** The event with every spelling read: what zod validates. */
  readonly raw: Record<string, unknown>;
  readonly normalised: string[];
  readonly fallbacks: Fallback[];
  readonly contactRefusals: ContactRefusal[];
  readonly refusedGiven: Partial<Record<ContactField, unknown>>;
  /** The contact points given empty (or blank), read as absent: the hash's earlier reading refused them as given. */
  readonly emptied: Partial<Record<ContactField, string>>;
}

/**
 * Reads every spelling with one reading to its canonical form (docs/event.md says which RFC each follows), in the
 * copy withoutNullOptionals made. A field it cannot read is left as given for zod to refuse — except a contact point,
 * which is taken out and refused for its own channel, and a presentation hint, which falls back.
 */
export function readSpellings(raw: Record<string, unknown>, def: Definition | undefined): Spellings {
  const normalised: string[] = [];
  const fallbacks: Fallback[] = [];
  const contactRefusals: ContactRefusal[] = [];
  const refusedGiven: Partial<Record<ContactField, unknown>> = {};
  const emptied: Partial<Record<ContactField, string>> = {};
  readOccurredAt(raw, normalised);
  const recipient = objectAt(raw, 'recipient');
  if (recipient !== undefined) {
    const locale = negotiateLocale(recipient.locale);
    if (locale.how === 'normalised') normalised.push('recipient.locale');
    if (locale.how === 'fallback') fallbacks.push('recipient.locale');
    recipient.locale = locale.locale;
    const zone = readTimeZone(recipient.timeZone);
    if (zone.how === 'normalised') normalised.push('recipient.timeZone');
    if (zone.how === 'fallback') fallbacks.push('recipient.timeZone');
    if (zone.zone === undefined) delete recipient.timeZone;
    else recipient.timeZone = zone.zone;
    for (const channel of CHANNELS) {
      const field = CONTACT_FIELD_OF[channel];
      const given = recipient[field];
      if (given === undefined) continue;
      // An empty contact point has one reading: the producer has none (proto3 and many serializers write "" for an
      // unset string). Absent, like null — not a bad address refused on its channel.
      if (isBlank(given)) {
        delete recipient[field];
        emptied[field] = given;
        normalised.push(`recipient.${field}`);
        continue;
      }
      const contact = CONTACT_READERS[field](given);
      if (contact.ok) {
        recipient[field] = contact.address;
        if (contact.normalised) normalised.push(`recipient.${field}`);
      } else {
        delete recipient[field];
        refusedGiven[field] = given;
        contactRefusals.push({
          channel,
          field,
          reason: contact.problem,
          detail: `${contact.rule} (at recipient.${field})`,
        });
      }
    }
  }
  const data = objectAt(raw, 'data');
  if (data !== undefined && def !== undefined) readDataSpellings(data, def, normalised);
  const channels = readChannelList(raw.channels);
  if (channels !== raw.channels) {
    raw.channels = channels;
    normalised.push('channels');
  }
  // Most events have nothing to report: the shared empties are all they keep (a batch holds its admissions).
  return {
    raw,
    normalised: normalised.length === 0 ? NONE : normalised,
    fallbacks: fallbacks.length === 0 ? NONE : fallbacks,
    contactRefusals: contactRefusals.length === 0 ? NONE : contactRefusals,
    refusedGiven: contactRefusals.length === 0 ? NOTHING_REFUSED : refusedGiven,
    emptied: Object.keys(emptied).length === 0 ? NOTHING_EMPTIED : emptied,
  };
}

/**
 * The spellings of `data` with one reading, by each field's kind: money as for the transfers' amount (spaces, a
 * leading +, leading zeros, a bare point) and its currency in any case; an instant as occurredAt; an enum value in
 * any case with surrounding spaces; a number given as a JSON number that is a non-negative safe integer (one reading:
 * its digits). Anything else is left for zod to refuse.
 */
function readDataSpellings(data: Record<string, unknown>, def: Definition, normalised: string[]): void {
  const set = (name: string, value: unknown) => {
    if (value === data[name]) return;
    data[name] = value;
    normalised.push(`data.${name}`);
  };
  for (const field of def.data) {
    const value = data[field.name];
    if (field.kind === 'money') {
      if (typeof value === 'string') set(field.name, normaliseAmount(value));
      const currency = data[field.currencyField as string];
      if (typeof currency === 'string') set(field.currencyField as string, normaliseCurrency(currency));
    } else if (field.kind === 'instant' && typeof value === 'string') {
      const instant = readInstant(value);
      if (instant !== undefined) set(field.name, instant.spelling);
    } else if (field.kind === 'enum' && typeof value === 'string') {
      const upper = value.trim().toUpperCase();
      if (field.values?.includes(upper)) set(field.name, upper);
    } else if (field.kind === 'number') {
      if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) set(field.name, String(value));
      else if (typeof value === 'string') set(field.name, value.trim());
    }
  }
}

/** Shared and frozen: never written to, so one instance serves every event. */
export const NONE = Object.freeze([]) as never[];
const NOTHING_REFUSED: Partial<Record<ContactField, unknown>> = Object.freeze({});
const NOTHING_EMPTIED: Partial<Record<ContactField, string>> = Object.freeze({});

export function readOccurredAt(raw: Record<string, unknown>, normalised: string[]): void {
  if (typeof raw.occurredAt !== 'string') return;
  const instant = readInstant(raw.occurredAt);
  if (instant === undefined || instant.spelling === raw.occurredAt) return;
  raw.occurredAt = instant.spelling;
  normalised.push('occurredAt');
}

/**
 * A channel list of strings, read as the set it means: names in any case, surrounding spaces trimmed, a repeated name
 * once, in the order first given. The same array when nothing changed; anything that is not a list of names is
 * returned as it is, for the schema to refuse.
 */
export function readChannelList(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  // As the contract writes it (known names, upper case, each once): nothing to read, nothing to allocate.
  if (list.length <= CHANNELS.length && list.every((c, i) => CHANNELS.includes(c) && list.indexOf(c) === i))
    return list;
  if (!list.every((c) => typeof c === 'string')) return list;
  const names = list.map((c: string) => {
    const name = c.trim();
    return /^[A-Za-z]+$/.test(name) ? name.toUpperCase() : c;
  });
  const set = [...new Set(names)];
  return set.length === list.length && set.every((c, i) => c === list[i]) ? list : set;
}

/**
 * The UTC instant of an RFC 3339 timestamp (moment.ts readInstant): "2026-11-30T18:15:00.1230+09:00" →
 * "2026-11-30T09:15:00.123Z". Undefined for a timestamp that names no real instant.
 */
export function utcInstant(text: string): { iso: string; epochMs: number } | undefined {
  const instant = readInstant(text);
  return instant === undefined ? undefined : { iso: instant.iso, epochMs: instant.epochMs };
}
