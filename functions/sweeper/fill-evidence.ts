/**
 * The later pass that closes evidence gaps (stores/evidence-gaps.ts): each record a send could not write at once is
 * written now, byte for byte as dispatch built it, then its gap is closed. A record already in the store (the first
 * write landed after all, its reply lost) answers "already there" and closes the gap the same way. A store still
 * failing leaves the gap open for the next run; `open` is what the EvidenceGapsOpen alarm reads.
 */
import type { EvidenceGaps } from '../stores/evidence-gaps.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';

export interface FillDeps {
  readonly gaps: EvidenceGaps;
  readonly store: EvidenceStore;
  readonly now: () => number;
  /** Stop starting writes after this (epoch ms). */
  readonly deadline: number;
  readonly limit: number;
}

export interface FillResult {
  readonly filled: number;
  /** Gaps seen and still open after this pass (a failed write, or no time left). */
  readonly open: number;
  readonly errors: string[];
}

export async function fillEvidenceGaps(deps: FillDeps): Promise<FillResult> {
  const gaps = await deps.gaps.list(deps.limit);
  let filled = 0;
  const errors: string[] = [];
  for (const gap of gaps) {
    if (deps.now() >= deps.deadline) break;
    try {
      await deps.store.put(gap.key, gap.body, gap.retainUntil);
      await deps.gaps.close(gap.key);
      filled++;
    } catch (error) {
      errors.push(`${gap.key}: ${(error as Error)?.name ?? 'Error'}`);
    }
  }
  return { filled, open: gaps.length - filled, errors };
}
