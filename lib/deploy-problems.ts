/**
 * What a deploy's settings must not be that a schema cannot see: placeholders outside the example stage, a starting
 * position in the future, nobody paged or named to read the evidence. Read at every synth (lib/settings.ts).
 */
import type { Brand } from '../functions/domain/brand.ts';

/** The stage examples/settings.example.json names: the one stage its placeholders are fine for. */
export const EXAMPLE_STAGE = 'example';

/** The settings these checks read (lib/settings.ts Settings has them all). */
export interface DeploySettings {
  readonly stage: string;
  readonly startingPositionTimestamp?: number | undefined;
  readonly alarmEmail?: string | undefined;
  readonly senderEmail: string;
  readonly evidenceReaders?: readonly string[] | undefined;
  readonly breakGlassPrincipals?: readonly string[] | undefined;
  readonly brand: Brand;
}

/** The brand and addresses of examples/settings.example.json: fine for its own stage, never for a real one. */
const PLACEHOLDER_NAMES = ['Example Bank', 'サンプル銀行'];
/** The example's support phones (examples/settings.example.json), by their digits. */
const PLACEHOLDER_PHONE_DIGITS = ['18005550100', '0120555010'];
/** Domains reserved for documentation and tests (RFC 2606, RFC 6761): nobody can receive mail or serve pages there. */
const RESERVED_DOMAIN = /(^|\.)(example|test|invalid|localhost|example\.com|example\.net|example\.org)$/i;
const reservedHost = (host: string) => RESERVED_DOMAIN.test(host.replace(/\.$/, ''));
const urlHost = (url: string) => (URL.canParse(url) ? new URL(url).hostname : '');

/**
 * What a schema cannot see because it depends on the stage or on the time of the synth: placeholders outside the
 * example stage (a deploy never sends under "Example Bank", from example.com, or pages an address nobody reads), and
 * an AT_TIMESTAMP starting position in the future, which Lambda rejects at deploy ("StartingPositionTimestamp cannot
 * be in the future"), rolling the whole deploy back. Pure: the clock is an argument.
 */
export function deployProblems(s: DeploySettings, now: number): string[] {
  const problems: string[] = [];
  if (s.startingPositionTimestamp !== undefined && s.startingPositionTimestamp * 1000 > now) {
    problems.push(
      `context key "startingPositionTimestamp" is in the future (${new Date(s.startingPositionTimestamp * 1000).toISOString()}): Lambda refuses it ("StartingPositionTimestamp cannot be in the future") and the deploy rolls back; use the cutover time once it has passed`,
    );
  }
  if (s.stage === EXAMPLE_STAGE) return problems;
  // A deploy that pages nobody is a deploy whose alarms fire into the void: a real stage names who is paged.
  if (s.alarmEmail === undefined) {
    problems.push(
      `context key "alarmEmail" is required outside the example stage: every alarm mails it, so a deploy must name who is paged (the on-call address or a pager's e-mail integration)`,
    );
  }
  // "The account" may read seven years of evidence or break glass only in the example stage: a real one names who.
  for (const [key, who] of [
    ['evidenceReaders', 'may decrypt the evidence (those who answer disputes)'],
    ['breakGlassPrincipals', 'may break glass (disable the evidence key, change its protections)'],
  ] as const) {
    if (s[key] === undefined) {
      problems.push(
        `context key "${key}" is required outside the example stage: it names the IAM roles that ${who}; without it any principal of the account allowed sts:AssumeRole could`,
      );
    }
  }
  const placeholder = (key: string, what: string) =>
    problems.push(`context key "${key}" is a placeholder (${what}): stage "${s.stage}" needs the bank's own`);
  for (const [locale, name] of Object.entries(s.brand.name)) {
    if (PLACEHOLDER_NAMES.includes(name)) placeholder(`brand.name.${locale}`, name);
  }
  if (reservedHost(urlHost(s.brand.supportUrl))) placeholder('brand.supportUrl', urlHost(s.brand.supportUrl));
  if (s.brand.logo !== undefined && reservedHost(urlHost(s.brand.logo.url))) {
    placeholder('brand.logo.url', urlHost(s.brand.logo.url));
  }
  const phones = typeof s.brand.supportPhone === 'string' ? { '': s.brand.supportPhone } : s.brand.supportPhone;
  for (const [locale, phone] of Object.entries(phones)) {
    if (PLACEHOLDER_PHONE_DIGITS.includes(phone.replace(/\D/g, '')))
      placeholder(locale === '' ? 'brand.supportPhone' : `brand.supportPhone.${locale}`, phone);
  }
  for (const key of ['senderEmail', 'alarmEmail'] as const) {
    const domain = s[key]?.split('@')[1];
    if (domain !== undefined && reservedHost(domain)) placeholder(key, `${domain} is reserved for examples`);
  }
  return problems;
}
