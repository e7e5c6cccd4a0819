/**
 * The moment of a transfer: read from the producer's RFC 3339 timestamp (its UTC instant, every fraction digit kept),
 * and shown as the customer reads it: in their time zone, in their locale's own date-time format
 * ("November 30, 2026 at 6:15 PM JST", "2026年11月30日 18:15 JST"). Pure.
 */

/**
 * RFC 3339 §5.6 date-time, with the spellings of it that have one reading: `t`/`z` in either case (§5.6 NOTE: they
 * "may alternatively be lower case"), a space for the `T` (§5.6 NOTE: "for the sake of readability"), a comma before
 * the fraction (ISO 8601 §4.2.2.4) and an offset without its colon (`+0900`, ISO 8601's basic format, which Java's
 * SimpleDateFormat and many loggers write), and a time without its seconds when they are zero (ISO 8601's reduced
 * precision: what Java's OffsetDateTime.toString() writes for 18:15:00). A timestamp without an offset is refused: it
 * has one reading per reader (whose local time?), so two or more; so is a number (epoch seconds or milliseconds?).
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

export interface Instant {
  /** The UTC instant as RFC 3339 text, every fraction digit given kept (trailing zeros trimmed): what the hash covers. */
  readonly iso: string;
  /** Epoch milliseconds (a leap second counts as the last millisecond before it: POSIX time has no 60th second). */
  readonly epochMs: number;
  /** The producer's local time and offset, spelled as RFC 3339 writes it (upper-case T and Z, `±hh:mm`, a dot). */
  readonly spelling: string;
}

/**
 * The instant of an RFC 3339 timestamp: "2026-11-30T18:15:00.1230+09:00" → "2026-11-30T09:15:00.123Z". Not through
 * Date alone, which keeps milliseconds only and knows no leap second. Undefined for a timestamp that names no real
 * instant (February 30th, 25:00, an offset beyond ±23:59, a second 60 anywhere but the last minute of a UTC month).
 *
 * A leap second (`23:59:60Z`, or the same instant in another offset; RFC 3339 §5.7) is the 61st second of the last
 * minute of a month: its UTC text keeps `:60` (so it is never the same instant as `:59` in the hash) and it is shown
 * as the minute it belongs to, 23:59 UTC (its epochMs is that minute's last millisecond).
 */
export function readInstant(text: string): Instant | undefined {
  // Admission reads one event's timestamp several times (its spelling, the schema, the hash): the last one is kept.
  if (text === lastRead.text) return lastRead.instant;
  const instant = parseInstant(text);
  lastRead = { text, instant };
  return instant;
}
let lastRead: { text: string | undefined; instant: Instant | undefined } = { text: undefined, instant: undefined };

function parseInstant(text: string): Instant | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s = '00', fraction = '', zulu, sign = '+', oh = '00', om = '00'] = m;
  const [year, month, day] = [Number(y), Number(mo), Number(d)];
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || second > 60 || Number(oh) > 23 || Number(om) > 59) return undefined;
  const offsetMinutes = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const minuteMs =
    daysFromCivil(year, month, day) * 86_400_000 + (Number(h) * 60 + Number(mi) - offsetMinutes) * 60_000;
  const digits = fraction.replace(/0+$/, '');
  // Already RFC 3339's own spelling (upper-case T and Z, a dot, a colon in the offset): the text itself.
  const canonical =
    text[10] === 'T' &&
    text[16] === ':' &&
    zulu !== 'z' &&
    text[19] !== ',' &&
    (zulu === 'Z' || text[text.length - 3] === ':');
  const spelling = canonical
    ? text
    : `${y}-${mo}-${d}T${h}:${mi}:${s}${fraction ? `.${fraction}` : ''}${zulu ? 'Z' : `${sign}${oh}:${om}`}`;
  if (second === 60) {
    const utcMinute = new Date(minuteMs);
    const lastMinuteOfMonth =
      utcMinute.getUTCHours() === 23 &&
      utcMinute.getUTCMinutes() === 59 &&
      utcMinute.getUTCDate() === daysInMonth(utcMinute.getUTCFullYear(), utcMinute.getUTCMonth() + 1);
    if (!lastMinuteOfMonth) return undefined;
    const iso = `${utcMinute.toISOString().slice(0, 17)}60${digits ? `.${digits}` : ''}Z`;
    return { iso, epochMs: minuteMs + 59_999, spelling };
  }
  const wholeMs = minuteMs + second * 1000;
  const iso = `${new Date(wholeMs).toISOString().slice(0, -5)}${digits ? `.${digits}` : ''}Z`;
  return { iso, epochMs: wholeMs + Number(fraction.slice(0, 3).padEnd(3, '0')), spelling };
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (y: number, m: number) => (m === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31);

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-compatible low-level date algorithms"). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/**
 * An IANA zone name's shape (Area/Location, Etc/GMT+9, UTC). Offsets such as "+09:00" are refused: newer JavaScript
 * engines accept them as time zones and older ones do not, so ingest would judge the same event differently by runtime.
 */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]{0,31}(?:\/[A-Za-z0-9_+-]{1,32}){0,2}$/;

const known = new Map<string, string>();
const KNOWN_LIMIT = 2048;

/**
 * The runtime's primary zone names by their lower-case spelling, and UTC (ECMA-402 names it so, and lists it apart
 * from the IANA zones): a name is looked up here before a DateTimeFormat is made for it, since the first one made
 * loads ICU's date-format data, tens of milliseconds of a cold start that shows no date (the sweeper's, feedback's,
 * ingest's validating its brand). Built on first use; an alias not here (US/Eastern) is resolved as before.
 */
let primaryZones: ReadonlyMap<string, string> | undefined;
const primaryZone = (name: string): string | undefined => {
  primaryZones ??= new Map([...Intl.supportedValuesOf('timeZone'), 'UTC'].map((zone) => [zone.toLowerCase(), zone]));
  return primaryZones.get(name.toLowerCase());
};

/**
 * The zone as the runtime's time-zone database names it ("asia/tokyo" → "Asia/Tokyo"), or undefined when the name is
 * not one (https://tc39.es/ecma402/#sec-time-zone-names: names are matched case-insensitively).
 */
export function canonicalTimeZone(name: string): string | undefined {
  const cached = known.get(name);
  if (cached !== undefined) return cached;
  if (!ZONE_NAME.test(name)) return undefined;
  let canonical: string;
  try {
    canonical = primaryZone(name) ?? new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  if (known.size < KNOWN_LIMIT) known.set(name, canonical);
  return canonical;
}

/**
 * The recipient's time zone as the event gives it: `zone` when the runtime knows it (kept as given, surrounding
 * spaces trimmed), none when absent. A name the runtime does not know — a typo, an offset such as `+09:00`, a zone
 * newer than the runtime's database — is a presentation hint without a reading here: the notice is shown in the
 * locale's default zone (`fallback`, counted), never silenced.
 */
export function readTimeZone(given: unknown): { zone?: string; how: 'exact' | 'normalised' | 'fallback' } {
  if (given === undefined) return NO_ZONE;
  if (typeof given !== 'string') return UNKNOWN_ZONE;
  const zone = given.trim();
  if (canonicalTimeZone(zone) === undefined) return UNKNOWN_ZONE;
  return { zone, how: zone === given ? 'exact' : 'normalised' };
}

const NO_ZONE = { how: 'exact' } as const;
const UNKNOWN_ZONE = { how: 'fallback' } as const;

const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * The instant (epoch ms) as a date and time with the zone's abbreviation, in the BCP 47 locale's format.
 * Undefined for a zone the runtime does not know (a notification then shows no time rather than a wrong one).
 */
export function formatMoment(epochMs: number, intlLocale: string, timeZone: string): string | undefined {
  const zone = canonicalTimeZone(timeZone);
  if (zone === undefined) return undefined;
  const key = `${intlLocale}|${zone}`;
  let format = formats.get(key);
  if (format === undefined) {
    format = new Intl.DateTimeFormat(intlLocale, {
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZone: zone,
      timeZoneName: 'short',
      numberingSystem: 'latn',
    });
    formats.set(key, format);
  }
  return format.format(epochMs);
}
