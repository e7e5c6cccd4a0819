/**
 * The moment of a transfer as the customer reads it: in their time zone, in their locale's own date-time format
 * ("November 30, 2026 at 6:15 PM JST", "2026年11月30日 18:15 JST"). Pure.
 */

/**
 * An IANA zone name's shape (Area/Location, Etc/GMT+9, UTC). Offsets such as "+09:00" are refused: newer JavaScript
 * engines accept them as time zones and older ones do not, so ingest would judge the same event differently by runtime.
 */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]{0,31}(?:\/[A-Za-z0-9_+-]{1,32}){0,2}$/;

const known = new Map<string, string>();
const KNOWN_LIMIT = 2048;

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
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  if (known.size < KNOWN_LIMIT) known.set(name, canonical);
  return canonical;
}

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
