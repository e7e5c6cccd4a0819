/** A send's evidence record as dispatch builds it (the spool's tests): an SMS or an email, its bytes and digest. */
import type { SendProof } from '../../functions/dispatch/record-evidence.ts';
import { evidenceBody, sendEvidence, smsRequest, uniformRetention } from '../../functions/domain/evidence.ts';
import { sha256Hex } from '../../functions/domain/evidence-batch.ts';

export const RETENTION = 2_557;

export function proofOf(
  eventId: string,
  acceptedAtMs: number,
  text = 'Example Bank: your transfer is complete.',
  channel: 'SMS' | 'EMAIL' = 'SMS',
): SendProof {
  const request =
    channel === 'SMS'
      ? smsRequest('+14255550100', text)
      : ({
          channel: 'EMAIL',
          api: 'ses:SendEmail',
          source: 'Example Bank <n@bank.example>',
          to: ['ana@example.com'],
          subject: 'Your transfer',
          text,
          html: `<p>${text}</p>`,
          charset: 'UTF-8',
          tags: [],
        } as const);
  const record = sendEvidence(
    {
      notificationId: `${eventId}#${channel}`,
      eventId,
      channel,
      userId: `u-${eventId}`,
      template: 'TransferCompleted',
      locale: 'en-US',
      attempt: 1,
    },
    request,
    `msg-${eventId}`,
    acceptedAtMs,
    uniformRetention(RETENTION),
  );
  const bytes = evidenceBody(record);
  return { record, bytes, sha256: sha256Hex(bytes) };
}
