/**
 * The seal of an audit record (docs/evidence-and-privacy.md "Audited operator actions"): each record and outcome is
 * written with a MAC of its content, so one nobody sealed — written by a principal the bucket let put an object, or
 * changed — reads as such in `ops audit`, and an approval refuses a proposal whose PROPOSE record does not verify.
 *
 * Deployed, the key is a KMS HMAC key of the stack (lib/audit-seal-key.ts): its material never leaves KMS, the
 * operator and console functions may generate a MAC, readers may only verify one (as with secret-mac.ts). The MAC is
 * over a digest of the record's canonical JSON (keys sorted: it survives a parse), because KMS takes at most 4 KB, and
 * over its place — the record's object key, or for an outcome the record key it answers — so a sealed record or outcome
 * copied to another key does not verify there.
 * Locally, a key of the local run (LOCAL_AUDIT_SEAL): a developer's machine has nobody to keep out.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { GenerateMacCommand, KMSClient, VerifyMacCommand } from '@aws-sdk/client-kms';
import { UnexpectedResponseError } from '../commons/errors.ts';
import { fingerprintOf } from '../domain/approval.ts';

/** What a sealed record carries beside its content: the key's id and the MAC (base64). */
export interface AuditSealMark {
  readonly keyId: string;
  readonly mac: string;
}

export interface AuditSeal {
  readonly keyId: string;
  /** The document with its seal (`seal`) for its place (`placeOf`), to be written once there. */
  sealed<T extends object>(doc: T, place: string): Promise<T & { readonly seal: AuditSealMark }>;
  /** Why a document read back at `place` is not one this key sealed for it, or undefined when it is. */
  broken(doc: Record<string, unknown>, place: string): Promise<string | undefined>;
}

/** Where a sealed document belongs: `record <key>`, or `outcome of <record key>`. */
export const auditPlace = (recordKey: string, outcome: boolean) =>
  outcome ? `outcome of ${recordKey}` : `record ${recordKey}`;

const messageOf = (doc: object, place: string) => {
  const { seal: _seal, ...content } = doc as Record<string, unknown>;
  return Buffer.from(`notifier audit record\n${place}\n${fingerprintOf(content)}`, 'utf8');
};

abstract class Seal implements AuditSeal {
  constructor(readonly keyId: string) {}
  protected abstract mac(message: Buffer): Promise<Uint8Array>;
  protected abstract verify(message: Buffer, mac: Buffer): Promise<boolean>;

  async sealed<T extends object>(doc: T, place: string): Promise<T & { readonly seal: AuditSealMark }> {
    const mac = Buffer.from(await this.mac(messageOf(doc, place))).toString('base64');
    return { ...doc, seal: { keyId: this.keyId, mac } };
  }

  async broken(doc: Record<string, unknown>, place: string): Promise<string | undefined> {
    const seal = doc.seal as Partial<AuditSealMark> | undefined;
    if (typeof seal?.mac !== 'string') {
      return 'not sealed: written before records were sealed, or by someone without the audit key';
    }
    if (seal.keyId !== this.keyId) return `sealed with another key (${String(seal.keyId)}), not the stack's audit key`;
    const valid = await this.verify(messageOf(doc, place), Buffer.from(seal.mac, 'base64'));
    return valid
      ? undefined
      : `its seal does not match its content or its place (${place}): changed, moved from another key, or not written by the stack`;
  }
}

export class KmsAuditSeal extends Seal {
  constructor(
    private readonly kms: KMSClient,
    keyId: string,
  ) {
    super(keyId);
  }

  protected async mac(message: Buffer): Promise<Uint8Array> {
    const r = await this.kms.send(
      new GenerateMacCommand({ KeyId: this.keyId, MacAlgorithm: 'HMAC_SHA_256', Message: message }),
    );
    if (r.Mac === undefined || r.Mac.length === 0) throw new UnexpectedResponseError('GenerateMac returned no MAC');
    return r.Mac;
  }

  protected async verify(message: Buffer, mac: Buffer): Promise<boolean> {
    try {
      const r = await this.kms.send(
        new VerifyMacCommand({ KeyId: this.keyId, MacAlgorithm: 'HMAC_SHA_256', Message: message, Mac: mac }),
      );
      return r.MacValid === true;
    } catch (error) {
      // KMS answers a MAC that does not verify with an error, not with MacValid false.
      if ((error as Error).name === 'KMSInvalidMacException') return false;
      throw error;
    }
  }
}

/** An HMAC key in memory: the local run's and the tests' (never a deployed stage's). */
export class LocalAuditSeal extends Seal {
  constructor(
    private readonly key: Uint8Array,
    keyId = 'local',
  ) {
    super(keyId);
  }

  protected async mac(message: Buffer): Promise<Uint8Array> {
    return createHmac('sha256', this.key).update(message).digest();
  }

  protected async verify(message: Buffer, mac: Buffer): Promise<boolean> {
    const expected = createHmac('sha256', this.key).update(message).digest();
    return mac.length === expected.length && timingSafeEqual(mac, expected);
  }
}

/** The local run's seal: a fixed key, because a local run's audit has nobody to keep out and must read after it. */
export const LOCAL_AUDIT_SEAL = new LocalAuditSeal(Buffer.from('notifier local run: audit seal', 'utf8'));

/** The ports' seal for a key ARN from the environment or the outputs: the stack's KMS key, or (none) the local run's. */
export const auditSealOf = (keyArn: string | undefined): { auditSeal?: AuditSeal } =>
  keyArn === undefined ? {} : { auditSeal: new KmsAuditSeal(new KMSClient({}), keyArn) };
