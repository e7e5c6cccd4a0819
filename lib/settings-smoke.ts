/**
 * `smokeContacts`: the contact points, beside the SES mailbox simulator, the smoke producer may send its bank notice
 * to (functions/domain/smoke-contacts.ts) — the bank's own test phones, devices and mailboxes. Each is an e-mail
 * address, an E.164 number or an SNS endpoint ARN, checked at synth; the producer refuses everything else.
 */
import { z } from 'zod';
import { smokeContactKind } from '../functions/domain/smoke-contacts.ts';

/** Few, and they travel in one environment variable (Lambda allows 4 KB for all of them). */
export const MAX_SMOKE_CONTACTS = 10;

/**
 * The list travels to the producer as one comma-joined variable, split there again: a separator inside an entry
 * would smuggle a second, unreviewed contact point past this check.
 */
const SEPARATOR = /[,;\s]/;
/** The producer's own e-mail rule (functions/smoke/produce-smoke-event.ts): an address it could never use is refused. */
const producerEmail = z.email().max(254);

/** Exactly one contact point the producer can send to. */
export function isOneSmokeContact(contact: string): boolean {
  if (SEPARATOR.test(contact)) return false;
  const kind = smokeContactKind(contact);
  return kind === 'email' ? producerEmail.safeParse(contact).success : kind !== undefined;
}

/** One contact point: what the producer can send to. */
export const smokeContact = z
  .string()
  .trim()
  .refine(isOneSmokeContact, {
    error: (issue) =>
      `${String(issue.input)} must be one e-mail address, E.164 number (+819012345678) or SNS endpoint ARN, without separators`,
  });

/** The list's own rules: at most MAX_SMOKE_CONTACTS, none twice. */
export function smokeContactsProblem(contacts: readonly string[]): string | undefined {
  if (contacts.length > MAX_SMOKE_CONTACTS) return `must list at most ${MAX_SMOKE_CONTACTS} contact points`;
  const seen = new Set(contacts.map((c) => c.toLowerCase()));
  return seen.size === contacts.length ? undefined : 'must not list a contact point twice';
}
