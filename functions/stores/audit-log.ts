/**
 * The audit log of operator actions (functions/domain/audit.ts), kept in the evidence store: each object written once
 * under `audit/`, under the bucket's default retention, so nobody — the operator included — can edit or remove it.
 * An action's record is written before it acts, its outcome after, as a second object beside it.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  AUDIT_PREFIX,
  AUDIT_SUBJECT_PREFIX,
  type AuditOutcome,
  type AuditRecord,
  auditKey,
  auditOutcomeKey,
  auditSubjectKey,
  auditSubjectOf,
  recordKeyOfOutcome,
  recordKeyOfSubjectKey,
} from '../domain/audit.ts';
import { recordedIdentityOf } from '../domain/identity.ts';
import { parseNotificationId } from '../domain/keys.ts';
import { type AuditSeal, auditPlace, LOCAL_AUDIT_SEAL } from './audit-seal.ts';
import type { EvidenceStore } from './evidence-store.ts';
import { readFirst } from './evidence-versions.ts';

/** An audit record as first written, with what its versions say (superseded, hidden) when anything. */
export type ListedAuditRecord = AuditRecord & { readonly warnings?: string[] };

/** An action's record as written, and the key its outcome is written beside. */
export interface AuditEntry {
  readonly key: string;
  readonly record: AuditRecord;
}

export interface AuditLog {
  /** Writes the record of an action, once. An action whose record cannot be written must not happen. */
  record(entry: Omit<AuditRecord, 'kind' | 'at' | 'outcome'>, now: number): Promise<AuditEntry>;
  /** Writes what became of the action recorded under `recordKey`, once. */
  recordOutcome(recordKey: string, outcome: Omit<AuditOutcome, 'kind' | 'at'>, now: number): Promise<AuditOutcome>;
  /**
   * Every record written at or after `sinceIso`, newest first, each with its outcome when there is one — every
   * record ever written, as first written, and what its versions say (evidence-versions.ts).
   */
  list(sinceIso?: string): Promise<ListedAuditRecord[]>;
  /** The record written under `key`, as first written, or undefined when there is none. */
  read(key: string): Promise<AuditRecord | undefined>;
  /**
   * The records about these subjects (customers, events: auditSubjectOf) written at or after `sinceIso`, newest
   * first, as `list` reads them — through the by-subject index, never the whole log.
   */
  listAbout(subjects: readonly string[], sinceIso: string): Promise<ListedAuditRecord[]>;
}

/** A subject as the by-subject index names it: a hash, so no customer id appears in a key. */
const subjectHash = (subject: string) => createHash('sha256').update(subject).digest('hex').slice(0, 32);
const eventOf = (id: string) => parseNotificationId(id)?.eventId;

const json = (value: unknown) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

export class EvidenceAuditLog implements AuditLog {
  /**
   * Every record written with its seal, every record read checked against it (audit-seal.ts). `writes` is where
   * records are written when that is another principal than the reader's (the console writes as its own role).
   */
  constructor(
    private readonly store: EvidenceStore,
    private readonly seal: AuditSeal = LOCAL_AUDIT_SEAL,
    private readonly writes: EvidenceStore = store,
  ) {}

  async record(entry: Omit<AuditRecord, 'kind' | 'at' | 'outcome'>, now: number): Promise<AuditEntry> {
    const record: AuditRecord = { kind: 'AUDIT', at: new Date(now).toISOString(), ...entry };
    const key = auditKey(record.at, randomUUID().slice(0, 8));
    // No retain-until date: the bucket's default retention applies (the writer need not know the stack's setting).
    await this.writes.put(key, json(await this.seal.sealed(record, auditPlace(key, false))), undefined);
    // Its index entry: written before the action acts, like the record (a failure here stops the action too).
    const subject = subjectHash(auditSubjectOf(record.target, eventOf));
    await this.writes.put(auditSubjectKey(subject, key), json({ key }), undefined);
    return { key, record };
  }

  async recordOutcome(
    recordKey: string,
    outcome: Omit<AuditOutcome, 'kind' | 'at'>,
    now: number,
  ): Promise<AuditOutcome> {
    const written: AuditOutcome = { kind: 'AUDIT_OUTCOME', at: new Date(now).toISOString(), ...outcome };
    const sealed = await this.seal.sealed(written, auditPlace(recordKey, true));
    await this.writes.put(auditOutcomeKey(recordKey), json(sealed), undefined);
    return written;
  }

  /** A record as first written, with its outcome when one is written and sealed (an unsealed one is left out). */
  async read(key: string): Promise<AuditRecord | undefined> {
    const first = async (k: string) => {
      const object = (await this.store.history(k)).find((o) => o.key === k);
      const read = object === undefined ? undefined : await readFirst(this.store, object);
      return read === undefined ? undefined : JSON.parse(Buffer.from(read.bytes).toString('utf8'));
    };
    const doc = await first(key);
    // A record that is not sealed by the stack's key is no record to rely on.
    if (doc === undefined || (await this.seal.broken(doc, auditPlace(key, false))) !== undefined) return undefined;
    const outcome = await first(auditOutcomeKey(key));
    if (outcome === undefined || (await this.seal.broken(outcome, auditPlace(key, true))) !== undefined) {
      return doc as AuditRecord;
    }
    const { seal: _seal, ...sealedOutcome } = outcome;
    return { ...doc, outcome: sealedOutcome } as AuditRecord;
  }

  async list(sinceIso?: string): Promise<ListedAuditRecord[]> {
    const objects = (await this.store.history(AUDIT_PREFIX)).filter(
      (o) =>
        !o.key.startsWith(AUDIT_SUBJECT_PREFIX) &&
        (sinceIso === undefined || o.key.slice(AUDIT_PREFIX.length) >= sinceIso),
    );
    const outcomes = new Map<string, { outcome: AuditOutcome; warnings: string[] }>();
    const records: [string, AuditRecord, string[]][] = [];
    for (const o of objects) {
      const read = await readFirst(this.store, o);
      if (read === undefined) continue;
      const written = JSON.parse(Buffer.from(read.bytes).toString('utf8'));
      const of = recordKeyOfOutcome(o.key);
      const broken = await this.seal.broken(
        written,
        of === undefined ? auditPlace(o.key, false) : auditPlace(of, true),
      );
      if (broken !== undefined) read.warnings.push(`${o.key}: ${broken}`);
      const { seal: _seal, ...doc } = written;
      // A record from before identities were verified names its caller as text: read as UNVERIFIED, never as verified.
      if (of === undefined)
        records.push([o.key, { ...doc, by: recordedIdentityOf(doc.by) } as AuditRecord, read.warnings]);
      else outcomes.set(of, { outcome: doc as AuditOutcome, warnings: read.warnings });
    }
    return records
      .map(([key, record, read]): ListedAuditRecord => {
        const done = outcomes.get(key);
        const warnings = [...read, ...(done?.warnings ?? [])];
        return {
          ...record,
          ...(done === undefined ? {} : { outcome: done.outcome }),
          ...(warnings.length > 0 ? { warnings } : {}),
        };
      })
      .sort((a, b) => b.at.localeCompare(a.at));
  }

  async listAbout(subjects: readonly string[], sinceIso: string): Promise<ListedAuditRecord[]> {
    const folders = [...new Set(subjects)].map((s) => `${AUDIT_SUBJECT_PREFIX}${subjectHash(s)}/`);
    const indexed = (await Promise.all(folders.map((f) => this.store.list(f)))).flat();
    const keys = [...new Set(indexed.map(recordKeyOfSubjectKey))].filter(
      (k) => k.slice(AUDIT_PREFIX.length) >= sinceIso,
    );
    // Each record and its outcome by key, as they are now (two reads, no listing); `list` — `ops audit` — is the
    // reader that also reads every version and says when a record was written again or hidden.
    const read = async (key: string) => {
      const bytes = await this.store.get(key);
      return bytes === undefined ? undefined : JSON.parse(Buffer.from(bytes).toString('utf8'));
    };
    const found = await Promise.all(
      keys.map(async (key): Promise<ListedAuditRecord | undefined> => {
        const [doc, outcome] = await Promise.all([read(key), read(auditOutcomeKey(key))]);
        if (doc === undefined) return undefined;
        // Checked against its seal like every read: a record the stack's key did not seal is shown, flagged.
        const warnings = [
          await this.seal.broken(doc, auditPlace(key, false)),
          outcome && (await this.seal.broken(outcome, auditPlace(key, true))),
        ]
          .filter((w): w is string => typeof w === 'string')
          .map((w) => `${key}: ${w}`);
        const { seal: _seal, ...record } = doc;
        const { seal: _outcomeSeal, ...outcomeDoc } = outcome ?? {};
        const done = outcome === undefined ? {} : { outcome: outcomeDoc };
        return {
          ...record,
          by: recordedIdentityOf(doc.by),
          ...done,
          ...(warnings.length > 0 ? { warnings } : {}),
        };
      }),
    );
    return found.filter((r) => r !== undefined).sort((a, b) => b.at.localeCompare(a.at));
  }
}
