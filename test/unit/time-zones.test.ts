import { describe, expect, it } from 'vitest';
import { canonicalTimeZone } from '../../functions/domain/moment.ts';

/** What the runtime's DateTimeFormat makes of a name: the reading canonicalTimeZone gives, found without making one. */
const dateFormatReading = (name: string): string | undefined => {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
};

describe('a time zone name, read as the runtime reads it', () => {
  it('every zone the runtime lists, and UTC, in any case: the name DateTimeFormat gives it', () => {
    for (const zone of [...Intl.supportedValuesOf('timeZone'), 'UTC']) {
      for (const spelling of [zone, zone.toLowerCase(), zone.toUpperCase()]) {
        expect(canonicalTimeZone(spelling), spelling).toBe(dateFormatReading(spelling));
      }
    }
  });

  it('an alias is read as DateTimeFormat reads it; an offset, a typo or an unknown zone is not a zone', () => {
    for (const name of ['US/Eastern', 'Etc/UTC', 'GMT', 'Asia/Calcutta', 'Etc/GMT+9', 'asia/calcutta']) {
      expect(canonicalTimeZone(name), name).toBe(dateFormatReading(name));
      expect(canonicalTimeZone(name), name).toBeDefined();
    }
    for (const name of ['+09:00', 'Asia/Tokio', 'Mars/Olympus_Mons', ''])
      expect(canonicalTimeZone(name), name).toBeUndefined();
  });
});
