/**
 * The tests' secret key (functions/stores/secret-mac.ts LocalSecretMac) and the payloadHash ingest stores under it:
 * an event with a secret field is hashed with its secret's keyed MAC, never the secret (domain/secrets.ts).
 */
import { createHmac } from 'node:crypto';
import type { Admission } from '../../functions/domain/admission.ts';
import type { Decoded } from '../../functions/domain/event/decode.ts';
import { payloadHash } from '../../functions/domain/event/hash.ts';
import { macDigest, secretMacMessage, secretsOf } from '../../functions/domain/secrets.ts';
import { LocalSecretMac } from '../../functions/stores/secret-mac.ts';

export const TEST_SECRET_KEY = Buffer.from('notifier tests: the secret MAC key', 'utf8');
export const TEST_SECRET_MAC = new LocalSecretMac(TEST_SECRET_KEY, 'test');

/** The hash ingest stores for an admitted event: its own, or — with secrets — the one over their MACs. */
export function storedHashOf(a: Admission | Decoded): string | undefined {
  if (!a.ok) return undefined;
  if (!('event' in a)) return a.payloadHash;
  const secrets = Object.entries(secretsOf(a.event.type, a.event.data));
  if (secrets.length === 0) return a.payloadHash;
  const macs = Object.fromEntries(
    secrets.map(([name, value]) => [
      name,
      macDigest(
        createHmac('sha256', TEST_SECRET_KEY)
          .update(secretMacMessage(a.event.eventId, name, value))
          .digest(),
      ),
    ]),
  );
  return payloadHash({ ...a.hashInput, secretMacs: macs });
}
