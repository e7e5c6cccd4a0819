/**
 * Generating a run: the events (fast-check arbitraries with provider modes, display-text cases, producers' input cases
 * and too-old events),
 * the names third parties write, and the seeded randomness that makes a seed replay the whole schedule.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Channel } from '../../functions/domain/channels.ts';
import { CONTACT_FIELD_OF } from '../../functions/domain/contact.ts';
import { SENT_TO_ENDPOINT } from '../../functions/domain/push-endpoint.ts';
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

/** Modes that mean something only for a push endpoint. */
export const PUSH_ONLY_MODES: readonly ProviderMode[] = ['foreignEndpoint'];
/** The account the chaos world's role belongs to (the SNS emulator refuses other accounts' endpoints). */
export const OWN_ACCOUNT = '123456789012';
const FOREIGN_ACCOUNT = '999988887777';
/** The two push platform applications the run's endpoints belong to; the scenario disables the first for a while. */
export const PUSH_APPS = ['APNS/app', 'GCM/app-android'] as const;

/** The push endpoint of event `idIndex`: on one of the two applications, in our account unless it is foreign. */
export function pushEndpointArn(idIndex: number, foreign = false): string {
  const id = createHash('sha256').update(`e${idIndex}`).digest('hex').slice(0, 32);
  const app = PUSH_APPS[hashInt(`app${idIndex}`) % PUSH_APPS.length];
  return `arn:aws:sns:us-east-1:${foreign ? FOREIGN_ACCOUNT : OWN_ACCOUNT}:endpoint/${app}/${id}`;
}

/** The platform application (PLATFORM/name) of a push endpoint ARN. */
export const pushAppOf = (arn: string) => arn.split(':endpoint/')[1]?.split('/').slice(0, 2).join('/') ?? '';

/** `spec` with `mode` on `channel` (a push endpoint of another account for foreignEndpoint); unchanged when the event has no such channel. */
export function withMode(spec: EventSpec, channel: Channel, mode: ProviderMode): EventSpec {
  const recipient = spec.value.recipient as Record<string, string>;
  const address = recipient[CONTACT_FIELD_OF[channel]];
  const endpoint = SENT_TO_ENDPOINT[channel];
  if (address === undefined || (PUSH_ONLY_MODES.includes(mode) && !endpoint)) return spec;
  const foreign = endpoint && mode === 'foreignEndpoint';
  const idIndex = Number(/e(\d+)$/.exec(spec.eventId)?.[1] ?? spec.i);
  const value = endpoint
    ? { ...spec.value, recipient: { ...recipient, pushEndpointArn: pushEndpointArn(idIndex, foreign) } }
    : spec.value;
  return { ...spec, value, modes: { ...spec.modes, [channel]: mode } };
}

/**
 * The contact points of the run's event `idIndex`: they follow the eventId, so every send the providers accept can be
 * tied back to (eventId, channel); the phone number and push endpoint leave the run's prefix out, so two runs of one
 * seed send to the same ones.
 */
export function contactPoints(prefix: string, idIndex: number) {
  return {
    email: `${prefix}${idIndex}@example.com`,
    pushEndpointArn: pushEndpointArn(idIndex),
    phoneNumber: `+1${String(2_000_000_000 + (hashInt(`e${idIndex}`) % 7_000_000_000)).slice(0, 10)}`,
  };
}

/** Gives an event a producer's input case (INPUT_CASES): all three contact points, then the case's rewrite. */
export function withInput(spec: EventSpec, input: number, idIndex: number, prefix: string): EventSpec {
  const c = INPUT_CASES[input]!;
  const value = structuredClone(spec.value);
  delete value.channels;
  // A push endpoint of another account stays one: the event's PUSH mode still says what its send must meet.
  const contacts = contactPoints(prefix, idIndex);
  if (spec.modes.PUSH === 'foreignEndpoint') contacts.pushEndpointArn = pushEndpointArn(idIndex, true);
  value.recipient = { ...(value.recipient as Record<string, unknown>), ...contacts };
  c.apply(value);
  return { ...spec, input, value };
}

export function eventArbitrary(providerFaultRate: number) {
  const modeOf = (modes: readonly ProviderMode[]) =>
    fc.oneof(
      { weight: Math.round((1 - providerFaultRate) * 100), arbitrary: fc.constant<ProviderMode>('ok') },
      {
        weight: Math.max(1, Math.round(providerFaultRate * 100)),
        arbitrary: fc.constantFrom<ProviderMode>(...modes),
      },
    );
  const mode = modeOf(PROVIDER_MODES.slice(1).filter((m) => !PUSH_ONLY_MODES.includes(m)));
  const pushMode = modeOf(PROVIDER_MODES.slice(1));
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
      modes: fc.record({ EMAIL: mode, PUSH: pushMode, SMS: mode }),
    })
    .map((g) => (i: number, prefix: string, idIndex: number): EventSpec => {
      const eventId = `${prefix}e${idIndex}`;
      const all = contactPoints(prefix, idIndex);
      const contact: Record<string, string> = {};
      const addressOf: Record<Channel, () => string> = {
        EMAIL: () => all.email,
        PUSH: () => pushEndpointArn(idIndex, g.modes.PUSH === 'foreignEndpoint'),
        SMS: () => all.phoneNumber,
      };
      for (const channel of g.channels) contact[CONTACT_FIELD_OF[channel]] = addressOf[channel]();
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

/**
 * A customer's PreferencesUpdated: the whole opt-out set at `occurredAt` (a far-future one models a producer's clock
 * or data bug: admission decides whether it is let in).
 */
export function preferencesValue(
  eventId: string,
  userId: string,
  optOut: Channel[],
  occurredAt: string,
): Record<string, unknown> {
  return { eventId, type: 'PreferencesUpdated', occurredAt, recipient: { userId }, data: { optOut } };
}

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
