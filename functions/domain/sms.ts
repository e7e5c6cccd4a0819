/**
 * SMS segment arithmetic (3GPP TS 23.038): GSM-7 text fits 160 characters in one segment (153 per part when
 * concatenated, extension-table characters count twice); anything else goes as UCS-2, 70 (67) UTF-16 code units.
 */
const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM7_EXTENDED = '^{}\\[~]|€\f';
const basic = new Set(GSM7_BASIC);
const extended = new Set(GSM7_EXTENDED);

export interface SmsSize {
  readonly encoding: 'GSM-7' | 'UCS-2';
  /** Septets for GSM-7, UTF-16 code units for UCS-2. */
  readonly units: number;
  readonly segments: number;
}

export function smsSize(text: string): SmsSize {
  let septets = 0;
  for (const ch of text) {
    if (basic.has(ch)) septets += 1;
    else if (extended.has(ch)) septets += 2;
    else {
      const units = text.length;
      return { encoding: 'UCS-2', units, segments: units <= 70 ? 1 : Math.ceil(units / 67) };
    }
  }
  return { encoding: 'GSM-7', units: septets, segments: septets <= 160 ? 1 : Math.ceil(septets / 153) };
}

/** Characters outside GSM-7 that have a GSM-7 look-alike a reader takes for the same (spaces, quotes, dashes, "…"). */
const GSM_LOOKALIKES: readonly [RegExp, string][] = [
  [/[\u00A0\u2007\u2009\u202F]/g, ' '],
  [/\u2026/g, '...'],
  [/[\u2018\u2019]/g, "'"],
  [/[\u201C\u201D]/g, '"'],
  [/[\u2013\u2014]/g, '-'],
];

/**
 * The text with look-alikes replaced when that makes it GSM-7 (160 characters a segment instead of 70): a no-break
 * space in "BHD 1.500" or "9:15 AM" would otherwise turn a whole English SMS into UCS-2. Unchanged otherwise.
 */
export function gsmFriendly(text: string): string {
  let replaced = text;
  for (const [pattern, by] of GSM_LOOKALIKES) replaced = replaced.replace(pattern, by);
  return replaced !== text && smsSize(replaced).encoding === 'GSM-7' ? replaced : text;
}
