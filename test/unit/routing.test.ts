import { describe, expect, it } from 'vitest';
import { type BankingEvent, parseEventJson } from '../../functions/domain/event.ts';
import { ALLOWED_CHANNELS, route } from '../../functions/domain/routing.ts';
import { type EventOverrides, transferEvent } from '../support/events.ts';

const event = (o: EventOverrides = {}): BankingEvent => {
  const d = parseEventJson(JSON.stringify(transferEvent(o)));
  if (!d.ok) throw new Error(d.rejection.detail);
  return d.event;
};

describe('routing', () => {
  it('allows EMAIL, PUSH and SMS for both transfer types', () => {
    expect(ALLOWED_CHANNELS.TransferCompleted).toEqual(['EMAIL', 'PUSH', 'SMS']);
    expect(ALLOWED_CHANNELS.TransferFailed).toEqual(['EMAIL', 'PUSH', 'SMS']);
  });

  it('fans out to every channel the recipient has a contact point for', () => {
    expect(route(event())).toEqual({ ok: true, channels: ['EMAIL', 'PUSH', 'SMS'] });
    expect(route(event({ recipient: { phoneNumber: undefined } }))).toEqual({ ok: true, channels: ['EMAIL', 'PUSH'] });
  });

  it('restricts the fan-out to the listed channels, in canonical order', () => {
    expect(route(event({ channels: ['PUSH', 'EMAIL'] }))).toEqual({ ok: true, channels: ['EMAIL', 'PUSH'] });
  });

  it('rejects a listed channel without its contact point as MISSING_CONTACT', () => {
    const r = route(event({ channels: ['SMS'], recipient: { phoneNumber: undefined } }));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.rejection.reason).toBe('MISSING_CONTACT');
  });

  it('yields no channel for a recipient without contact points', () => {
    const r = route(event({ recipient: { email: undefined, pushEndpointArn: undefined, phoneNumber: undefined } }));
    expect(r).toEqual({ ok: true, channels: [] });
  });
});
