/**
 * The keyed MAC of a secret (domain/secrets.ts): what the payloadHash and the evidence hold instead of a one-time code.
 *
 * Deployed, the key is a KMS HMAC key (HMAC_256, GENERATE_VERIFY_MAC) of the stack: its material never leaves KMS,
 * every MAC is a GenerateMac call that CloudTrail records, and its key policy says who may compute one — ingest to
 * hash, the evidence reader to verify (VerifyMac). A key in the function's memory (a secret fetched at cold start)
 * would be faster, but anyone who read it could try every six-digit code offline; with KMS each try is a logged,
 * rate-limited call. Locally, a key in a file of the run (LocalSecretMac).
 */
import { createHmac } from 'node:crypto';
import { GenerateMacCommand, type KMSClient } from '@aws-sdk/client-kms';
import { UnexpectedResponseError } from '../commons/errors.ts';

export interface SecretMac {
  /** The key's id, kept beside each MAC so a verifier knows which key to ask. */
  readonly keyId: string;
  /** The HMAC-SHA-256 of each message (UTF-8), in order. */
  macs(messages: readonly string[]): Promise<Uint8Array[]>;
}

export class KmsSecretMac implements SecretMac {
  constructor(
    private readonly kms: KMSClient,
    readonly keyId: string,
  ) {}

  macs(messages: readonly string[]): Promise<Uint8Array[]> {
    return Promise.all(
      messages.map(async (message) => {
        const r = await this.kms.send(
          new GenerateMacCommand({
            KeyId: this.keyId,
            MacAlgorithm: 'HMAC_SHA_256',
            Message: Buffer.from(message, 'utf8'),
          }),
        );
        if (r.Mac === undefined || r.Mac.length === 0) throw new UnexpectedResponseError('GenerateMac returned no MAC');
        return r.Mac;
      }),
    );
  }
}

/** The local run's and the tests' stand-in: the same MAC under a key held in memory (never a deployed stage's). */
export class LocalSecretMac implements SecretMac {
  constructor(
    private readonly key: Uint8Array,
    readonly keyId = 'local',
  ) {}

  async macs(messages: readonly string[]): Promise<Uint8Array[]> {
    return messages.map((m) => createHmac('sha256', this.key).update(m, 'utf8').digest());
  }
}
