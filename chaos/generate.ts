/**
 * Generating a run: the events (fast-check arbitraries with provider modes, display-text cases, producers' input cases
 * and too-old events),
 * the names third parties write, and the seeded randomness that makes a seed replay the whole schedule.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Channel } from '../functions/domain/event.ts';
import { type EventSpec, PROVIDER_MODES, type ProviderMode, TOO_OLD_OCCURRED_AT } from './model.ts';
import { DISPLAY_TEXT_CASES, INPUT_CASES } from './poison.ts';

export const NAMES = [
  'Taro Yamada',
  '山田 太郎',
  'Jordan Lee',
  '<script>alert(1)</script>',
  'O\'Brien & "Sons"',
  'Ünïcödé ✓',
  // Third-party names as an attacker writes them: accepted, sent clean.
  'Pat\r\nBcc: all@example.com',
  '\u202egnp.exe',
  'Lee\u2028\u0000',
];

/** Gives an event a display-text case (its name or its reason, a TransferFailed for a reason) or makes it too old. */
export function withCase(spec: EventSpec, display: number | undefined, tooOld: boolean): EventSpec {
  if (tooOld) return { ...spec, tooOld, value: { ...spec.value, occurredAt: TOO_OLD_OCCURRED_AT } };
  if (display === undefined) return spec;
  const c = DISPLAY_TEXT_CASES[display]!;
  const data = { ...(spec.value.data as Record<string, unknown>), [c.field]: c.value };
  const value = { ...spec.value, data, ...(c.field === 'reason' ? { type: 'TransferFailed' } : {}) };
  return { ...spec, display, value };
}

/**
 * The contact points of the run's event `idIndex`: they follow the eventId, so every send the providers accept can be
 * tied back to (eventId, channel); the phone number and push endpoint leave the run's prefix out, so two runs of one
 * seed send to the same ones.
 */
export function contactPoints(prefix: string, idIndex: number) {
  return {
    email: `${prefix}${idIndex}@example.com`,
    pushEndpointArn: `arn:aws:sns:us-east-1:123456789012:endpoint/APNS/app/${createHash('sha256').update(`e${idIndex}`).digest('hex').slice(0, 32)}`,
    phoneNumber: `+1${String(2_000_000_000 + (hashInt(`e${idIndex}`) % 7_000_000_000)).slice(0, 10)}`,
  };
}

/** Gives an event a producer's input case (INPUT_CASES): all three contact points, then the case's rewrite. */
export function withInput(spec: EventSpec, input: number, idIndex: number, prefix: string): EventSpec {
  const c = INPUT_CASES[input]!;
  const value = structuredClone(spec.value);
  delete value.channels;
  value.recipient = { ...(value.recipient as Record<string, unknown>), ...contactPoints(prefix, idIndex) };
  c.apply(value);
  return { ...spec, input, value };
}

export function eventArbitrary(providerFaultRate: number) {
  const mode = fc.oneof(
    { weight: Math.round((1 - providerFaultRate) * 100), arbitrary: fc.constant<ProviderMode>('ok') },
    {
      weight: Math.max(1, Math.round(providerFaultRate * 100)),
      arbitrary: fc.constantFrom<ProviderMode>(...PROVIDER_MODES.slice(1)),
    },
  );
  return fc
    .record({
      type: fc.constantFrom('TransferCompleted', 'TransferFailed'),
      locale: fc.constantFrom('en', 'ja'),
      channels: fc.subarray(['EMAIL', 'PUSH', 'SMS'] as Channel[], { minLength: 1 }),
      listChannels: fc.boolean(),
      amount: fc.tuple(fc.integer({ min: 0, max: 9_999_999 }), fc.integer({ min: 0, max: 99 })),
      currency: fc.constantFrom('JPY', 'USD', 'EUR'),
      name: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
      protoKey: fc.boolean(),
      modes: fc.record({ EMAIL: mode, PUSH: mode, SMS: mode }),
    })
    .map((g) => (i: number, prefix: string, idIndex: number): EventSpec => {
      const eventId = `${prefix}e${idIndex}`;
      const all = contactPoints(prefix, idIndex);
      const contact: Record<string, string> = {};
      if (g.channels.includes('EMAIL')) contact.email = all.email;
      if (g.channels.includes('PUSH')) contact.pushEndpointArn = all.pushEndpointArn;
      if (g.channels.includes('SMS')) contact.phoneNumber = all.phoneNumber;
      const value: Record<string, unknown> = {
        eventId,
        type: g.type,
        occurredAt: '2026-11-30T09:15:00Z',
        recipient: { userId: `u-${idIndex}`, locale: g.locale, ...contact },
        data: {
          transferId: `t-${idIndex}`,
          amount: g.currency === 'JPY' ? String(g.amount[0]) : `${g.amount[0]}.${String(g.amount[1]).padStart(2, '0')}`,
          currency: g.currency,
          ...(g.name === undefined ? {} : { counterpartyName: g.name }),
          ...(g.type === 'TransferFailed' ? { reason: 'insufficient funds' } : {}),
        },
        ...(g.listChannels ? { channels: g.channels } : {}),
      };
      if (g.protoKey) Object.defineProperty(value, '__proto__', { value: { polluted: true }, enumerable: true });
      return { i, eventId, value, modes: g.modes };
    });
}

export const hashInt = (s: string) => createHash('sha256').update(s).digest().readUInt32BE(0);

/** mulberry32: a small seeded PRNG for the delivery schedule, so a seed replays the whole run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
