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
