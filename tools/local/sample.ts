import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { INGEST_ENVIRONMENT } from '../../functions/contracts/environment.ts';

/**
 * The built-in scenario of `npm start`: transfers for en and ja customers across every channel, a redelivered batch,
 * a producer resend (spelled differently, same meaning), a same-id conflict, a payee name an attacker wrote, a
 * customer with no contact point, an event too old to send, and malformed records; then emails to the SES
 * mailbox simulator, a bounce and a complaint suppressing later emails to those addresses, a customer opting out of
 * SMS, and an older preferences update arriving late; then SMS and push whose delivery status (the local SNS's,
 * tools/local/sns-delivery-status.ts) says a number opted out at its carrier, a number is invalid or unreachable, a device is
 * unregistered — and later sends to the dead ones suppressed. One Kafka record value per entry, in offset order, in batches
 * of 4 delivered one after another once the previous batch and its feedback settled. Its events happened a minute
 * before the run, so the max event age applies as in AWS.
 */
/** examples/catalogue.jsonl: one event of every catalogue type beyond the transfers, for an en and a ja customer. */
export const CATALOGUE_EXAMPLES = fileURLToPath(new URL('../../examples/catalogue.jsonl', import.meta.url));
const catalogueExamples = (): Record<string, unknown>[] =>
  readFileSync(CATALOGUE_EXAMPLES, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const ARN = 'arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e4f';
const ARN_GCM = 'arn:aws:sns:ap-northeast-1:123456789012:endpoint/GCM/bank-app/9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4';

let occurredAt = '';

const en = (eventId: string, over: Record<string, unknown> = {}) => ({
  eventId,
  type: 'TransferCompleted',
  occurredAt,
  recipient: {
    userId: 'u-7',
    locale: 'en',
    email: 'alex@example.com',
    pushEndpointArn: ARN_GCM,
    phoneNumber: '+14155550123',
    // The email shows the transfer's time in Alex's zone; the ja customer gets the locale's default (Asia/Tokyo).
    timeZone: 'America/Los_Angeles',
  },
  data: { transferId: 't-1001', amount: '12.50', currency: 'USD', counterpartyName: 'Jordan Lee' },
  ...over,
});

const ja = (eventId: string, over: Record<string, unknown> = {}) => ({
  eventId,
  type: 'TransferCompleted',
  occurredAt,
  recipient: {
    userId: 'u-42',
    locale: 'ja',
    email: 'hanako@example.com',
    pushEndpointArn: ARN,
    phoneNumber: '+819012345678',
  },
  data: { transferId: 't-99', amount: '10000', currency: 'JPY', counterpartyName: '山田 太郎' },
  ...over,
});

export interface Scenario {
  /** Kafka record values, delivered byte for byte. */
  readonly values: string[];
  readonly batchSize: number;
  /** Batches (by index) delivered a second time after they succeeded: a rebalance redelivering them. */
  readonly redeliverBatches: number[];
  /** MAX_EVENT_AGE_SECONDS for the run, always explicit: 0 for files of fixed-date events. */
  readonly maxEventAgeSeconds: number;
  /** Deliver each batch only once the previous one's notifications and feedback settled (--settle). */
  readonly settle: boolean;
  /** NOTICE_TIMING for the run: ENFORCED for events dated from now (validity and send windows judged by the clock). */
  readonly timing: 'ENFORCED' | 'REPLAY';
}

const SIM = 'simulator.amazonses.com';
/** An email-only transfer to a mailbox-simulator address. */
const simulated = (eventId: string, local: string, userId: string) =>
  en(eventId, { recipient: { userId, locale: 'en', email: `${local}@${SIM}` }, channels: ['EMAIL'] });
/** An SMS-only or a push-only transfer, to a number or an endpoint of the local SNS's simulator. */
const sms = (eventId: string, phoneNumber: string, userId: string) =>
  en(eventId, { recipient: { userId, locale: 'en', phoneNumber }, channels: ['SMS'] });
const push = (eventId: string, pushEndpointArn: string, userId: string) =>
  en(eventId, { recipient: { userId, locale: 'en', pushEndpointArn }, channels: ['PUSH'] });
const UNREGISTERED = 'arn:aws:sns:ap-northeast-1:123456789012:endpoint/GCM/bank-app/unregistered-0001';
const preferences = (eventId: string, occurredAtMs: number, optOut: string[]) => ({
  eventId,
  type: 'PreferencesUpdated',
  occurredAt: new Date(occurredAtMs).toISOString(),
  recipient: { userId: 'u-7' },
  data: { optOut },
});

/**
 * A time zone (IANA, the first in Intl's list) where the local hour at `now` is `hour`: a customer for whom it is
 * 3 a.m. whenever the sample runs.
 */
export function zoneAtHour(now: number, hour: number): string {
  // A zone people live in: neither a research station's nor an Etc/ offset.
  const lived = Intl.supportedValuesOf('timeZone').filter((z) => !z.startsWith('Antarctica/') && !z.startsWith('Etc/'));
  for (const timeZone of lived) {
    const local = new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', hourCycle: 'h23' }).format(now);
    if (Number(local) === hour) return timeZone;
  }
  throw new Error(`no time zone where it is ${hour}:00 now`);
}

/**
 * The one-time codes of the sample (the catalogue's two, then the right moment's two): eight digits, so a test that
 * looks for them in every file the run leaves does not find one by chance among its ids and timestamps.
 */
export const SAMPLE_CODES = ['40718326', '95270418', '31927465', '86043192'] as const;

/**
 * The right moment (docs/dispatch.md): a code asked for now is sent; one asked for ten minutes ago has expired; a
 * statement for a customer at 3 a.m. local waits for 08:00; of two low-balance notices for one account the older,
 * arriving last, is superseded; four low-balance notices for one customer in a minute meet its flood guard (3 an hour).
 */
function rightMomentEvents(now: number): Record<string, unknown>[] {
  const at = (ago: number) => new Date(now - ago).toISOString();
  const customer = (userId: string, over: Record<string, unknown> = {}) => ({
    userId,
    locale: 'en',
    email: `${userId}@example.com`,
    phoneNumber: '+14155550199',
    ...over,
  });
  const code = (eventId: string, ago: number, value: string) => ({
    eventId,
    type: 'OneTimePasscode',
    occurredAt: at(ago),
    recipient: customer('u-60'),
    data: { code: value, purpose: 'SIGN_IN' },
    channels: ['SMS'],
  });
  const lowBalance = (eventId: string, userId: string, ago: number, accountLast4: string, balance: string) => ({
    eventId,
    type: 'LowBalance',
    occurredAt: at(ago),
    recipient: customer(userId),
    data: { accountLast4, balance, threshold: '100.00', currency: 'USD' },
    channels: ['EMAIL'],
  });
  return [
    code('demo-otp-now', 0, SAMPLE_CODES[2]),
    code('demo-otp-late', 10 * 60_000, SAMPLE_CODES[3]),
    {
      eventId: 'demo-statement-night',
      type: 'StatementReady',
      occurredAt: at(60_000),
      recipient: customer('u-61', { timeZone: zoneAtHour(now, 3) }),
      data: { accountLast4: '5521', periodEnd: new Date(now).toISOString().slice(0, 10) },
      channels: ['EMAIL'],
    },
    // The newer first, then the older: ordered by occurredAt, never by arrival.
    lowBalance('demo-lowbal-new', 'u-62', 20_000, '0042', '12.00'),
    lowBalance('demo-lowbal-old', 'u-62', 40_000, '0042', '48.00'),
    ...['1111', '2222', '3333', '4444'].map((account, i) =>
      lowBalance(`demo-flood-${i + 1}`, 'u-63', 30_000 - i * 1_000, account, '20.00'),
    ),
  ];
}

export function sampleScenario(now: number): Scenario {
  occurredAt = new Date(now - 60_000).toISOString();
  const values = [
    en('demo-en-1'),
    ja('demo-ja-1'),
    en('demo-en-2', {
      type: 'TransferFailed',
      data: {
        transferId: 't-1002',
        amount: '2500.00',
        currency: 'USD',
        counterpartyName: 'Acme <Corp>',
        reason: 'insufficient funds',
      },
      channels: ['EMAIL', 'PUSH'],
    }),
    ja('demo-ja-2', { recipient: { userId: 'u-43', locale: 'ja', email: 'jiro@example.com' } }),
    // A producer resend of demo-en-1 at a new offset: the same event, its instant written with an offset.
    en('demo-en-1', { occurredAt: occurredAt.replace('Z', '+00:00') }),
    // The same eventId reused with a different amount: EVENT_ID_CONFLICT, the original is kept.
    ja('demo-ja-1', { data: { transferId: 't-99', amount: '99999', currency: 'JPY' } }),
  ].map((e) => JSON.stringify(e));
  values.push('{"eventId":"demo-broken","type":"TransferCompleted",'); // truncated JSON
  values.push(JSON.stringify(en('demo-float', { data: { transferId: 't-3', amount: 12.5, currency: 'USD' } })));
  values.push(
    // The payee named their account with a line break and a bidi override: sent, with the name cleaned.
    JSON.stringify(
      en('demo-en-3', {
        data: { transferId: 't-1003', amount: '0.50', currency: 'USD', counterpartyName: 'Pat\r\nBcc: \u202Eall' },
        channels: ['EMAIL'],
      }),
    ),
    // Nobody to tell: recorded, counted, nothing sent.
    JSON.stringify(en('demo-nobody', { recipient: { userId: 'u-8', locale: 'en' } })),
    // Two days old: recorded, not sent.
    JSON.stringify(en('demo-stale', { occurredAt: new Date(now - 2 * 86_400_000).toISOString() })),
    // Delivery feedback. Offset 11, the end of the third batch: delivered.
    JSON.stringify(simulated('demo-sim-ok', 'success', 'u-20')),
    // Fourth batch: a hard bounce, a complaint, and Alex opts out of SMS.
    JSON.stringify(simulated('demo-sim-bounce', 'bounce', 'u-21')),
    JSON.stringify(simulated('demo-sim-complaint', 'complaint', 'u-22')),
    JSON.stringify(preferences('demo-prefs-2', now - 30_000, ['SMS'])),
    JSON.stringify(simulated('demo-sim-ok-2', 'success+second', 'u-20')),
    // Fifth batch, after the feedback: an older preferences update arriving late changes nothing; the bounced and
    // the complaining addresses are not mailed again; Alex's new transfer goes by email and push, not SMS.
    JSON.stringify(preferences('demo-prefs-1', now - 50_000, [])),
    JSON.stringify(simulated('demo-sim-bounce-again', 'bounce', 'u-21')),
    JSON.stringify(simulated('demo-sim-complaint-again', 'complaint', 'u-22')),
    JSON.stringify(
      en('demo-en-4', {
        data: { transferId: 't-1004', amount: '75.00', currency: 'USD', counterpartyName: 'Sam Park' },
      }),
    ),
    // Sixth batch: SNS accepts each of these, then its delivery status says the number opted out at its carrier
    // (replied STOP), is invalid, is unreachable for now; and the device's token is unregistered.
    JSON.stringify(sms('demo-sms-stop', '+14155550180', 'u-30')),
    JSON.stringify(sms('demo-sms-invalid', '+14155550181', 'u-31')),
    JSON.stringify(sms('demo-sms-unreachable', '+14155550182', 'u-32')),
    JSON.stringify(push('demo-push-gone', UNREGISTERED, 'u-33')),
    // Seventh batch: the dead number and device are not sent to again; the unreachable one is.
    JSON.stringify(sms('demo-sms-stop-again', '+14155550180', 'u-30')),
    JSON.stringify(sms('demo-sms-unreachable-again', '+14155550182', 'u-32')),
    JSON.stringify(push('demo-push-gone-again', UNREGISTERED, 'u-33')),
  );
  // Last batches: the catalogue (examples/catalogue.jsonl), happening now. Alex opted out of SMS above: the card, balance
  // and payment notices go by email and push; the sign-in and password alerts are exempt and reach the phone too.
  let codes = 0;
  const withSampleCode = (e: Record<string, unknown>) =>
    e.type === 'OneTimePasscode' ? { ...e, data: { ...(e.data as object), code: SAMPLE_CODES[codes++] } } : e;
  values.push(...catalogueExamples().map((e) => JSON.stringify({ ...withSampleCode(e), occurredAt })));
  values.push(...rightMomentEvents(now).map((e) => JSON.stringify(e)));
  // The deployed maximum event age: the sample's events happen now.
  const maxEventAgeSeconds = INGEST_ENVIRONMENT.MAX_EVENT_AGE_SECONDS.default;
  return { values, batchSize: 4, redeliverBatches: [0], maxEventAgeSeconds, settle: true, timing: 'ENFORCED' };
}
