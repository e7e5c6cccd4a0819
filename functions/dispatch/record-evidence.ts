/**
 * Step 10 of dispatch, after the provider accepted and the acceptance is recorded: the evidence of the send
 * (domain/evidence.ts) goes to the evidence store. It never delays the send (the send is over) nor causes a second
 * one (nothing here touches the notification's state): a store that is slow or refuses leaves the notification SENT,
 * and the record's bytes wait in the table as a gap (commons/evidence-gaps.ts) for the sweeper to write. Only when
 * the table refuses the gap too is the evidence lost — counted and alarmed (EvidenceLost), logged with ids only.
 */
import type { EvidenceGaps } from '../commons/evidence-gaps.ts';
import type { EvidenceStore } from '../commons/evidence-store.ts';
import {
  evidenceBody,
  evidenceKey,
  type ProviderRequest,
  type RetentionPolicy,
  type SendFacts,
  sendEvidence,
} from '../domain/evidence.ts';
import type { Message } from '../domain/templates.ts';

export interface EvidenceDeps {
  readonly store: EvidenceStore;
  readonly gaps: EvidenceGaps;
  readonly retention: RetentionPolicy;
  /** The provider request a send of this notification and message makes (the sender's own builder). */
  readonly requestOf: (n: SendFacts & { recipient: string }, m: Message) => ProviderRequest;
  /** The longest the store may take before the record goes to the gaps instead. */
  readonly timeoutMs: number;
}

export type EvidenceOutcome = 'written' | 'gap' | 'lost';

export async function recordSendEvidence(
  deps: EvidenceDeps,
  n: SendFacts & { recipient: string },
  message: Message,
  providerMessageId: string,
  acceptedAtMs: number,
  timeLeftMs: number,
): Promise<{ outcome: EvidenceOutcome; key: string; error?: string }> {
  const record = sendEvidence(n, deps.requestOf(n, message), providerMessageId, acceptedAtMs, deps.retention);
  const key = evidenceKey(record);
  const body = evidenceBody(record);
  const retainUntil = new Date(record.retainUntil);
  const timeoutMs = Math.min(deps.timeoutMs, timeLeftMs);
  let error: string | undefined;
  if (timeoutMs > 0) {
    try {
      await deps.store.put(key, body, retainUntil, AbortSignal.timeout(timeoutMs));
      return { outcome: 'written', key };
    } catch (e) {
      error = (e as Error)?.name ?? 'Error';
    }
  } else error = 'NoTimeLeft';
  try {
    await deps.gaps.add({ key, body, retainUntil, since: new Date(acceptedAtMs).toISOString() });
    return { outcome: 'gap', key, error };
  } catch (e) {
    return { outcome: 'lost', key, error: `${error}; gap: ${(e as Error)?.name ?? 'Error'}` };
  }
}
