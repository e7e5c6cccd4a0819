/**
 * Who a smoke event may go to. The smoke producer writes a bank's "transfer complete" notice to the topic, sent like
 * any other, with no preview, approval or audit: whoever may invoke it would otherwise send a bank notice to any
 * address or number they name. So it goes only to addresses that reach no one — the SES mailbox simulator — and to
 * the contact points the bank listed for the check (settings `smokeContacts`: its own test phones and devices).
 * Pure: shared by the settings' check at synth (lib/settings-smoke.ts) and the producer (functions/smoke/).
 */

/** The SES mailbox simulator: its addresses reach no inbox and answer with a set outcome (works in the sandbox). */
export const SES_SIMULATOR_DOMAIN = 'simulator.amazonses.com';
/** Its scenarios: delivered, bounced, out of office, complaint, on the suppression list. A "+label" may follow. */
const SES_SIMULATOR_SCENARIOS = ['success', 'bounce', 'ooto', 'complaint', 'suppressionlist'] as const;

export const E164 = /^\+[1-9]\d{6,14}$/;
export const SNS_ENDPOINT_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:endpoint\/[^\s]{1,512}$/;
/** One @, something either side, a dot in the domain, no spaces: the check zod's e-mail rule makes elsewhere. */
const EMAIL_SHAPE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

export type SmokeContactKind = 'email' | 'phone' | 'push';

/** What a contact point is, by its spelling: an e-mail address, an E.164 number, an SNS endpoint ARN, or none. */
export function smokeContactKind(contact: string): SmokeContactKind | undefined {
  if (E164.test(contact)) return 'phone';
  if (SNS_ENDPOINT_ARN.test(contact)) return 'push';
  if (EMAIL_SHAPE.test(contact) && contact.length <= 254) return 'email';
  return undefined;
}

/** An address of the SES mailbox simulator (any case, with or without a "+label"). */
export function isSesSimulator(email: string): boolean {
  const [local = '', domain = '', ...more] = email.toLowerCase().split('@');
  if (more.length > 0 || domain !== SES_SIMULATOR_DOMAIN) return false;
  const scenario = local.split('+')[0] ?? '';
  return (SES_SIMULATOR_SCENARIOS as readonly string[]).includes(scenario);
}

/** E-mail addresses compare without case (as the bank's mail systems do); numbers and ARNs as written. */
const sameContact = (a: string, b: string) =>
  smokeContactKind(a) === 'email' ? a.toLowerCase() === b.toLowerCase() : a === b;

/**
 * Why the smoke producer refuses these contact points, or undefined when it may send to all of them: each must be a
 * mailbox simulator address or one of `allowed` (the settings' `smokeContacts`).
 */
export function smokeContactRefusal(
  contacts: Readonly<Record<string, string | undefined>>,
  allowed: readonly string[],
): string | undefined {
  const refused = Object.entries(contacts).filter(
    ([, c]) => c !== undefined && !isSesSimulator(c) && !allowed.some((a) => sameContact(a, c)),
  );
  if (refused.length === 0) return undefined;
  const named = refused.map(([field, c]) => `${field} ${c}`).join(', ');
  return `${named}: not a smoke contact. The smoke check sends a bank notice, unreviewed, so it goes only to the SES mailbox simulator (e.g. success@${SES_SIMULATOR_DOMAIN}) and to the contact points the settings list in smokeContacts (docs/operations.md "Smoke check")`;
}
