/**
 * A SENT notification's evidence record, rebuilt the way dispatch built it: the message rendered from the item, the
 * provider request from dispatch's own values, the record with the acceptedAt its SENT write kept
 * (dispatch/record-evidence.ts sendProofOf — one function for both). recover-evidence.ts keeps a rebuild only when it
 * hashes to the digest on the item. A message that carried a secret (a one-time code) is not rendered again — the SENT
 * write forgot the secret, and the redacted request's SMS segments depend on its length — but read from the record's
 * bytes its SENT write kept, checked against the same digest. Loaded by the sweeper only when a batch needs it: the
 * templates are large.
 */

import { gunzipSync } from 'node:zlib';
import { providerRequest, type RequestConfig } from '../dispatch/provider-request.ts';
import { type SendProof, sendProofOf } from '../dispatch/record-evidence.ts';
import type { Brand } from '../domain/brand.ts';
import { type SendEvidence, uniformRetention } from '../domain/evidence.ts';
import { sha256Hex } from '../domain/evidence-batch.ts';
import { messageIdOf } from '../domain/message-id.ts';
import type { NotificationItem } from '../domain/notification.ts';
import { loadTemplates } from '../domain/template-sets.ts';
import { render } from '../domain/templates.ts';

export interface RebuildConfig extends RequestConfig {
  readonly brand: Brand;
  readonly retentionDays: number;
}

export function rebuilderOf(
  config: RebuildConfig,
): (item: NotificationItem & { evidence: NonNullable<NotificationItem['evidence']> }) => Promise<SendProof> {
  const deps = {
    retention: uniformRetention(config.retentionDays),
    requestOf: (n: Parameters<typeof providerRequest>[0], m: Parameters<typeof providerRequest>[1]) =>
      providerRequest(n, m, config),
  };
  return async (item) => {
    // A message that carried a secret cannot be rendered again: its record's bytes were kept on the SENT write.
    if (item.evidenceRecord !== undefined) return keptProof(item.evidenceRecord);
    await loadTemplates(item.template);
    const message = render(
      {
        template: item.template,
        locale: item.locale,
        channel: item.channel,
        data: item.data,
        occurredAt: item.occurredAt,
        timeZone: item.timeZone,
      },
      config.brand,
    );
    const messageId = messageIdOf(item);
    if (messageId === undefined) throw new Error(`${item.notificationId} is SENT without a message id`);
    // A push's TTL and collapse id as sent (the SENT write keeps them: they depend on the moment of the send).
    const sent = item.evidence.push === undefined ? message : { ...message, ...item.evidence.push };
    return sendProofOf(deps, item, sent, messageId, Date.parse(item.evidence.acceptedAt));
  };
}

/** The record as dispatch built it, from the bytes its SENT write kept; the caller still checks the digest. */
function keptProof(kept: Uint8Array): SendProof {
  const bytes = gunzipSync(kept);
  return { record: JSON.parse(bytes.toString('utf8')) as SendEvidence, bytes, sha256: sha256Hex(bytes) };
}
