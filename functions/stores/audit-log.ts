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
import type { EvidenceStore } from './evidence-store.ts';

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
  /** Every record written at or after `sinceIso`, newest first, each with its outcome when there is one. */
  list(sinceIso?: string): Promise<AuditRecord[]>;
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

  async list(sinceIso?: string): Promise<AuditRecord[]> {
    const keys = (await this.store.list(AUDIT_PREFIX)).filter(
      (key) => sinceIso === undefined || key.slice(AUDIT_PREFIX.length) >= sinceIso,
    );
    const read = async (key: string) => {
      const bytes = await this.store.get(key);
      return bytes === undefined ? undefined : JSON.parse(Buffer.from(bytes).toString('utf8'));
    };
    const outcomes = new Map<string, AuditOutcome>();
    const records: [string, AuditRecord][] = [];
    for (const key of keys) {
      const doc = await read(key);
      if (doc === undefined) continue;
      const of = recordKeyOfOutcome(key);
      if (of === undefined) records.push([key, doc as AuditRecord]);
      else outcomes.set(of, doc as AuditOutcome);
    }
    return records
      .map(([key, record]) => {
        const outcome = outcomes.get(key);
        return outcome === undefined ? record : { ...record, outcome };
      })
      .sort((a, b) => b.at.localeCompare(a.at));
  }
}
