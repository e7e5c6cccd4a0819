/**
 * A secret (a one-time code) is sent and never kept (docs/evidence-and-privacy.md "Secrets"): ingest hashes its keyed
 * MAC, never the code; a record it cannot accept keeps a copy with the code masked; the evidence of a send keeps the
 * message with the code redacted and its MAC, so "was this code sent" can be proven by whoever may compute the MAC.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { providerRequest } from '../../functions/dispatch/senders.ts';
import { sendEvidence, uniformRetention } from '../../functions/domain/evidence.ts';
import { buildNotification, type NotificationItem, type QuarantineItem } from '../../functions/domain/notification.ts';
import { macDigest, REDACTED, secretMacMessage } from '../../functions/domain/secrets.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { render } from '../../functions/domain/templates.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';
import { MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';
import { TEST_SECRET_KEY } from '../support/secret-mac.ts';

// Rendering reads the compiled templates, which the functions load per type on first use (template-sets.ts).
await loadAllTemplates();

const CODE = '482913';
const otp = (over: Record<string, unknown> = {}, data: Record<string, unknown> = {}) =>
  transferEvent({
    eventId: 'otp-1',
    type: 'OneTimePasscode',
    occurredAt: '2026-11-30T09:15:00Z',
    data: { code: CODE, purpose: 'SIGN_IN', ...data },
    ...over,
  });
const ingest = async (store: MemoryInboxStore, values: object[], over = {}) =>
  (
    await ingestBatch(
      mskEvent(values.map((value, offset) => ({ topic: 't', partition: 0, offset, value }))),
      memoryBatchDeps(store, { maxEventAgeSeconds: 0, ...over }),
    )
  ).results;
const items = (store: MemoryInboxStore) => [...store.items.values()];

describe('ingest: a secret is MACed, never hashed or stored in the clear', () => {
  it('the inbox holds a hash over the code’s MAC; the notification holds the code apart from its data, with the MAC', async () => {
    const store = new MemoryInboxStore();
    expect((await ingest(store, [otp()]))[0]?.kind).toBe('accepted');
    const inbox = items(store).find((i) => i.kind === 'INBOX');
    expect(JSON.stringify(inbox)).not.toContain(CODE);
    const sms = items(store).find((i) => i.kind === 'NOTIFICATION' && i.channel === 'SMS') as NotificationItem;
    expect(sms.data).toEqual({ purpose: 'SIGN_IN' });
    expect(sms.secrets).toEqual({ code: CODE });
    const mac = createHmac('sha256', TEST_SECRET_KEY)
      .update(secretMacMessage('otp-1', 'code', CODE))
      .digest();
    expect(sms.secretDigests).toEqual({ code: macDigest(mac) });
    expect(sms.secretKeyId).toBe('test');
  });

  it('the same code resent is a duplicate; another code under the same eventId is a conflict whose copy masks both', async () => {
    const store = new MemoryInboxStore();
    await ingest(store, [otp()]);
    expect((await ingest(store, [otp()]))[0]?.kind).toBe('duplicate');
    expect((await ingest(store, [otp({}, { code: '999111' })]))[0]?.kind).toBe('conflict');
    const copy = items(store).find((i) => i.kind === 'QUARANTINE') as QuarantineItem;
    const kept = Buffer.from(copy.raw, 'base64').toString();
    expect(kept).not.toContain('999111');
    expect(kept).toContain('"code":"******"');
    expect(copy.detail).not.toContain('999111');
  });

  it('a malformed code is refused, and its quarantined copy masks it, its length kept', async () => {
    const store = new MemoryInboxStore();
    const [r] = await ingest(store, [otp({}, { code: '48 29 13' })]);
    expect(r).toMatchObject({ kind: 'quarantined', rejection: { reason: 'SCHEMA_VIOLATION' } });
    const copy = items(store).find((i) => i.kind === 'QUARANTINE') as QuarantineItem;
    expect(Buffer.from(copy.raw, 'base64').toString()).toContain('"code":"********"');
  });

  it.each([
    ['a JSON number (a serializer’s int field)', { type: 'OneTimePasscode' }, { code: 482913 }],
    ['under the type spelled another way', { type: 'ONE_TIME_PASSCODE' }, {}],
    ['under the type in lower case', { type: 'onetimepasscode' }, {}],
  ])('a code refused as %s is masked in the quarantined copy, never kept', async (_, over, data) => {
    const store = new MemoryInboxStore();
    const [r] = await ingest(store, [otp(over, data)]);
    expect(r).toMatchObject({ kind: 'quarantined' });
    const copy = items(store).find((i) => i.kind === 'QUARANTINE') as QuarantineItem;
    expect(Buffer.from(copy.raw, 'base64').toString()).not.toContain(CODE);
    expect(copy.detail).not.toContain(CODE);
  });

  it('without a key an event with a secret is quarantined, never hashed with the code in the clear', async () => {
    const store = new MemoryInboxStore();
    const [r] = await ingest(store, [otp()], { secretMac: undefined });
    expect(r).toMatchObject({ kind: 'quarantined', rejection: { reason: 'UNPROCESSABLE' } });
    expect(JSON.stringify(items(store))).not.toContain(CODE);
  });
});

describe('the evidence of a send: the message with the code redacted, and the code’s MAC', () => {
  it.each(['SMS', 'PUSH'] as const)('%s', (channel) => {
    const event = decodeTransfer(otp()).event;
    const seal = { keyId: 'arn:aws:kms:ap-northeast-1:123456789012:key/mac', digests: { code: 'HMAC_SHA_256:abc=' } };
    const address = channel === 'SMS' ? '+819012345678' : String(event.recipient.pushEndpointArn);
    const n = {
      ...buildNotification(event, channel, address, Date.now(), { retentionDays: 35 }, undefined, seal),
      attempt: 1,
    };
    const message = render({ ...n, data: { ...n.data, ...n.secrets } }, EXAMPLE_BRAND);
    const request = providerRequest(n, message, { senderEmail: 'n@example.com' });
    expect(JSON.stringify(request)).toContain(CODE);
    const record = sendEvidence(n, request, 'm-1', Date.now(), uniformRetention(2557));
    const body = JSON.stringify(record);
    expect(body).not.toContain(CODE);
    expect(body).toContain(REDACTED);
    expect(record.secrets).toEqual({
      code: {
        redactedAs: REDACTED,
        mac: 'HMAC_SHA_256:abc=',
        keyId: seal.keyId,
        covers: expect.stringContaining('notifier.secret.v1'),
      },
    });
    const sent = record.request;
    if (sent.channel === 'PUSH') expect(() => JSON.parse(sent.payload)).not.toThrow();
  });
});
