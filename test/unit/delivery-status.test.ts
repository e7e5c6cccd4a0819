/**
 * SNS delivery status (SMS, push) read from its log entries — the AWS documentation's example logs — and which send
 * of a notification a feedback describes (deliveryVerdict): pure, no AWS.
 */
import { describe, expect, it } from 'vitest';
import {
  channelOfLogGroup,
  DELIVERY_RANK,
  type DeliveryState,
  deliveryVerdict,
  readDeliveryStatusLog,
} from '../../functions/domain/feedback.ts';
import { type FeedbackStore, recordFeedback } from '../../functions/feedback/record-feedback.ts';

const SMS = 'sns/us-east-1/111122223333/DirectPublishToPhoneNumber';
const SMS_FAILURE = `${SMS}/Failure`;
const PUSH = 'sns/us-east-1/111122223333/app/GCM/FCMPushApp';

/** "Amazon SNS SMS delivery monitoring with Amazon CloudWatch metrics and logs": the success and failure examples. */
const smsLog = (status: 'SUCCESS' | 'FAILURE', providerResponse: string) =>
  JSON.stringify({
    notification: { messageId: '34d9b400-c6dd-5444-820d-fbeb0f1f54cf', timestamp: '2016-06-28 00:40:34.558' },
    delivery: {
      phoneCarrier: 'My Phone Carrier',
      mnc: 270,
      destination: '+14255550100',
      priceInUSD: 0.00645,
      smsType: 'Transactional',
      mcc: 310,
      providerResponse,
      dwellTimeMs: 599,
      dwellTimeMsUntilDeviceAck: 1344,
    },
    status,
  });
/** "Mobile app attributes": the push success and failure examples. */
const pushLog = (status: 'SUCCESS' | 'FAILURE', statusCode: number, providerResponse: string) =>
  JSON.stringify({
    status,
    notification: { timestamp: '2015-01-26 23:07:39.54', messageId: '9655abe4-6ed6-5734-89f7-e6a6a42de02a' },
    delivery: {
      statusCode,
      dwellTimeMs: 65,
      token: 'Examplei7fFachkJ1xjlqT64RaBkcGHochmf1VQAr9k-IBJtKjp7fedYPzEwT_Pq3Tu0lroqro1cwWJUvgkcPPYcaXCpP',
      attempts: 1,
      providerResponse,
      destination: 'arn:aws:sns:us-east-1:111122223333:endpoint/GCM/FCMPushApp/c23e42de-3699-3639-84dd-65f84474629d',
    },
  });

describe('reading SNS delivery status logs', () => {
  it('knows the log groups SNS writes SMS and push delivery status to, and nothing else', () => {
    expect(channelOfLogGroup(SMS)).toBe('SMS');
    expect(channelOfLogGroup(SMS_FAILURE)).toBe('SMS');
    expect(channelOfLogGroup(PUSH)).toBe('PUSH');
    expect(channelOfLogGroup(`${PUSH}/Failure`)).toBe('PUSH');
    expect(channelOfLogGroup('sns/us-east-1/111122223333/my-topic')).toBeUndefined();
    expect(channelOfLogGroup('/aws/lambda/notifier-prod-Dispatch')).toBeUndefined();
  });

  it("SMS SUCCESS → DELIVERED at publish time plus dwell time, by SNS message id, with the carrier's words", () => {
    const r = readDeliveryStatusLog(SMS, smsLog('SUCCESS', 'Message has been accepted by phone carrier'));
    expect(r).toEqual({
      ok: true,
      feedback: {
        channel: 'SMS',
        messageId: '34d9b400-c6dd-5444-820d-fbeb0f1f54cf',
        status: 'DELIVERED',
        rank: DELIVERY_RANK.DELIVERED,
        sentAtMs: Date.parse('2016-06-28T00:40:34.558Z'),
        atMs: Date.parse('2016-06-28T00:40:34.558Z') + 599,
        at: new Date(Date.parse('2016-06-28T00:40:34.558Z') + 599).toISOString(),
        providerResponse: 'Message has been accepted by phone carrier',
      },
    });
  });

  it('SMS FAILURE → FAILED; only a dead number is suppressed: opted out at the carrier, invalid', () => {
    const read = (response: string) => {
      const r = readDeliveryStatusLog(SMS_FAILURE, smsLog('FAILURE', response));
      return r.ok ? { status: r.feedback.status, suppress: r.feedback.suppress } : r;
    };
    expect(read('Phone number is opted out')).toEqual({
      status: 'FAILED',
      suppress: { cause: 'CARRIER_OPT_OUT', addresses: ['+14255550100'] },
    });
    expect(read('Invalid phone number')).toEqual({
      status: 'FAILED',
      suppress: { cause: 'UNDELIVERABLE', addresses: ['+14255550100'] },
    });
    for (const transient of [
      'Unknown error attempting to reach phone',
      'Phone is currently unreachable/unavailable',
      'Phone carrier has blocked this message',
      'This delivery would exceed max price',
    ]) {
      expect(read(transient)).toEqual({ status: 'FAILED', suppress: undefined });
    }
  });

  it('push: delivered to the platform, or FAILED; an unregistered token (410, Unregistered, InvalidToken) is suppressed', () => {
    const ok = readDeliveryStatusLog(PUSH, pushLog('SUCCESS', 200, '{"multicast_id":5138139752481671853,"success":1}'));
    expect(ok.ok && ok.feedback).toMatchObject({
      channel: 'PUSH',
      status: 'DELIVERED',
      atMs: Date.parse('2015-01-26T23:07:39.540Z') + 65,
    });
    const apns = readDeliveryStatusLog(
      `${PUSH}/Failure`,
      pushLog('FAILURE', 8, 'NotificationErrorResponse(command=8, status=InvalidToken, id=1, cause=null)'),
    );
    expect(apns.ok && apns.feedback.suppress).toEqual({
      cause: 'UNDELIVERABLE',
      addresses: ['arn:aws:sns:us-east-1:111122223333:endpoint/GCM/FCMPushApp/c23e42de-3699-3639-84dd-65f84474629d'],
    });
    const gone = readDeliveryStatusLog(`${PUSH}/Failure`, pushLog('FAILURE', 410, '{"reason":"Unregistered"}'));
    expect(gone.ok && gone.feedback.suppress?.cause).toBe('UNDELIVERABLE');
    const busy = readDeliveryStatusLog(`${PUSH}/Failure`, pushLog('FAILURE', 429, '{"reason":"TooManyRequests"}'));
    expect(busy.ok && busy.feedback).toMatchObject({ status: 'FAILED' });
    expect(busy.ok && busy.feedback.suppress).toBeUndefined();
  });

  it("bounds what it keeps of the provider's answer and never needs the destination to record the status", () => {
    const long = readDeliveryStatusLog(SMS_FAILURE, smsLog('FAILURE', `Unknown error ${'x'.repeat(5000)}`));
    expect(long.ok && long.feedback.providerResponse?.length).toBe(200);
    const entry = JSON.parse(smsLog('FAILURE', 'Phone number is opted out'));
    delete entry.delivery.destination;
    const r = readDeliveryStatusLog(SMS_FAILURE, JSON.stringify(entry));
    expect(r.ok && r.feedback).toMatchObject({ status: 'FAILED' });
    expect(r.ok && r.feedback.suppress).toBeUndefined();
  });

  it('ignores, with a reason, what is not a delivery status entry: other log groups, bad JSON, other shapes', () => {
    expect(readDeliveryStatusLog('/aws/lambda/x', smsLog('SUCCESS', 'ok'))).toMatchObject({
      ok: false,
      ignored: { reason: 'NOT_A_DELIVERY_LOG' },
    });
    expect(readDeliveryStatusLog(SMS, '{"status":')).toMatchObject({ ok: false, ignored: { reason: 'MALFORMED' } });
    expect(readDeliveryStatusLog(SMS, '{"status":"SUCCESS"}')).toMatchObject({
      ok: false,
      ignored: { reason: 'MALFORMED' },
    });
    expect(readDeliveryStatusLog(SMS, smsLog('SUCCESS', 'x').replace('"SUCCESS"', '"PENDING"'))).toMatchObject({
      ok: false,
      ignored: { reason: 'UNSUPPORTED_TYPE' },
    });
    // An unreadable time still ranks (at the epoch): DynamoDB refuses NaN.
    const r = readDeliveryStatusLog(SMS, smsLog('SUCCESS', 'x').replace('2016-06-28 00:40:34.558', 'yesterday'));
    expect(r.ok && r.feedback.sentAtMs).toBe(0);
  });
});

describe('which send a feedback describes', () => {
  const f = (messageId: string, rank: number, atMs = 1000, sentAtMs = 500) => ({ messageId, rank, atMs, sentAtMs });
  const D = DELIVERY_RANK;

  it('a recorded send: only feedback about its own message applies, and it replaces feedback about another', () => {
    const sent: DeliveryState = { providerMessageId: 'm2' };
    expect(deliveryVerdict(sent, f('m1', D.COMPLAINED))).toBe('otherSend');
    expect(deliveryVerdict(sent, f('m2', D.DELIVERED))).toBe('apply');
    const overOther: DeliveryState = { providerMessageId: 'm2', deliveryMessageId: 'm1', deliveryRank: D.BOUNCED };
    expect(deliveryVerdict(overOther, f('m2', D.DELAYED))).toBe('apply');
  });

  it('by rank within one message: higher wins, the same rank only when later, duplicates change nothing', () => {
    const bounced: DeliveryState = {
      providerMessageId: 'm',
      deliveryMessageId: 'm',
      deliveryRank: D.BOUNCED,
      deliveryAtMs: 1000,
    };
    expect(deliveryVerdict(bounced, f('m', D.DELIVERED, 2000))).toBe('notNewer');
    expect(deliveryVerdict(bounced, f('m', D.BOUNCED, 1000))).toBe('notNewer');
    expect(deliveryVerdict(bounced, f('m', D.BOUNCED, 1001))).toBe('apply');
    expect(deliveryVerdict(bounced, f('m', D.COMPLAINED, 1))).toBe('apply');
    // Items recorded before deliveryMessageId existed: their status was about the recorded send.
    expect(
      deliveryVerdict({ providerMessageId: 'm', deliveryRank: D.BOUNCED, deliveryAtMs: 1000 }, f('m', D.DELIVERED)),
    ).toBe('notNewer');
  });

  it('no recorded send: an earlier send (its message id, or sent before the latest resend) is not this one', () => {
    const resent: DeliveryState = {
      manualResends: [{ at: '2026-12-01T00:00:00.000Z', providerMessageId: 'm1' }, { at: '2026-12-01T01:00:00.000Z' }],
    };
    const resendAt = Date.parse('2026-12-01T01:00:00.000Z');
    expect(deliveryVerdict(resent, f('m1', D.DELIVERED, 0, resendAt + 5))).toBe('otherSend');
    expect(deliveryVerdict(resent, f('m0', D.BOUNCED, 0, resendAt - 1))).toBe('otherSend');
    // Sent after the resend: this send, whose mark is not written yet (or whose answer was lost).
    expect(deliveryVerdict(resent, f('m3', D.DELIVERED, 0, resendAt + 5))).toBe('apply');
    // Never resent, answer lost (UNKNOWN): SES's feedback tells what became of it.
    expect(deliveryVerdict({}, f('m', D.DELIVERED))).toBe('apply');
    // A resend with an unreadable time is no reason to drop anything.
    expect(deliveryVerdict({ manualResends: [{ at: 'garbage' }] }, f('m', D.DELIVERED))).toBe('apply');
  });
});

describe('recording a batch of SNS delivery status', () => {
  const SMS_GROUP = 'sns/us-east-1/111122223333/DirectPublishToPhoneNumber';
  const entry = (messageId: string, sentAt: string) =>
    readDeliveryStatusLog(
      SMS_GROUP,
      JSON.stringify({
        status: 'SUCCESS',
        notification: { messageId, timestamp: sentAt },
        delivery: { destination: '+14255550100', providerResponse: 'Message has been accepted by phone carrier' },
      }),
    );
  const NOW = Date.parse('2026-12-02T01:00:00Z');

  function fakeStore(indexedAfter: Record<string, number>) {
    const lookups: string[] = [];
    const recorded: string[] = [];
    let round = 0;
    const store: FeedbackStore = {
      findByMessageId: async (id) => {
        lookups.push(id);
        const after = indexedAfter[id];
        return after !== undefined && round >= after
          ? { notificationId: `${id}-event#SMS`, eventId: `${id}-event`, channel: 'SMS' }
          : undefined;
      },
      recordDelivery: async (target) => {
        recorded.push(target.notificationId);
        return { kind: 'recorded' };
      },
      suppressAddress: async () => 'suppressed',
      recipientOf: async () => '+14255550100',
    };
    const sleeps: number[] = [];
    const deps = {
      store,
      now: () => NOW,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        round++;
      },
    };
    return { deps, lookups, recorded, sleeps };
  }

  it("waits for the index a few times per batch, not per entry: a batch of another sender's messages costs three short waits", async () => {
    const { deps, lookups, sleeps, recorded } = fakeStore({ ours: 1 });
    const recent = '2026-12-02 00:59:50.000';
    const reads = [entry('ours', recent), ...Array.from({ length: 100 }, (_, i) => entry(`theirs-${i}`, recent))];
    const results = await recordFeedback(reads, deps);
    expect(sleeps).toEqual([500, 500]);
    expect(results.filter((r) => r.kind === 'recorded')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'notOurs')).toHaveLength(100);
    expect(recorded).toEqual(['ours-event#SMS']);
    // 101 first lookups, then the 101 not found twice more at most (ours found in the second round).
    expect(lookups.length).toBeLessThanOrEqual(101 + 101 + 100);
  });

  it('an old message not found is not waited for; a malformed entry is ignored beside the others', async () => {
    const { deps, sleeps } = fakeStore({});
    const results = await recordFeedback(
      [entry('long-ago', '2026-11-01 00:00:00.000'), readDeliveryStatusLog(SMS_GROUP, 'not json')],
      deps,
    );
    expect(sleeps).toEqual([]);
    expect(results.map((r) => r.kind)).toEqual(['notOurs', 'ignored']);
  });
});

describe('a suppression only ever for the notification’s own recipient', () => {
  // SNS's delivery status log groups are the account's: an entry may be anyone's words about a real message id.
  const optedOut = (destination: string) =>
    readDeliveryStatusLog(
      SMS_FAILURE,
      JSON.stringify({
        status: 'FAILURE',
        notification: { messageId: 'm-1', timestamp: '2026-12-02 00:59:50.000' },
        delivery: { destination, providerResponse: 'Phone number is opted out' },
      }),
    );
  const run = async (read: ReturnType<typeof optedOut>, recipient: string | undefined) => {
    const suppressed: string[] = [];
    const store: FeedbackStore = {
      findByMessageId: async () => ({ notificationId: 'e-1#SMS', eventId: 'e-1', channel: 'SMS' }),
      recipientOf: async () => recipient,
      recordDelivery: async () => ({ kind: 'recorded' }),
      suppressAddress: async (_channel, address) => {
        suppressed.push(address);
        return 'suppressed';
      },
    };
    const [result] = await recordFeedback([read], {
      store,
      now: () => Date.parse('2026-12-02T01:00:00Z'),
      sleep: async () => undefined,
    });
    return { result, suppressed };
  };

  it("a log entry naming the notification's own number suppresses it", async () => {
    const { result, suppressed } = await run(optedOut('+14255550100'), '+14255550100');
    expect(suppressed).toEqual(['+14255550100']);
    expect(result).toMatchObject({ kind: 'recorded', suppressions: ['suppressed'] });
  });

  it('a log entry naming another number suppresses nothing (a forged or stray entry cannot silence a sign-in alert to it)', async () => {
    const { result, suppressed } = await run(optedOut('+819012345678'), '+14255550100');
    expect(suppressed).toEqual([]);
    expect(result).toMatchObject({ kind: 'recorded', suppressions: ['notTheRecipient'] });
  });

  it('a log entry about a notification gone or erased suppresses nothing: there is no recipient to compare with', async () => {
    const { suppressed } = await run(optedOut('+14255550100'), undefined);
    expect(suppressed).toEqual([]);
  });
});
