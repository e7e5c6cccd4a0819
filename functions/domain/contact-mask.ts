/**
 * A contact point as support staff see it by default: enough to confirm it with the customer ("the address starting
 * with a, at example.com"; "the number ending 0123"; "an Android device") and never enough to write to it. The full
 * value is shown only on request, with a reason, and that request is audited (docs/operations.md "The support
 * console"). Pure.
 *
 * - Email: the first character of the local part, then dots, then the whole domain — people confirm their address by
 *   its provider, and a domain names a company, not a person.
 * - Phone (E.164): the country calling code and the last four digits (libphonenumber-js reads the code, so +44 and
 *   +1 are told apart); the rest as dots.
 * - Push: the platform (Apple, Android …) and the last four characters of the endpoint's id — the ARN's account,
 *   region and application say nothing a person checks.
 * A value none of these reads (an erased or malformed one) is shown as dots alone: a mask never shows more than it
 * should because the value is odd.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { type Channel, unknownChannel } from './channels.ts';

const DOTS = '•••';

/** Platforms as people name them (SNS platform names: https://docs.aws.amazon.com/sns/latest/dg/sns-mobile-application-as-subscriber.html). */
const PLATFORM_NAMES: Readonly<Record<string, string>> = {
  APNS: 'Apple device',
  APNS_SANDBOX: 'Apple device (test)',
  GCM: 'Android device',
  ADM: 'Amazon device',
  BAIDU: 'Baidu device',
  MACOS: 'Mac',
  MACOS_SANDBOX: 'Mac (test)',
  MPNS: 'Windows phone',
  WNS: 'Windows device',
};

export function maskContact(channel: Channel, value: string): string {
  switch (channel) {
    case 'EMAIL':
      return maskEmail(value);
    case 'SMS':
      return maskPhone(value);
    case 'PUSH':
      return maskPushEndpoint(value);
    default:
      return unknownChannel(channel);
  }
}

export function maskEmail(value: string): string {
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return DOTS;
  const first = [...value.slice(0, at)][0] ?? '';
  return `${first}${DOTS}@${value.slice(at + 1)}`;
}

export function maskPhone(value: string): string {
  const phone = parsePhoneNumberFromString(value);
  if (phone === undefined) return DOTS;
  const national = phone.nationalNumber;
  if (national.length <= 4) return `+${phone.countryCallingCode} ${DOTS}`;
  return `+${phone.countryCallingCode} ${DOTS} ${national.slice(-4)}`;
}

const ENDPOINT = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:endpoint\/([A-Z_]+)\/[^/]+\/([^/]+)$/;

export function maskPushEndpoint(value: string): string {
  const m = ENDPOINT.exec(value);
  if (m === null) return DOTS;
  const [, platform = '', id = ''] = m;
  const name = PLATFORM_NAMES[platform] ?? 'device';
  return id.length <= 4 ? `${name} ${DOTS}` : `${name} ${DOTS}${id.slice(-4)}`;
}
