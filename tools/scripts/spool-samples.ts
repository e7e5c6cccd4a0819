/**
 * Evidence records as dispatch builds them, of every notice type, channel and language: what the spool's dictionary
 * is built from (tools/scripts/spool-dictionary.ts) and what its tests and the bench's comparison compress. Fixed
 * dates and ids: the same records every run, so the dictionary built from them is the same bytes every run.
 */
// The card number and IBAN rules the decoder masks with (ingest alone loads them on demand).
import '../../functions/domain/card-rules.ts';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { providerRequest } from '../../functions/dispatch/provider-request.ts';
import type { Brand } from '../../functions/domain/brand.ts';
import { definitionOf } from '../../functions/domain/catalogue.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import {
  type EvidenceRecord,
  evidenceBody,
  feedbackEvidence,
  sendEvidence,
  uniformRetention,
} from '../../functions/domain/evidence.ts';
import type { Feedback } from '../../functions/domain/feedback.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { contactFor } from '../../functions/domain/routing.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { render } from '../../functions/domain/templates.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';
import { CATALOGUE_EXAMPLES } from '../local/sample.ts';

const ACCEPTED_AT = Date.parse('2026-11-30T09:15:02.345Z');
const RETENTION_DAYS = 2_557;
const SEAL = { keyId: 'alias/notifier-secret-mac', digest: `HMAC_SHA_256:${'Q'.repeat(43)}=` };
const SENDER = { senderEmail: 'notices@bank.example', configurationSet: 'notifier-events' };

/** A provider's message id as SES (`0100…-<uuid>-000000`) and SNS (a UUID) answer, from the notification's id. */
function messageIdOf(notificationId: string, channel: Channel): string {
  const h = createHash('sha256').update(notificationId).digest('hex');
  const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
  return channel === 'EMAIL' ? `0100019${h.slice(32, 41)}-${uuid}-000000` : uuid;
}

/** A transfer of each kind, for an en and a ja customer (the catalogue's examples have every other type). */
export function transferValues(prefix = 'sample', n = 1): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) =>
    (['TransferCompleted', 'TransferFailed'] as const).flatMap((type) => [
      {
        eventId: `${prefix}-en-${type}-${i}`,
        type,
        occurredAt: '2026-11-30T09:15:00Z',
        recipient: {
          userId: `u-${prefix}-${i}`,
          locale: 'en',
          email: `customer${i}@example.com`,
          pushEndpointArn: `arn:aws:sns:us-east-1:123456789012:endpoint/GCM/bank-app/9a8b7c6d-5e4f-3a2b-1c0d-${String(i).padStart(12, '0')}`,
          phoneNumber: `+1415555${String(1000 + i).slice(-4)}`,
          timeZone: 'America/New_York',
        },
        data: {
          transferId: `t-${7000 + i}`,
          amount: `${(125 + i * 3.5).toFixed(2)}`,
          currency: 'USD',
          counterpartyName: 'Jordan Lee',
          reason: 'insufficient funds',
        },
      },
      {
        eventId: `${prefix}-ja-${type}-${i}`,
        type,
        occurredAt: '2026-11-30T09:15:00Z',
        recipient: {
          userId: `u-${prefix}-ja-${i}`,
          locale: 'ja',
          email: `kokyaku${i}@example.jp`,
          pushEndpointArn: `arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/0f9c1d2e-3b4a-5c6d-7e8f-${String(i).padStart(12, '0')}`,
          phoneNumber: `+8190${String(10_000_000 + i).slice(-8)}`,
        },
        data: {
          transferId: `t-${9000 + i}`,
          amount: String(10_000 + i * 500),
          currency: 'JPY',
          counterpartyName: '山田 太郎',
          reason: '残高不足',
        },
      },
    ]),
  ).flat();
}

/** The catalogue's examples (examples/catalogue.jsonl): one event of every other type, for an en and a ja customer. */
export function catalogueValues(): Record<string, unknown>[] {
  return readFileSync(CATALOGUE_EXAMPLES, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The provider's report that the send was delivered, as the feedback function records it. */
function reportOn(n: { notificationId: string; eventId: string; channel: Channel }, messageId: string) {
  const at = ACCEPTED_AT + 1_775;
  const feedback: Feedback = {
    channel: n.channel,
    messageId,
    status: 'DELIVERED',
    rank: 1,
    at: new Date(at).toISOString(),
    atMs: at,
    sentAtMs: ACCEPTED_AT,
    ...(n.channel === 'EMAIL' ? {} : { providerResponse: 'Message has been accepted by phone carrier' }),
  };
  return feedbackEvidence(n, feedback, ACCEPTED_AT + 60_000, RETENTION_DAYS);
}

/** Each event's records: a send on every channel its type has and its customer can be reached on, and a report. */
export async function sampleRecords(
  values: readonly Record<string, unknown>[],
  brand: Brand = EXAMPLE_BRAND,
): Promise<EvidenceRecord[]> {
  await loadAllTemplates();
  const records: EvidenceRecord[] = [];
  for (const value of values) {
    const d = decodeRecordValue(Buffer.from(JSON.stringify(value)).toString('base64'), 65_536);
    if (!isTransfer(d)) throw new Error(`sample event ${String(value.eventId)} refused`);
    const event = d.event;
    const channels = (definitionOf(event.type)?.channels ?? []) as readonly Channel[];
    for (const channel of channels) {
      const address = contactFor(event.recipient, channel);
      if (address === undefined) continue;
      const digests = Object.fromEntries(
        Object.keys(event.data)
          .filter((k) => k === 'code')
          .map((k) => [k, SEAL.digest]),
      );
      const item = buildNotification(event, channel, address, ACCEPTED_AT - 2_000, { retentionDays: 35 }, undefined, {
        digests,
        keyId: SEAL.keyId,
      });
      const message = render(
        {
          template: item.template,
          locale: item.locale,
          channel,
          data: { ...item.data, ...item.secrets },
          occurredAt: item.occurredAt,
          timeZone: item.timeZone,
        },
        brand,
      );
      const request = providerRequest(item, message, SENDER);
      const messageId = messageIdOf(item.notificationId, channel);
      const send = sendEvidence(
        { ...item, attempt: 1 },
        request,
        messageId,
        ACCEPTED_AT,
        uniformRetention(RETENTION_DAYS),
      );
      records.push(send);
      records.push(reportOn(item, messageId));
    }
  }
  return records;
}

export const bytesOf = (records: readonly EvidenceRecord[]) => records.map(evidenceBody);
