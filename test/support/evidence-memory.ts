/**
 * The evidence store, its gaps, intents and customers' index in memory, with the answers the real adapters give:
 * a store that writes once (a second put of a key is "already there"), that can fail or hang until aborted; gaps and
 * an index that can refuse.
 */
import type { EvidenceGap, EvidenceGaps } from '../../functions/stores/evidence-gaps.ts';
import type { EvidenceIndex, EvidenceIndexEntry } from '../../functions/stores/evidence-index.ts';
import type { EvidenceIntent, EvidenceIntents } from '../../functions/stores/evidence-intents.ts';
import type { EvidenceReports } from '../../functions/stores/evidence-reports.ts';
import type { EvidenceStore } from '../../functions/stores/evidence-store.ts';

const refused = (name: string) => Object.assign(new Error(name), { name });

export class MemoryStore implements EvidenceStore {
  readonly objects = new Map<string, { body: Buffer; retainUntil: Date }>();
  puts = 0;
  constructor(public mode: 'ok' | 'fail' | 'hang' = 'ok') {}
  async put(key: string, body: Uint8Array, retainUntil: Date | undefined, signal?: AbortSignal) {
    this.puts++;
    if (this.mode === 'fail') throw refused('ServiceUnavailable');
    if (this.mode === 'hang') {
      await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
    }
    if (this.objects.has(key)) return 'alreadyThere' as const;
    this.objects.set(key, { body: Buffer.from(body), retainUntil: retainUntil ?? new Date(0) });
    return 'written' as const;
  }
  async list(prefix: string) {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
  async get(key: string) {
    return this.objects.get(key)?.body;
  }
  async history(prefix: string) {
    return (await this.list(prefix)).map((key) => ({
      key,
      versions: [{ versionId: undefined, at: undefined }],
      hidden: false,
    }));
  }
}

export class MemoryGaps implements EvidenceGaps {
  readonly gaps = new Map<string, EvidenceGap>();
  constructor(public failing = false) {}
  async add(gap: EvidenceGap) {
    if (this.failing) throw refused('ProvisionedThroughputExceededException');
    this.gaps.set(gap.key, gap);
  }
  async list(limit: number) {
    return [...this.gaps.values()].slice(0, limit);
  }
  async close(key: string) {
    this.gaps.delete(key);
  }
  async removeTorn(gap: EvidenceGap) {
    if (this.gaps.get(gap.key) === gap) this.gaps.delete(gap.key);
  }
  async find(key: string) {
    const gap = this.gaps.get(key);
    return gap === undefined ? undefined : { since: gap.since };
  }
}

export class MemoryIntents implements EvidenceIntents {
  readonly open_ = new Map<string, EvidenceIntent>();
  constructor(public failing = false) {}
  async open(intent: EvidenceIntent) {
    if (this.failing) throw refused('ProvisionedThroughputExceededException');
    this.open_.set(intent.name, intent);
  }
  async close(intent: Pick<EvidenceIntent, 'name'>) {
    this.open_.delete(intent.name);
  }
  async overdue(now: number, limit: number) {
    return [...this.open_.values()].filter((i) => i.dueMs <= now && (i.retryAt ?? 0) <= now).slice(0, limit);
  }
  async failed(intent: Pick<EvidenceIntent, 'name'>, retryAt: number, lastError: string) {
    const open = this.open_.get(intent.name);
    if (open !== undefined)
      this.open_.set(intent.name, { ...open, attempts: (open.attempts ?? 0) + 1, retryAt, lastError });
  }
  async oldestDueMs() {
    const dues = [...this.open_.values()].map((i) => i.dueMs);
    return dues.length === 0 ? undefined : Math.min(...dues);
  }
  async find(name: string) {
    return this.open_.get(name);
  }
}

export class MemoryIndex implements EvidenceIndex {
  /** Items as the table would hold them: `<pk> <sk>` → the sends (`<sha256>[.<attempt>] <notificationId>`). */
  readonly items = new Map<string, Set<string>>();
  constructor(public failing = false) {}
  async add(entry: EvidenceIndexEntry, _expiresAt?: number) {
    if (this.failing) throw refused('ProvisionedThroughputExceededException');
    for (const s of entry.sends) {
      const eventId = s.notificationId.slice(0, s.notificationId.lastIndexOf('#'));
      for (const key of [
        `EVIDENCE_INDEX#${entry.userId} ${entry.day}#${entry.batch}`,
        `EVIDENCE_EVENT#${eventId} ${entry.batch}`,
      ]) {
        const send = `${s.sha256}${s.attempt === undefined ? '' : `.${s.attempt}`} ${s.notificationId}`;
        this.items.set(key, (this.items.get(key) ?? new Set()).add(send));
      }
    }
  }
  /** As the table's: each item replaced by the batch's whole (the memory holds no other writer's part). */
  async putBatch(entries: readonly { entry: EvidenceIndexEntry; expiresAt: number }[]) {
    for (const { entry, expiresAt } of entries) await this.add(entry, expiresAt);
    return 0;
  }
  private refs(prefix: string, batchOf: (sk: string) => string) {
    return [...this.items.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([k, sends]) =>
        [...sends].sort().map((s) => {
          const [digest = '', attempt] = s.slice(0, s.indexOf(' ')).split('.');
          return {
            batch: batchOf(k.slice(prefix.length)),
            notificationId: s.slice(s.indexOf(' ') + 1),
            sha256: digest,
            ...(attempt === undefined ? {} : { attempt: Number(attempt) }),
          };
        }),
      );
  }
  async sendsOf(userId: string) {
    return this.refs(`EVIDENCE_INDEX#${userId} `, (sk) => sk.slice(11));
  }
  async sendsOfEvent(eventId: string) {
    return this.refs(`EVIDENCE_EVENT#${eventId} `, (sk) => sk);
  }
}

export class MemoryReports implements EvidenceReports {
  /** Send batch → the feedback batches naming reports on it. */
  readonly items = new Map<string, Set<string>>();
  constructor(public failing = false) {}
  async add(sendBatch: string, reportsBatch: string) {
    if (this.failing) throw refused('ProvisionedThroughputExceededException');
    this.items.set(sendBatch, (this.items.get(sendBatch) ?? new Set()).add(reportsBatch));
  }
  async of(sendBatch: string) {
    return [...(this.items.get(sendBatch) ?? [])].sort();
  }
}
