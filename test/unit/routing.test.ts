import { describe, expect, it } from 'vitest';
import { allowedChannels } from '../../functions/domain/catalogue.ts';
import { type Route, route } from '../../functions/domain/routing.ts';
import { decodeTransfer, type EventOverrides, transferEvent } from '../support/events.ts';

/** Routes the event as admission does: with the contact points the decoder refused. */
const routed = (o: EventOverrides = {}): Route => {
  const d = decodeTransfer(transferEvent(o));
  return route(d.event, d.contactRefusals);
};

describe('routing', () => {
  it('allows EMAIL, PUSH and SMS for both transfer types', () => {
    expect(allowedChannels('TransferCompleted')).toEqual(['EMAIL', 'PUSH', 'SMS']);
    expect(allowedChannels('TransferFailed')).toEqual(['EMAIL', 'PUSH', 'SMS']);
  });

  it('fans out to every channel the recipient has a contact point for', () => {
    expect(routed()).toEqual({ ok: true, channels: ['EMAIL', 'PUSH', 'SMS'], refused: [] });
    expect(routed({ recipient: { phoneNumber: undefined } })).toEqual({
      ok: true,
      channels: ['EMAIL', 'PUSH'],
      refused: [],
    });
  });

  it('restricts the fan-out to the listed channels, in canonical order', () => {
    expect(routed({ channels: ['PUSH', 'EMAIL'] })).toEqual({ ok: true, channels: ['EMAIL', 'PUSH'], refused: [] });
  });

  it('an empty channel list records the event and sends nothing (not a refusal)', () => {
    expect(routed({ channels: [] })).toEqual({ ok: true, channels: [], refused: [] });
  });

  it('a listed channel without its contact point is refused alone (MISSING_CONTACT); the others are sent', () => {
    expect(routed({ channels: ['EMAIL', 'SMS'], recipient: { phoneNumber: undefined } })).toEqual({
      ok: true,
      channels: ['EMAIL'],
      refused: [
        { channel: 'SMS', reason: 'MISSING_CONTACT', detail: 'channel SMS requested without its contact point' },
      ],
    });
  });

  it('a bad contact point refuses its channel only, listed or not; a channel not wanted refuses nothing', () => {
    const r = routed({ recipient: { phoneNumber: '090-1234-5678' } });
    expect(r).toMatchObject({
      ok: true,
      channels: ['EMAIL', 'PUSH'],
      refused: [{ channel: 'SMS', reason: 'INVALID_CONTACT' }],
    });
    expect(!r.ok || r.refused[0]?.detail).toMatch(/no country code.*\(at recipient\.phoneNumber\)$/);
    expect(routed({ channels: ['EMAIL'], recipient: { phoneNumber: '090-1234-5678' } })).toEqual({
      ok: true,
      channels: ['EMAIL'],
      refused: [],
    });
  });

  it('every wanted channel refused: nothing would reach the customer, so the event is rejected with the first reason', () => {
    const r = routed({ channels: ['SMS'], recipient: { phoneNumber: undefined } });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.rejection.reason).toBe('MISSING_CONTACT');
    const all = routed({
      recipient: { email: '山田@example.jp', pushEndpointArn: 'arn:aws:sns:x', phoneNumber: '0312345678' },
    });
    expect(!all.ok && all.rejection).toMatchObject({ reason: 'UNSENDABLE_ADDRESS', eventId: 'trf-2026-000123' });
    expect(!all.ok && all.rejection.detail).toMatch(
      /^every channel refused: EMAIL UNSENDABLE_ADDRESS .*; PUSH INVALID_CONTACT .*; SMS INVALID_CONTACT /,
    );
    expect(!all.ok && all.rejection.detail).not.toContain('0312345678');
  });

  it('yields no channel for a recipient without contact points', () => {
    const r = routed({ recipient: { email: undefined, pushEndpointArn: undefined, phoneNumber: undefined } });
    expect(r).toEqual({ ok: true, channels: [], refused: [] });
  });
});
