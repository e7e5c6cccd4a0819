/**
 * The audit log of operator actions (functions/domain/audit.ts), kept in the evidence store: each object written once
 * under `audit/`, under the bucket's default retention, so nobody — the operator included — can edit or remove it.
 * An action's record is written before it acts, its outcome after, as a second object beside it.
 */
import { randomUUID } from 'node:crypto';
import {
  AUDIT_PREFIX,
  type AuditOutcome,
  type AuditRecord,
  auditKey,
  auditOutcomeKey,
  recordKeyOfOutcome,
} from '../domain/audit.ts';
import { recordedIdentityOf } from '../domain/identity.ts';
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
}

const json = (value: unknown) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

export class EvidenceAuditLog implements AuditLog {
  constructor(private readonly store: EvidenceStore) {}

  async record(entry: Omit<AuditRecord, 'kind' | 'at' | 'outcome'>, now: number): Promise<AuditEntry> {
    const record: AuditRecord = { kind: 'AUDIT', at: new Date(now).toISOString(), ...entry };
    const key = auditKey(record.at, randomUUID().slice(0, 8));
    // No retain-until date: the bucket's default retention applies (the writer need not know the stack's setting).
    await this.store.put(key, json(record), undefined);
    return { key, record };
  }

  async recordOutcome(
    recordKey: string,
    outcome: Omit<AuditOutcome, 'kind' | 'at'>,
    now: number,
  ): Promise<AuditOutcome> {
    const written: AuditOutcome = { kind: 'AUDIT_OUTCOME', at: new Date(now).toISOString(), ...outcome };
    await this.store.put(auditOutcomeKey(recordKey), json(written), undefined);
    return written;
  }

  async list(sinceIso?: string): Promise<ListedAuditRecord[]> {
    const objects = (await this.store.history(AUDIT_PREFIX)).filter(
      (o) => sinceIso === undefined || o.key.slice(AUDIT_PREFIX.length) >= sinceIso,
    );
    const outcomes = new Map<string, { outcome: AuditOutcome; warnings: string[] }>();
    const records: [string, AuditRecord, string[]][] = [];
    for (const o of objects) {
      const read = await readFirst(this.store, o);
      if (read === undefined) continue;
      const doc = JSON.parse(Buffer.from(read.bytes).toString('utf8'));
      const of = recordKeyOfOutcome(o.key);
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
}
