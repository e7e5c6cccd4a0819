/**
 * Step 10 of dispatch, after the provider accepted and the acceptance is recorded: the evidence of the send
 * (domain/evidence.ts) goes to the evidence store. It never delays the send (the send is over) nor causes a second
 * one (nothing here touches the notification's state): a store that is slow or refuses leaves the notification SENT,
 * and the record's bytes wait in the table as a gap (stores/evidence-gaps.ts) for the sweeper to write. Only when
 * the table refuses the gap too is the evidence lost — counted and alarmed (EvidenceLost), logged with ids only.
 */

import {
  evidenceBody,
  evidenceKey,
  type ProviderRequest,
  type RetentionPolicy,
  type SendFacts,
  sendEvidence,
  userPointerKey,
} from '../domain/evidence.ts';
import type { Message } from '../domain/templates.ts';
import type { EvidenceGaps } from '../stores/evidence-gaps.ts';
import type { EvidenceStore } from '../stores/evidence-store.ts';

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
  const retainUntil = new Date(record.retainUntil);
  const since = new Date(acceptedAtMs).toISOString();
  // The record, and the customer's pointer to it: each written once, each a gap of its own when the store fails.
  const objects = [
    { key, body: evidenceBody(record) },
    { key: userPointerKey(n.userId, key), body: Buffer.from(key, 'utf8') },
  ];
  let outcome: EvidenceOutcome = 'written';
  const errors: string[] = [];
  const deadline = Date.now() + Math.min(deps.timeoutMs, timeLeftMs);
  let storeFailed = false;
  for (const o of objects) {
    // Once the store failed, the rest go straight to the gaps: no second wait on a store that is down.
    if (!storeFailed) {
      const timeoutMs = deadline - Date.now();
      try {
        if (timeoutMs <= 0) throw Object.assign(new Error('no time left'), { name: 'NoTimeLeft' });
        await deps.store.put(o.key, o.body, retainUntil, AbortSignal.timeout(timeoutMs));
        continue;
      } catch (e) {
        storeFailed = true;
        errors.push((e as Error)?.name ?? 'Error');
      }
    }
    try {
      await deps.gaps.add({ key: o.key, body: o.body, retainUntil, since });
      if (outcome === 'written') outcome = 'gap';
    } catch (e) {
      errors.push(`gap: ${(e as Error)?.name ?? 'Error'}`);
      outcome = 'lost';
    }
  }
  return errors.length === 0 ? { outcome, key } : { outcome, key, error: errors.join('; ') };
}
