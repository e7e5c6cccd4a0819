import { describe, expect, it } from 'vitest';
import { addressHash, normaliseAddress, suppressedReason } from '../../functions/domain/audience.ts';
import { DELIVERY_RANK, readFeedback } from '../../functions/domain/feedback.ts';
import { sesEvent } from '../support/ses-events.ts';

const NID = 'trf-2026-000123#EMAIL';

describe('reading SES feedback (the AWS documentation example of each event type)', () => {
  it('Delivery → DELIVERED at the delivery time, for the notification named by its tag', () => {
    const r = readFeedback(sesEvent('Delivery', { notificationId: NID, at: '2026-11-30T09:15:03.000Z' }));
    expect(r).toEqual({
      ok: true,
      feedback: {
        target: { notificationId: NID, eventId: 'trf-2026-000123', channel: 'EMAIL' },
        channel: 'EMAIL',
        messageId: 'EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000',
        // When SES accepted the mail: which send of the notification this is about.
        sentAtMs: Date.parse('2026-11-30T09:15:01.000Z'),
        status: 'DELIVERED',
        rank: DELIVERY_RANK.DELIVERED,
        at: '2026-11-30T09:15:03.000Z',
        atMs: Date.parse('2026-11-30T09:15:03.000Z'),
      },
    });
  });

  it('a permanent bounce → BOUNCED with its type, and the bounced address to suppress', () => {
    const r = readFeedback(sesEvent('Bounce', { notificationId: NID, to: 'gone@example.com' }));
    expect(r.ok && r.feedback).toMatchObject({
      status: 'BOUNCED',
      bounceType: 'Permanent',
      bounceSubType: 'General',
      suppress: { cause: 'BOUNCED', addresses: ['gone@example.com'] },
    });
  });

  it('a transient or undetermined bounce → BOUNCED, but suppresses nothing (mailbox full says nothing lasting)', () => {
    for (const bounceType of ['Transient', 'Undetermined'] as const) {
      const r = readFeedback(sesEvent('Bounce', { notificationId: NID, bounceType, bounceSubType: 'MailboxFull' }));
      expect(r.ok && r.feedback.status).toBe('BOUNCED');
      expect(r.ok && r.feedback.suppress).toBeUndefined();
    }
  });

  it('Complaint → COMPLAINED and the complaining address to suppress', () => {
    const r = readFeedback(sesEvent('Complaint', { notificationId: NID, to: 'angry@example.com' }));
    expect(r.ok && r.feedback).toMatchObject({
      status: 'COMPLAINED',
      suppress: { cause: 'COMPLAINED', addresses: ['angry@example.com'] },
    });
  });

  it('Reject → REJECTED at the send time (a reject carries no time of its own); nothing suppressed', () => {
    const r = readFeedback(sesEvent('Reject', { notificationId: NID }));
    expect(r.ok && r.feedback).toMatchObject({ status: 'REJECTED', at: '2026-11-30T09:15:01.000Z' });
    expect(r.ok && r.feedback.suppress).toBeUndefined();
  });

  it('DeliveryDelay → DELAYED, the lowest rank: anything final replaces it', () => {
    const r = readFeedback(sesEvent('DeliveryDelay', { notificationId: NID }));
    expect(r.ok && r.feedback.status).toBe('DELAYED');
    expect(DELIVERY_RANK.DELAYED).toBeLessThan(DELIVERY_RANK.DELIVERED);
    expect(DELIVERY_RANK.DELIVERED).toBeLessThan(DELIVERY_RANK.BOUNCED);
    expect(DELIVERY_RANK.BOUNCED).toBeLessThan(DELIVERY_RANK.COMPLAINED);
  });

  it('an event whose times cannot be read still ranks, at the epoch (DynamoDB refuses NaN: it would be parked)', () => {
    const e = sesEvent('Delivery', { notificationId: NID, at: 'not a time' }) as {
      detail: { mail: { timestamp: string } };
    };
    e.detail.mail.timestamp = 'not a time either';
    const r = readFeedback(e);
    expect(r.ok && r.feedback).toMatchObject({ status: 'DELIVERED', atMs: 0, at: '1970-01-01T00:00:00.000Z' });
  });

  it('mail without our tag, another source, other SES types and malformed records are ignored with a reason', () => {
    expect(readFeedback(sesEvent('Delivery', { notificationId: undefined }))).toMatchObject({
      ok: false,
      ignored: { reason: 'NOT_OURS' },
    });
    expect(readFeedback({ ...sesEvent('Delivery', { notificationId: NID }), source: 'aws.s3' })).toMatchObject({
      ignored: { reason: 'NOT_AN_SES_EVENT' },
    });
    expect(
      readFeedback({ ...sesEvent('Delivery', { notificationId: NID }), 'detail-type': 'Email Opened' }),
    ).toMatchObject({ ignored: { reason: 'UNSUPPORTED_TYPE' } });
    expect(readFeedback({ ...sesEvent('Bounce', { notificationId: NID }), detail: { mail: {} } })).toMatchObject({
      ignored: { reason: 'MALFORMED' },
    });
    expect(readFeedback(null)).toMatchObject({ ignored: { reason: 'NOT_AN_SES_EVENT' } });
    // A tag that decodes to something that is not one of our notificationIds (or an SMS one) is not ours.
    for (const id of ['no-hash', 'x#SMS', `${'a'.repeat(129)}#EMAIL`, 'bad id#EMAIL']) {
      expect(readFeedback(sesEvent('Delivery', { notificationId: id }))).toMatchObject({
        ignored: { reason: 'NOT_OURS' },
      });
    }
  });
});

describe('suppression keys and the audience rule', () => {
  it('hashes the normalised address: case and spaces do not make a second key; no address in clear', () => {
    expect(addressHash('EMAIL', ' Hanako@Example.COM ')).toBe(addressHash('EMAIL', 'hanako@example.com'));
    expect(addressHash('EMAIL', 'hanako@example.com')).toMatch(/^[0-9a-f]{64}$/);
    expect(normaliseAddress('SMS', ' +819012345678 ')).toBe('+819012345678');
  });

  it('an active suppression wins over preferences; a lifted one does not count; opted-out channels are OPTED_OUT', () => {
    const n = { channel: 'EMAIL' as const, template: 'TransferCompleted' as const };
    expect(suppressedReason(n, { state: 'ACTIVE', cause: 'COMPLAINED' }, { optOut: ['EMAIL'] })).toBe('COMPLAINED');
    expect(suppressedReason(n, { state: 'LIFTED', cause: 'BOUNCED' }, undefined)).toBeUndefined();
    expect(suppressedReason(n, undefined, { optOut: ['EMAIL'] })).toBe('OPTED_OUT');
    expect(suppressedReason(n, undefined, { optOut: ['SMS'] })).toBeUndefined();
    expect(suppressedReason(n, undefined, { optOut: [] })).toBeUndefined();
  });
});
