/**
 * The right moment's pure rules and what a push carries of it (docs/dispatch.md "The right moment"): the send window
 * in the customer's zone across midnight and DST, validity before the window, the catalogue compiler's refusals, and
 * the exact SNS message attributes each platform's push is published with (aws-sdk-client-mock on the real sender).
 */
import { SESClient } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { beforeEach, describe, expect, it } from 'vitest';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { definitionOf, readCatalogue } from '../../functions/domain/catalogue.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { resendRefusal } from '../../functions/domain/resend.ts';
import { momentVerdict, pushAttributes, windowOpening } from '../../functions/domain/send-moment.ts';
import type { Message } from '../../functions/domain/templates.ts';
import { whyOf } from '../../functions/operator/why.ts';
import { providerMocks } from '../support/aws-mocks.ts';

const at = (iso: string) => Date.parse(iso);
const DAY = { from: '08:00', until: '21:00' };
const NIGHT = { from: '22:00', until: '06:00' };

describe('a send window in the customer’s time zone', () => {
  it.each([
    [
      '3 a.m. in New York: opens at 08:00 the same day',
      DAY,
      'America/New_York',
      '2026-06-10T07:00:00Z',
      '2026-06-10T12:00:00Z',
    ],
    [
      '21:30 in New York: opens at 08:00 the next day, across midnight',
      DAY,
      'America/New_York',
      '2026-06-11T01:30:00Z',
      '2026-06-11T12:00:00Z',
    ],
    ['21:00 exactly is outside (until is excluded)', DAY, 'Asia/Tokyo', '2026-06-10T12:00:00Z', '2026-06-10T23:00:00Z'],
    [
      'before the spring change (01:30 EST): opens at 08:00 EDT, 12:00Z',
      DAY,
      'America/New_York',
      '2026-03-08T06:30:00Z',
      '2026-03-08T12:00:00Z',
    ],
    [
      'before the autumn change (23:30 EDT): opens at 08:00 EST, 13:00Z',
      DAY,
      'America/New_York',
      '2026-11-01T03:30:00Z',
      '2026-11-01T13:00:00Z',
    ],
    [
      'London before its spring change (00:30 GMT): opens 08:00 BST',
      DAY,
      'Europe/London',
      '2026-03-29T00:30:00Z',
      '2026-03-29T07:00:00Z',
    ],
    [
      'a window across midnight, at noon: opens at 22:00',
      NIGHT,
      'Asia/Tokyo',
      '2026-06-10T03:00:00Z',
      '2026-06-10T13:00:00Z',
    ],
  ])('%s', (_, window, zone, now, opens) => {
    expect(new Date(windowOpening(window, zone, at(now)) ?? 0).toISOString()).toBe(new Date(at(opens)).toISOString());
  });

  it.each([
    ['08:00 exactly', DAY, 'Asia/Tokyo', '2026-06-09T23:00:00Z'],
    ['20:59', DAY, 'Asia/Tokyo', '2026-06-10T11:59:00Z'],
    ['23:30 in a window across midnight', NIGHT, 'Asia/Tokyo', '2026-06-10T14:30:00Z'],
    ['05:59 in a window across midnight', NIGHT, 'Asia/Tokyo', '2026-06-09T20:59:00Z'],
  ])('open at %s: no hold', (_, window, zone, now) => {
    expect(windowOpening(window, zone, at(now))).toBeUndefined();
  });

  it('a zone the runtime does not know falls back to the language’s default, never refuses the notice', () => {
    const n = { template: 'StatementReady', occurredAt: '2026-06-10T06:00:00Z', timeZone: 'Mars/Olympus_Mons' };
    expect(momentVerdict(n, 'Asia/Tokyo', at('2026-06-10T18:00:00Z'))).toMatchObject({
      kind: 'held',
      zone: 'Asia/Tokyo',
    });
  });
});

describe('validity', () => {
  const code = (occurredAt: string) => ({ template: 'OneTimePasscode', occurredAt });
  it('a code is worth sending for five minutes after it occurred, not a millisecond more', () => {
    expect(momentVerdict(code('2026-06-10T10:00:00Z'), 'UTC', at('2026-06-10T10:04:59.999Z'))).toEqual({
      kind: 'send',
    });
    expect(momentVerdict(code('2026-06-10T10:00:00Z'), 'UTC', at('2026-06-10T10:05:00Z'))).toEqual({
      kind: 'expired',
      validUntil: at('2026-06-10T10:05:00Z'),
    });
  });
  it('a notice past its validity is expired, not held, even outside its window', () => {
    const n = { template: 'StatementReady', occurredAt: '2026-06-01T00:00:00Z', timeZone: 'Asia/Tokyo' };
    expect(momentVerdict(n, 'UTC', at('2026-06-09T18:00:00Z'))).toMatchObject({ kind: 'expired' });
  });
  it('a producer whose clock runs ahead gains no validity: a code dated two hours ahead is worth five minutes from its arrival', () => {
    const ahead = { ...code('2026-06-10T12:00:00Z'), createdAt: '2026-06-10T10:00:00Z' };
    expect(momentVerdict(ahead, 'UTC', at('2026-06-10T10:04:59Z'))).toEqual({ kind: 'send' });
    expect(momentVerdict(ahead, 'UTC', at('2026-06-10T10:10:00Z'))).toEqual({
      kind: 'expired',
      validUntil: at('2026-06-10T10:05:00Z'),
    });
    // A release, a repair or a resend moves createdAt: the arrival is the first one.
    const released = { ...ahead, createdAt: '2026-06-10T11:00:00Z', firstCreatedAt: '2026-06-10T10:00:00Z' };
    expect(momentVerdict(released, 'UTC', at('2026-06-10T10:10:00Z'))).toMatchObject({ kind: 'expired' });
    // An operator's resend is judged alike.
    expect(resendRefusal('e#SMS', { status: 'FAILED', ...ahead }, undefined, at('2026-06-10T10:10:00Z'))).toMatchObject(
      { code: 'PAST_VALIDITY' },
    );
  });
  it('an item written before occurredAt was kept has no validity to judge: it is sent', () => {
    expect(momentVerdict({ template: 'OneTimePasscode' }, 'UTC', at('2030-01-01T00:00:00Z'))).toEqual({ kind: 'send' });
  });
});

describe('the catalogue compiler refuses what has two readings or breaks a rule', () => {
  const base = () => structuredClone(definitionOf('StatementReady')) as Record<string, unknown>;
  it.each([
    [{ class: 'critical', sendWindow: DAY }, /a critical notice is never held/],
    [{ class: 'critical', floodGuard: { limit: 3, windowSeconds: 3600 } }, /a critical notice is never limited/],
    [{ sendWindow: { from: '08:00', until: '08:00' } }, /same time: an empty or a whole day/],
    [{ sendWindow: { from: '8:00', until: '21:00' } }, /local time HH:MM/],
    [{ sendWindow: { from: '24:00', until: '21:00' } }, /local time HH:MM/],
    [{ supersede: { key: ['nope'] } }, /nope is not a field of the type/],
    [
      { supersede: { key: ['closingBalance'] } },
      /closingBalance must be a required identifier, enum, date, number field/,
    ],
    [{ floodGuard: { limit: 0, windowSeconds: 3600 } }, /limit/],
    [{ validForSeconds: 0 }, /validForSeconds/],
  ])('%j', (change, problem) => {
    expect(() => readCatalogue({ Broken: { ...base(), ...change } })).toThrow(problem);
  });
  it('every shipped critical type has neither window nor flood guard; StatementReady is held outside 08:00–21:00', () => {
    expect(definitionOf('OneTimePasscode')).toMatchObject({ class: 'critical', validForSeconds: 300 });
    expect(definitionOf('OneTimePasscode')?.sendWindow).toBeUndefined();
    expect(definitionOf('StatementReady')?.sendWindow).toEqual(DAY);
  });
});

describe('what a push carries of the moment: SNS message attributes named for the endpoint’s platform', () => {
  const endpoint = (platform: string) =>
    `arn:aws:sns:ap-northeast-1:123456789012:endpoint/${platform}/bank-app/0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e4f`;
  it.each([
    ['APNS', { 'AWS.SNS.MOBILE.APNS.TTL': '240', 'AWS.SNS.MOBILE.APNS.COLLAPSE_ID': 'c0ffee' }],
    ['APNS_SANDBOX', { 'AWS.SNS.MOBILE.APNS_SANDBOX.TTL': '240', 'AWS.SNS.MOBILE.APNS.COLLAPSE_ID': 'c0ffee' }],
    ['GCM', { 'AWS.SNS.MOBILE.FCM.TTL': '240' }],
    ['ADM', { 'AWS.SNS.MOBILE.ADM.TTL': '240' }],
    ['BAIDU', { 'AWS.SNS.MOBILE.BAIDU.TTL': '240' }],
    ['WNS', { 'AWS.SNS.MOBILE.WNS.TTL': '240' }],
    ['MPNS', {}],
  ])('%s', (platform, attributes) => {
    expect(pushAttributes(endpoint(platform), { ttlSeconds: 240, collapseId: 'c0ffee' })).toEqual(attributes);
  });

  it('a validity longer than FCM keeps a message (28 days) is sent as FCM’s longest TTL, not one FCM refuses', () => {
    expect(pushAttributes(endpoint('GCM'), { ttlSeconds: 90 * 86_400 })).toEqual({
      'AWS.SNS.MOBILE.FCM.TTL': '2419200',
    });
    expect(pushAttributes(endpoint('APNS'), { ttlSeconds: 90 * 86_400 })).toEqual({
      'AWS.SNS.MOBILE.APNS.TTL': '7776000',
    });
  });

  const { sns } = providerMocks();
  beforeEach(() => {
    sns.reset();
    sns.on(PublishCommand).resolves({ MessageId: 'm-1' });
  });
  const sender = new ProviderSender(new SESClient({}), new SNSClient({}), { senderEmail: 'n@example.com' });
  const item = (recipient: string, channel: 'PUSH' | 'SMS') =>
    ({ notificationId: `e#${channel}`, channel, recipient, template: 'LowBalance' }) as NotificationItem;
  const push = (over: Partial<Extract<Message, { channel: 'PUSH' }>> = {}): Message => ({
    channel: 'PUSH',
    title: 'Example Bank · Low balance',
    body: 'Your balance is low',
    ...over,
  });

  it('an APNs push is published with the remaining validity as its TTL and the series as its collapse id', async () => {
    await sender.send(
      item(endpoint('APNS'), 'PUSH'),
      push({ ttlSeconds: 240, collapseId: 'c0ffee' }),
      AbortSignal.timeout(1_000),
    );
    const input = sns.commandCalls(PublishCommand)[0]?.args[0].input;
    expect(input?.MessageAttributes).toEqual({
      'AWS.SNS.MOBILE.APNS.TTL': { DataType: 'String', StringValue: '240' },
      'AWS.SNS.MOBILE.APNS.COLLAPSE_ID': { DataType: 'String', StringValue: 'c0ffee' },
    });
    expect(input?.MessageStructure).toBe('json');
  });

  it('an FCM push: its TTL attribute, and the collapse id as collapse_key in the GCM payload', async () => {
    await sender.send(
      item(endpoint('GCM'), 'PUSH'),
      push({ ttlSeconds: 60, collapseId: 'c0ffee' }),
      AbortSignal.timeout(1_000),
    );
    const input = sns.commandCalls(PublishCommand)[0]?.args[0].input;
    expect(input?.MessageAttributes).toEqual({ 'AWS.SNS.MOBILE.FCM.TTL': { DataType: 'String', StringValue: '60' } });
    const gcm = JSON.parse(JSON.parse(input?.Message ?? '{}').GCM) as Record<string, unknown>;
    expect(gcm).toMatchObject({ collapse_key: 'c0ffee', notification: { title: 'Example Bank · Low balance' } });
  });

  it('a push without validity or series carries no attribute; an SMS takes no TTL through SNS', async () => {
    await sender.send(item(endpoint('APNS'), 'PUSH'), push(), AbortSignal.timeout(1_000));
    expect(sns.commandCalls(PublishCommand)[0]?.args[0].input.MessageAttributes).toBeUndefined();
    await sender.send(
      item('+14155550123', 'SMS'),
      { channel: 'SMS', text: 'Code 123456', segments: 1 },
      AbortSignal.timeout(1_000),
    );
    expect(sns.commandCalls(PublishCommand)[1]?.args[0].input.MessageAttributes).toEqual({
      'AWS.SNS.SMS.SMSType': { DataType: 'String', StringValue: 'Transactional' },
    });
  });
});

describe('an operator’s resend is refused, truthfully, where the moment would stop it', () => {
  const failed = { status: 'FAILED', template: 'OneTimePasscode', occurredAt: '2026-06-10T10:00:00Z' };
  it('a code past its five minutes: the preview says it would end EXPIRED, never sent', () => {
    expect(resendRefusal('e#SMS', failed, undefined, at('2026-06-10T10:06:00Z'))).toEqual({
      code: 'PAST_VALIDITY',
      message: expect.stringMatching(/validity ended at 2026-06-10T10:05:00.000Z; a resend would end EXPIRED/),
    });
    expect(resendRefusal('e#SMS', failed, undefined, at('2026-06-10T10:01:00Z'))).toBeUndefined();
  });
  it.each([
    [{ status: 'EXPIRED', validUntil: '2026-06-10T10:05:00.000Z' }, 'PAST_VALIDITY', /is EXPIRED: its validity ended/],
    [{ status: 'SUPERSEDED', supersededBy: 'lb-2' }, 'SUPERSEDED', /SUPERSEDED by the newer notice lb-2/],
    [{ status: 'THROTTLED', throttledWindow: '3 per 3600 s' }, 'THROTTLED', /THROTTLED by its type's flood guard/],
    [{ status: 'HELD', heldUntil: '2026-06-10T23:00:00.000Z' }, 'HELD', /HELD until 2026-06-10T23:00:00.000Z/],
  ])('%j', (item, code, reason) => {
    expect(resendRefusal('e#EMAIL', item)).toEqual({ code, message: expect.stringMatching(reason) });
  });
  it('a sent notice is refused as accepted first; with its message id named, past validity still refuses', () => {
    const sent = { ...failed, status: 'SENT', providerMessageId: 'm-1' };
    const late = at('2026-06-10T10:06:00Z');
    expect(resendRefusal('e#SMS', sent, undefined, late)?.code).toBe('ACCEPTED');
    expect(resendRefusal('e#SMS', sent, 'm-1', late)?.code).toBe('PAST_VALIDITY');
    expect(resendRefusal('e#SMS', sent, 'm-1', at('2026-06-10T10:04:00Z'))).toBeUndefined();
  });
});

describe('ops says why the moment stopped a notice, with its time', () => {
  it.each([
    [
      { status: 'HELD', heldUntil: '2026-06-10T23:00:00.000Z', heldZone: 'Asia/Tokyo' },
      /^waiting for its send window: held until 2026-06-10T23:00:00.000Z \(Asia\/Tokyo\)/,
    ],
    [
      { status: 'EXPIRED', validUntil: '2026-06-10T10:05:00.000Z' },
      /^not sent: past its validity \(valid until 2026-06-10T10:05:00.000Z\)/,
    ],
    [
      { status: 'SUPERSEDED', supersededBy: 'lb-2', supersededByOccurredAt: '2026-06-10T10:00:00Z' },
      /^not sent: superseded by the newer notice lb-2 \(occurred 2026-06-10T10:00:00Z\)/,
    ],
    [
      { status: 'THROTTLED', throttledWindow: '3 per 3600 s', channel: 'SMS' },
      /^not sent: its type's flood guard \(3 per 3600 s\).* on SMS/,
    ],
  ])('%j', (item, why) => {
    expect(whyOf(item, undefined, undefined)).toMatch(why);
  });
});

describe('a one-time code forgotten when its notice ended is never resent', () => {
  it('refused SECRET_FORGOTTEN inside its validity; a notice without a secret is not', () => {
    const failed = { status: 'FAILED', template: 'OneTimePasscode', occurredAt: '2026-06-10T10:00:00Z' };
    expect(
      resendRefusal('e#SMS', { ...failed, secretDigests: { code: 'm' } }, undefined, at('2026-06-10T10:01:00Z'))?.code,
    ).toBe('SECRET_FORGOTTEN');
    expect(resendRefusal('e#SMS', failed, undefined, at('2026-06-10T10:01:00Z'))).toBeUndefined();
  });
});
