import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DISPATCH_FILTER_PATTERN, matchesFilter } from '../../functions/contracts/stream-filter.ts';
import type { Breaker } from '../../functions/dispatch/channel-breaker.ts';
import {
  type DispatchDeps,
  dispatchNotification,
  NotStartedError,
  type RecordBudget,
} from '../../functions/dispatch/dispatch-notification.ts';
import { type Pacer, unpaced } from '../../functions/dispatch/pacer.ts';
import { ProviderSender, tagValue } from '../../functions/dispatch/senders.ts';
import { criticalFirst, dispatchable } from '../../functions/dispatch/stream-record.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { isForeignEndpoint } from '../../functions/domain/push-endpoint.ts';
import { DynamoNotificationStore, type NotificationKey } from '../../functions/stores/notification-store.ts';
import { documentClientMock, providerMocks } from '../support/aws-mocks.ts';
import {
  claimedNotification,
  DISPATCH_BUDGET,
  DISPATCH_NOW,
  dispatchDeps,
  pendingNotification,
} from '../support/dispatch-deps.ts';
import { PUSH_ARN } from '../support/events.ts';
import { streamEvent, streamRecord } from '../support/stream.ts';

const ddb = documentClientMock();
const { ses, sns } = providerMocks();
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const NOW = DISPATCH_NOW;

const pending = pendingNotification;
const sending = claimedNotification;
const key = (n: NotificationItem) => ({ pk: n.pk, sk: n.sk });

const deps = (over: Partial<DispatchDeps> = {}): DispatchDeps =>
  dispatchDeps({
    store: new DynamoNotificationStore(doc, 'notifier-test'),
    sender: new ProviderSender(new SESClient({}), new SNSClient({}), {
      senderEmail: 'notifications@example.com',
      configurationSet: 'notifier',
    }),
    random: () => 0.5,
    ...over,
  });
const BUDGET: RecordBudget = DISPATCH_BUDGET;
const dispatch = (k: NotificationKey, d: DispatchDeps = deps(), retryAt?: number, budget = BUDGET) =>
  dispatchNotification({ key: k, retryAt }, d, budget);

const conditionFailed = () =>
  Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
/** An error as the SDK raises it for a provider's answer: wire code in Code, HTTP status in $metadata. */
const providerError = (code: string, status?: number, message = code) =>
  Object.assign(new Error(message), {
    name: code,
    Code: code,
    $metadata: status === undefined ? {} : { httpStatusCode: status },
  });

/** The status each UpdateCommand set, in order: the transitions the use case made. */
const transitions = () =>
  ddb
    .commandCalls(UpdateCommand)
    .map(
      (c) =>
        c.args[0].input.ExpressionAttributeValues?.[':to'] ?? c.args[0].input.ExpressionAttributeValues?.[':sending'],
    );

beforeEach(() => {
  ddb.reset();
  ses.reset();
  sns.reset();
});

describe('dispatch: claim → send → mark', () => {
  it('claims PENDING → SENDING with attempt+1 and a lease, sends once via SES, marks SENT conditioned on attempt', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-1' });
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'sent', providerMessageId: 'ses-1', fenced: false });

    const [claim, mark] = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    // Only a PENDING item that is due: a stale record cannot jump a deferral's backoff.
    expect(claim?.ConditionExpression).toBe(
      '#status = :fromStatus AND (attribute_not_exists(retryAt) OR retryAt <= :nowMs)',
    );
    expect(claim?.UpdateExpression).toContain('attempt = attempt + :one');
    expect(claim?.ExpressionAttributeValues?.[':lease']).toBe(NOW + 120_000);
    expect(mark?.ConditionExpression).toBe('#status = :fromStatus AND attempt = :attempt');
    // An email's message id outside the providerMessage index: its reports find it by its SES tag.
    expect(mark?.ExpressionAttributeValues).toMatchObject({ ':to': 'SENT', ':attempt': 1, ':sesMessageId': 'ses-1' });
    expect(mark?.UpdateExpression).toContain('sesMessageId = :sesMessageId');
    expect(mark?.UpdateExpression).not.toContain('providerMessageId');
    expect(mark?.UpdateExpression).toContain('REMOVE sweepKey, sweepAt, leaseUntil');

    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
    const email = ses.commandCalls(SendEmailCommand)[0]!.args[0].input;
    expect(email).toMatchObject({
      // The bank's name in the customer's locale, as RFC 2047 encoded-words (SES needs them for non-ASCII names).
      Source: `=?UTF-8?B?${Buffer.from('サンプル銀行').toString('base64')}?= <notifications@example.com>`,
      Destination: { ToAddresses: ['hanako@example.com'] },
      ConfigurationSetName: 'notifier',
      Message: { Subject: { Data: 'お振込みが完了しました', Charset: 'UTF-8' } },
    });
    expect(email.Message?.Body?.Html?.Data).toContain('￥10,000');
    // The moment, in the customer's time zone (the brand's default for ja: Asia/Tokyo).
    expect(email.Message?.Body?.Text?.Data).toContain('日時: 2026年11月30日 18:15 JST');
    expect(email.Tags).toContainEqual({ Name: 'notificationId', Value: tagValue('trf-2026-000123#EMAIL') });
    for (const tag of email.Tags ?? []) expect(tag.Value).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('a customer whose id is the word ERASED is a customer: their notice is sent (erasure is marked by its time)', async () => {
    const n = { ...pending('EMAIL'), userId: 'ERASED' };
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-erased-word' });
    expect(await dispatch(key(n))).toMatchObject({ kind: 'sent', providerMessageId: 'ses-erased-word' });
  });

  it('a redelivered record finds the item no longer PENDING: no send', async () => {
    const n = pending('EMAIL');
    ddb.on(UpdateCommand).rejects(conditionFailed());
    ddb.on(GetCommand).resolves({ Item: { ...n, status: 'SENT', attempt: 1 } });
    const r = await dispatch(key(n));
    expect(r).toEqual({ kind: 'skipped', why: 'taken' });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
  });

  it('two dispatchers on one item: only the claim that wins sends', async () => {
    const n = pending('PUSH');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .rejectsOnce(conditionFailed())
      .resolves({});
    ddb.on(GetCommand).resolves({ Item: sending(n) });
    sns.on(PublishCommand).resolves({ MessageId: 'sns-1' });
    const results = await Promise.all([dispatch(key(n)), dispatch(key(n))]);
    expect(results.map((r) => r.kind).sort()).toEqual(['sent', 'skipped']);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
  });

  it('our own claim whose reply was lost is recognised by its claimId and goes on to send once', async () => {
    const n = pending('EMAIL');
    let claimId = '';
    ddb
      .on(UpdateCommand)
      .callsFakeOnce((input) => {
        claimId = input.ExpressionAttributeValues[':claim'];
        throw conditionFailed();
      })
      .resolves({});
    ddb.on(GetCommand).callsFake(() => ({ Item: { ...sending(n), claimId } }));
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-2' });
    const r = await dispatch(key(n));
    expect(r.kind).toBe('sent');
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
  });

  it('fencing: a stale holder whose lease was taken over cannot mark SENT', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n, 1) })
      .rejects(conditionFailed());
    ddb.on(GetCommand).resolves({ Item: { ...sending(n, 2) } });
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-late' });
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'sent', fenced: true });
    const mark = ddb.commandCalls(UpdateCommand)[1]!.args[0].input;
    expect(mark.ExpressionAttributeValues).toMatchObject({ ':attempt': 1, ':to': 'SENT' });
  });

  it('a definite rejection → FAILED with the reason, never retried', async () => {
    const n = pending('PUSH');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).rejects(providerError('EndpointDisabledException', 400));
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'failed', reason: 'EndpointDisabledException' });
    expect(transitions()).toEqual(['SENDING', 'FAILED']);
  });

  it("an opted-out number or a bad address is the message's own: FAILED with the provider's code", async () => {
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).rejects(providerError('OptedOut', 400));
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'failed', reason: 'OptedOut' });
    expect(transitions()).toEqual(['SENDING', 'FAILED']);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
  });

  it('throttled → back to PENDING with a growing retryAt as a deferral: no attempt used', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n, 4, 3) })
      .resolves({});
    ses.on(SendEmailCommand).rejects(providerError('Throttling', 400, 'Maximum sending rate exceeded.'));
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'deferred', reason: 'THROTTLED', code: 'Throttling' });
    const release = ddb.commandCalls(UpdateCommand)[1]!.args[0].input;
    expect(release.ExpressionAttributeValues).toMatchObject({ ':to': 'PENDING', ':reason': 'THROTTLED: Throttling' });
    expect(release.UpdateExpression).toContain('deferrals = if_not_exists(deferrals, :zero) + :one');
    // Fourth deferral: between 4 and 8 s (equal jitter on 1 s × 2^3), far → the sweeper wakes it at retryAt.
    expect(release.ExpressionAttributeValues?.[':retryAt']).toBe(NOW + 6_000);
    expect(release.ExpressionAttributeValues?.[':sweepAt']).toBe(NOW + 6_000);
  });

  it('throttled long after the attempt budget would be spent: still deferred, never FAILED', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n, 40, 39) })
      .resolves({});
    ses.on(SendEmailCommand).rejects(providerError('Throttling', 400, 'Daily message quota exceeded.'));
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'deferred', reason: 'THROTTLED' });
    expect(transitions()).toEqual(['SENDING', 'PENDING']);
    // The backoff is capped at minutes.
    const release = ddb.commandCalls(UpdateCommand)[1]!.args[0].input;
    expect(release.ExpressionAttributeValues?.[':retryAt']).toBe(NOW + 225_000);
  });

  it('SNS Throttled (429) is throttling too; a 503 is an unknown outcome like every 5xx', async () => {
    for (const [code, status, outcome] of [
      ['Throttled', 429, { kind: 'deferred', reason: 'THROTTLED' }],
      ['ServiceUnavailable', 503, { kind: 'unknown', resend: false }],
    ] as const) {
      ddb.reset();
      sns.reset();
      const n = pending('PUSH');
      ddb
        .on(UpdateCommand)
        .resolvesOnce({ Attributes: sending(n) })
        .resolves({});
      sns.on(PublishCommand).rejects(providerError(code, status));
      expect(await dispatch(key(n))).toMatchObject(outcome);
    }
  });

  it('not sent (connection refused, clock skew) → deferred, no attempt used', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolvesOnce({})
      .resolvesOnce({ Attributes: sending(n, 2, 1) })
      .resolves({});
    ses
      .on(SendEmailCommand)
      .rejectsOnce(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
      .rejectsOnce(providerError('RequestExpired', 400, 'Request has expired.'));
    expect(await dispatch(key(n))).toMatchObject({ kind: 'deferred', reason: 'NOT_SENT', code: 'ECONNREFUSED' });
    expect(await dispatch(key(n))).toMatchObject({ kind: 'deferred', reason: 'NOT_SENT', code: 'RequestExpired' });
    expect(transitions()).toEqual(['SENDING', 'PENDING', 'SENDING', 'PENDING']);
  });

  it('account blocked → the channel is held (breaker), the item deferred past the hold, nothing FAILED', async () => {
    const n = pending('EMAIL');
    const holds: [string, string][] = [];
    const breaker: Breaker = {
      heldUntil: async () => undefined,
      hold: async (channel, code, now) => {
        holds.push([channel, code]);
        return now + 60_000;
      },
    };
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).rejects(providerError('AccountSendingPausedException', 400));
    const r = await dispatch(key(n), deps({ breaker }));
    expect(r).toMatchObject({ kind: 'deferred', reason: 'ACCOUNT_BLOCKED', code: 'AccountSendingPausedException' });
    expect(holds).toEqual([['EMAIL', 'AccountSendingPausedException']]);
    expect(transitions()).toEqual(['SENDING', 'PENDING']);
    const release = ddb.commandCalls(UpdateCommand)[1]!.args[0].input;
    expect(release.ExpressionAttributeValues?.[':retryAt']).toBeGreaterThanOrEqual(NOW + 60_000);
  });

  it('a held channel is not sent to: deferred until the hold ends', async () => {
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    const breaker: Breaker = { heldUntil: async () => NOW + 30_000, hold: async () => NOW };
    const r = await dispatch(key(n), deps({ breaker }));
    expect(r).toMatchObject({ kind: 'deferred', reason: 'CHANNEL_HELD' });
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
  });

  it('no send token before the wait bound → deferred (RATE_LIMITED), no send; the wait never passes the deadline', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    const asked: number[] = [];
    const pacer: Pacer = {
      acquire: async (_channel, waitUntil) => {
        asked.push(waitUntil);
        return false;
      },
    };
    const r = await dispatch(key(n), deps({ pacer }), undefined, { finishBy: NOW + 7_000, maxWaitMs: 5_000 });
    expect(r).toMatchObject({ kind: 'deferred', reason: 'RATE_LIMITED' });
    expect(asked).toEqual([NOW + 2_000]); // min(now + maxWait, finishBy − send timeout)
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
  });

  it('expired (older than the maximum age) → FAILED: EXPIRED at claim, no send', async () => {
    const n = { ...pending('EMAIL'), createdAt: new Date(NOW - 86_400_001).toISOString() };
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'expired' });
    expect(transitions()).toEqual(['SENDING', 'FAILED']);
    expect(ddb.commandCalls(UpdateCommand)[1]!.args[0].input.ExpressionAttributeValues?.[':lastError']).toBe('EXPIRED');
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
  });

  it('the attempt budget counts only attempts that may have sent', async () => {
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n, 4, 0) })
      .resolves({});
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'failed', reason: 'RETRIES_EXHAUSTED' });
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
  });

  it('unknown outcome on an AT_MOST_ONCE channel → UNKNOWN, never resent', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses
      .on(SendEmailCommand)
      .rejects(Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET' }));
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'unknown', resend: false, reason: 'ECONNRESET' });
    expect(transitions()).toEqual(['SENDING', 'UNKNOWN']);
  });

  it('a 500 after the provider may have accepted, on an AT_MOST_ONCE channel → UNKNOWN, never resent', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).rejects(providerError('InternalFailure', 500));
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'unknown', resend: false, reason: 'InternalFailure' });
    expect(ddb.commandCalls(UpdateCommand)[1]!.args[0].input.ExpressionAttributeValues?.[':lastError']).toBe(
      'UNKNOWN_OUTCOME: InternalFailure',
    );
  });

  it('unknown outcome on an AT_LEAST_ONCE channel → PENDING again for a resend', async () => {
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).rejects(providerError('BadGateway', 502));
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'unknown', resend: true });
    expect(transitions()).toEqual(['SENDING', 'PENDING']);
    // A resend is an attempt, not a deferral: it uses the budget.
    expect(ddb.commandCalls(UpdateCommand)[1]!.args[0].input.UpdateExpression).not.toContain('deferrals');
  });

  it('unknown outcome on an AT_LEAST_ONCE channel with its budget spent → UNKNOWN', async () => {
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n, 9, 6) })
      .resolves({});
    sns.on(PublishCommand).rejects(providerError('InternalError', 500));
    expect(await dispatch(key(n))).toMatchObject({ kind: 'unknown', resend: false });
  });

  it('SMS is published to the number as Transactional; push as MessageStructure json with APNS and GCM', async () => {
    ddb
      .on(UpdateCommand)
      .callsFake((input) =>
        input.ConditionExpression.startsWith('#status = :fromStatus AND (attribute')
          ? { Attributes: sending(input.Key.sk.endsWith('SMS') ? pending('SMS') : pending('PUSH')) }
          : {},
      );
    sns.on(PublishCommand).resolves({ MessageId: 'm' });
    await dispatch(key(pending('SMS')));
    await dispatch(key(pending('PUSH')));
    const [smsCall, pushCall] = sns.commandCalls(PublishCommand).map((c) => c.args[0].input);
    expect(smsCall).toMatchObject({
      PhoneNumber: '+819012345678',
      MessageAttributes: { 'AWS.SNS.SMS.SMSType': { DataType: 'String', StringValue: 'Transactional' } },
    });
    expect(pushCall).toMatchObject({ TargetArn: PUSH_ARN, MessageStructure: 'json' });
    const payload = JSON.parse(pushCall!.Message!);
    expect(JSON.parse(payload.APNS).aps.alert).toEqual({
      title: 'サンプル銀行｜振込完了',
      body: 'Taro Yamada 様へ￥10,000 を送金しました。',
    });
    expect(JSON.parse(payload.GCM).notification.title).toBe('サンプル銀行｜振込完了');
    expect(payload.default).toBeTypeOf('string');
  });

  it('a provider answer without a message id is an unknown outcome, not a success', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({} as never);
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'unknown', reason: 'NoMessageId' });
  });

  it('waits out a near retry before claiming', async () => {
    const n = pending('EMAIL');
    const waits: number[] = [];
    ddb.on(UpdateCommand).rejects(conditionFailed());
    ddb.on(GetCommand).resolves({ Item: { ...n, status: 'SENT' } });
    await dispatch(key(n), deps({ sleep: async (ms) => void waits.push(ms) }), NOW + 800);
    expect(waits).toEqual([800]);
  });

  it('leaves a far retry to the sweeper: no wait, no claim', async () => {
    const n = pending('EMAIL');
    const r = await dispatch(key(n), deps({ sleep: async () => expect.fail('slept') }), NOW + 60_000);
    expect(r).toEqual({ kind: 'skipped', why: 'notDue' });
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('a near retry this record has no time left to wait for is handed back unstarted', async () => {
    const n = pending('EMAIL');
    await expect(dispatch(key(n), deps(), NOW + 1_500, { finishBy: NOW + 6_000, maxWaitMs: 1_000 })).rejects.toThrow(
      NotStartedError,
    );
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('a stale record for a deferred item cannot claim it before its retryAt', async () => {
    const n = pending('EMAIL');
    ddb.on(UpdateCommand).rejects(conditionFailed());
    ddb.on(GetCommand).resolves({ Item: { ...n, retryAt: NOW + 30_000 } });
    expect(await dispatch(key(n))).toEqual({ kind: 'skipped', why: 'notDue' });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
  });
});

describe('dispatch: which stream records send', () => {
  const n = pending('EMAIL');
  it('a new PENDING notification (INSERT) and one put back to PENDING (MODIFY) are dispatched', () => {
    expect(dispatchable(streamRecord('INSERT', n))?.key).toEqual(key(n));
    expect(dispatchable(streamRecord('MODIFY', { ...n, retryAt: NOW + 5 }, sending(n)))).toEqual({
      key: key(n),
      notificationId: n.notificationId,
      retryAt: NOW + 5,
    });
  });
  it('the send-rate windows and the breaker share the table but never reach dispatch: not through the trigger, not in code', () => {
    const rate = streamRecord('MODIFY', { pk: 'RATE#EMAIL', sk: '1796068552000', kind: 'RATE', used: 7 });
    const breaker = streamRecord('INSERT', { pk: 'BREAKER#SMS', sk: 'BREAKER', kind: 'BREAKER', openUntil: NOW });
    for (const r of [rate, breaker]) {
      expect(matchesFilter(DISPATCH_FILTER_PATTERN, r)).toBe(false);
      expect(dispatchable(r)).toBeUndefined();
    }
  });

  it('our own status updates, TTL removals, inbox and quarantine items are ignored', () => {
    expect(dispatchable(streamRecord('MODIFY', sending(n), n))).toBeUndefined();
    expect(dispatchable(streamRecord('MODIFY', { ...n, status: 'SENT' }, sending(n)))).toBeUndefined();
    expect(dispatchable(streamRecord('REMOVE', undefined, n))).toBeUndefined();
    expect(dispatchable(streamRecord('INSERT', { pk: n.pk, sk: 'INBOX', kind: 'INBOX' }))).toBeUndefined();
    expect(
      dispatchable(streamRecord('INSERT', { pk: 'QUARANTINE#t#0#1', sk: 'RECORD', kind: 'QUARANTINE' })),
    ).toBeUndefined();
  });
});

/** A Lambda context with `ms` left. */
const context = (ms: number) => ({ getRemainingTimeInMillis: () => ms }) as never;

describe('criticalFirst: the order in which the records of a batch take the send slots', () => {
  it('critical, then normal, then bulk; stream order within a class; anything else among the normal ones', () => {
    const of = (id: string, template: string) => ({ ...pending('EMAIL'), pk: `EVENT#${id}`, template });
    const records = [
      streamRecord('INSERT', of('transfer', 'TransferCompleted')),
      streamRecord('INSERT', of('statement', 'StatementReady')),
      streamRecord('INSERT', of('login', 'LoginFromNewDevice')),
      streamRecord('REMOVE', undefined, of('removed', 'StatementReady')),
      streamRecord('INSERT', of('unknown-type', 'NoSuchType')),
      streamRecord('MODIFY', of('password', 'PasswordChanged')),
      streamRecord('INSERT', of('card', 'CardPayment')),
    ];
    const pk = (r: (typeof records)[number]) => (r.dynamodb?.NewImage ?? r.dynamodb?.OldImage)?.pk?.S;
    expect(criticalFirst(records).map(pk)).toEqual([
      'EVENT#login',
      'EVENT#password',
      'EVENT#transfer',
      'EVENT#removed',
      'EVENT#unknown-type',
      'EVENT#card',
      'EVENT#statement',
    ]);
    // The batch itself is left as the stream delivered it.
    expect(records.map(pk)[0]).toBe('EVENT#transfer');
  });
});

describe('dispatch handler', () => {
  it('reports only the record whose DynamoDB update failed as a batch item failure', async () => {
    const { handler } = await import('../../functions/dispatch/index.ts');
    // Created just now on the real clock the handler reads: a fixed date would pass the 24 h maximum age one day.
    const ok = pending('EMAIL', Date.now() - 1000);
    const broken = { ...pending('PUSH', Date.now() - 1000), pk: 'EVENT#broken', notificationId: 'broken#PUSH' };
    ddb.on(UpdateCommand).callsFake((input) => {
      if (input.Key.pk === 'EVENT#broken')
        throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
      // The lease runs on the real clock the handler reads.
      return input.ConditionExpression.startsWith('#status = :fromStatus AND (attribute')
        ? { Attributes: { ...sending(ok), leaseUntil: Date.now() + 120_000 } }
        : {};
    });
    ddb.on(GetCommand).resolves({}); // the channel breaker: never opened; no suppression, no preferences
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-ok' });
    const records = [streamRecord('INSERT', ok), streamRecord('INSERT', broken), streamRecord('REMOVE', undefined, ok)];
    const response = await handler(streamEvent(records), context(60_000));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1]!.dynamodb!.SequenceNumber }]);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
    // The send took a token from the shared bucket first: one conditional ADD on the channel's current window.
    const take = ddb.commandCalls(UpdateCommand).find((c) => c.args[0].input.Key?.pk === 'RATE#EMAIL');
    expect(take?.args[0].input).toMatchObject({
      UpdateExpression: expect.stringContaining('ADD used :n'),
      ConditionExpression: 'attribute_not_exists(used) OR used <= :max',
    });
  });

  it('gives a critical record of the batch the first free send slot, ahead of the normal ones before it', async () => {
    const { handler } = await import('../../functions/dispatch/index.ts');
    // Twelve normal emails, then a sign-in alert: more records than the invocation's 10 send slots.
    const normal = Array.from({ length: 12 }, (_, i) => ({
      ...pending('EMAIL', Date.now() - 1000),
      pk: `EVENT#normal-${i}`,
      notificationId: `normal-${i}#EMAIL`,
    }));
    const critical = {
      ...pending('EMAIL', Date.now() - 1000),
      pk: 'EVENT#login',
      notificationId: 'login#EMAIL',
      template: 'LoginFromNewDevice',
    };
    const claimed: string[] = [];
    ddb.on(UpdateCommand).callsFake((input) => {
      if (!input.ConditionExpression.startsWith('#status = :fromStatus AND (attribute')) return {};
      claimed.push(input.Key.pk);
      const item = [...normal, critical].find((n) => n.pk === input.Key.pk) as NotificationItem;
      return { Attributes: { ...sending(item), leaseUntil: Date.now() + 120_000 } };
    });
    ddb.on(GetCommand).resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-ok' });
    const records = [...normal, critical].map((n) => streamRecord('INSERT', n));
    const response = await handler(streamEvent(records), context(60_000));
    expect(response.batchItemFailures).toEqual([]);
    expect(claimed[0]).toBe('EVENT#login');
    // The normal ones keep their stream order behind it.
    expect(claimed.slice(1)).toEqual(normal.map((n) => n.pk));
  });

  it('never starts a send it cannot finish before its own timeout: those records go back unstarted', async () => {
    const { handler } = await import('../../functions/dispatch/index.ts');
    const records = [streamRecord('INSERT', pending('EMAIL')), streamRecord('INSERT', pending('SMS'))];
    // 6 s left: minus the 2 s margin, less than the 5 s a send may take.
    const response = await handler(streamEvent(records), context(6_000));
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(
      records.map((r) => r.dynamodb!.SequenceNumber),
    );
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
  });
});

/** A DynamoDB error as the SDK raises it once its own retries are spent. */
const dynamoError = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
/** The conditional updates after the claim, by what each wrote: the status, or the lease extension. */
const writes = () =>
  ddb
    .commandCalls(UpdateCommand)
    .slice(1)
    .map((c) => {
      const v = c.args[0].input.ExpressionAttributeValues ?? {};
      return v[':lease'] !== undefined
        ? `lease${v[':providerMessageId'] ? `+${v[':providerMessageId']}` : ''}`
        : v[':to'];
    });

describe('dispatch: what the provider established is recorded, whatever DynamoDB does meanwhile', () => {
  it.each([
    ['throttled', dynamoError('ThrottlingException', 400)],
    ['a 500', dynamoError('InternalServerError', 500)],
    ['a timeout', Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET' })],
  ])(
    'the SENT write fails (%s) after the provider accepted: kept trying, SENT with the message id, sent once',
    async (_what, error) => {
      const n = pending('SMS');
      ddb
        .on(UpdateCommand)
        .resolvesOnce({ Attributes: sending(n) })
        .rejectsOnce(error)
        .rejectsOnce(error)
        .resolves({});
      sns.on(PublishCommand).resolves({ MessageId: 'sns-accepted' });
      const r = await dispatch(key(n));
      expect(r).toMatchObject({
        kind: 'sent',
        providerMessageId: 'sns-accepted',
        acceptance: 'recorded',
        fenced: false,
      });
      expect(writes()).toEqual(['SENT', 'SENT', 'SENT']);
      // The same write each time (its own updatedAt, which the lost-reply re-read compares).
      const marks = ddb.commandCalls(UpdateCommand).slice(1);
      expect(new Set(marks.map((c) => c.args[0].input.ExpressionAttributeValues?.[':now'])).size).toBe(1);
      expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
    },
  );

  it('a write that would outlive the lease first extends it — with the message id, so the acceptance is on the item', async () => {
    let now = NOW;
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: { ...sending(n), leaseUntil: NOW + 10_000 } })
      .rejectsOnce(dynamoError('ThrottlingException', 400))
      .resolves({});
    sns.on(PublishCommand).callsFake(async () => {
      now += 7_000; // a slow answer: the lease is close to its end when the SENT write meets throttling
      return { MessageId: 'sns-late-lease' };
    });
    const d = deps({
      now: () => now,
      sleep: async (ms) => {
        now += ms + 2_000;
      },
    });
    const r = await dispatch(key(n), d, undefined, { finishBy: NOW + 50_000, maxWaitMs: 0 });
    expect(r).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
    expect(writes()).toEqual(['SENT', 'lease+sns-late-lease', 'SENT']);
  });

  it("DynamoDB refuses every write until the record's time is up: reported (not thrown), the send never repeated here", async () => {
    let now = NOW;
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .rejects(dynamoError('InternalServerError', 500));
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-unrecorded' });
    const d = deps({
      now: () => now,
      sleep: async (ms) => {
        now += ms;
      },
    });
    const r = await dispatch(key(n), d, undefined, { finishBy: NOW + 10_000, maxWaitMs: 0, recordBy: NOW + 11_000 });
    expect(r).toMatchObject({ kind: 'sent', providerMessageId: 'ses-unrecorded', acceptance: 'notRecorded' });
    expect(now).toBeLessThanOrEqual(NOW + 11_000);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
  });

  it('a throttled attempt stays "not sent" when its release write fails: retried, deferred, never left SENDING', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .rejectsOnce(dynamoError('ProvisionedThroughputExceededException', 400))
      .resolves({});
    ses.on(SendEmailCommand).rejects(providerError('Throttling', 400, 'Maximum sending rate exceeded.'));
    expect(await dispatch(key(n))).toMatchObject({ kind: 'deferred', reason: 'THROTTLED' });
    expect(writes()).toEqual(['PENDING', 'PENDING']);
  });

  it('fenced out after the provider accepted (the sweeper resolved the lease as UNKNOWN): the message id goes on the UNKNOWN item', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n, 1) })
      .rejectsOnce(conditionFailed()) // SENT: fenced
      .resolves({}); // the late acceptance noted
    ddb.on(GetCommand).resolves({ Item: { ...n, status: 'UNKNOWN', attempt: 1, lastError: 'LEASE_EXPIRED' } });
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-after-lease' });
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'sent', fenced: true, acceptance: 'late' });
    const note = ddb.commandCalls(UpdateCommand)[2]!.args[0].input;
    // No message id in either attribute (an item written before keeps an email's in providerMessageId).
    expect(note.ConditionExpression).toBe(
      '#status = :unknown AND attempt = :attempt AND attribute_not_exists(providerMessageId) AND attribute_not_exists(sesMessageId)',
    );
    expect(note.UpdateExpression).toBe('SET sesMessageId = :mid, acceptedLateAt = :now');
    expect(note.ExpressionAttributeValues).toMatchObject({ ':mid': 'ses-after-lease', ':attempt': 1 });
  });
});

describe('dispatch: an error holds only what it breaks', () => {
  const FOREIGN = PUSH_ARN.replace(':123456789012:', ':999988887777:');
  const ANDROID =
    'arn:aws:sns:ap-northeast-1:123456789012:endpoint/GCM/bank-app-android/1a2b3c4d-0000-4000-8000-000000000001';
  const recording = (held: Record<string, number> = {}) => {
    const holds: string[] = [];
    const breaker: Breaker = {
      heldUntil: async (scope) => held[scope],
      hold: async (scope, code, now) => {
        holds.push(`${scope}:${code}`);
        return now + 60_000;
      },
    };
    return { holds, breaker };
  };
  /** Our dispatch: this account and region, and (as the stack says) the one platform application it may publish to. */
  const GRANTED = PUSH_ARN.replace(':endpoint/', ':app/').replace(/\/[^/]+$/, '');
  const ours = () =>
    deps({
      sender: new ProviderSender(new SESClient({}), new SNSClient({}), {
        senderEmail: 'notifications@example.com',
        origin: { account: '123456789012', region: 'ap-northeast-1', applications: [GRANTED] },
      }),
    });

  it.each([
    ["another account's endpoint", FOREIGN],
    ['an endpoint of a platform application the stack does not grant', PUSH_ARN.replace('/bank-app/', '/another-app/')],
  ])('%s (AuthorizationError for that ARN): FAILED, nothing held', async (_case, recipient) => {
    const n = { ...pending('PUSH'), recipient };
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).rejects(providerError('AuthorizationError', 403));
    const { holds, breaker } = recording();
    const r = await dispatch(key(n), { ...ours(), breaker });
    expect(r).toMatchObject({ kind: 'failed', reason: 'FOREIGN_ENDPOINT: AuthorizationError' });
    expect(holds).toEqual([]);
    expect(transitions()).toEqual(['SENDING', 'FAILED']);
    // The granted application's own endpoints are not foreign: the same answer there holds the channel.
    expect(
      isForeignEndpoint(PUSH_ARN, { account: '123456789012', region: 'ap-northeast-1', applications: [GRANTED] }),
    ).toBe(false);
  });

  it('a disabled endpoint: FAILED, nothing held', async () => {
    const n = pending('PUSH');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).rejects(providerError('EndpointDisabled', 400));
    const { holds, breaker } = recording();
    expect(await dispatch(key(n), { ...ours(), breaker })).toMatchObject({
      kind: 'failed',
      reason: 'EndpointDisabled',
    });
    expect(holds).toEqual([]);
  });

  it('a disabled platform application holds that application, not PUSH: deferred, nothing FAILED', async () => {
    const n = pending('PUSH');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).rejects(providerError('PlatformApplicationDisabled', 400));
    const { holds, breaker } = recording();
    const r = await dispatch(key(n), { ...ours(), breaker });
    expect(r).toMatchObject({ kind: 'deferred', reason: 'APPLICATION_BLOCKED', code: 'PlatformApplicationDisabled' });
    expect(holds).toEqual([
      'PUSH#arn:aws:sns:ap-northeast-1:123456789012:app/APNS/bank-app:PlatformApplicationDisabled',
    ]);
  });

  it('a held application defers its own endpoints only: an Android push of another application is sent', async () => {
    const { breaker } = recording({ 'PUSH#arn:aws:sns:ap-northeast-1:123456789012:app/APNS/bank-app': NOW + 30_000 });
    const ios = pending('PUSH');
    const android = { ...pending('PUSH'), pk: 'EVENT#android', recipient: ANDROID };
    ddb
      .on(UpdateCommand)
      .callsFake((input) =>
        input.ConditionExpression.startsWith('#status = :fromStatus AND (attribute')
          ? { Attributes: input.Key.pk === 'EVENT#android' ? sending(android) : sending(ios) }
          : {},
      );
    sns.on(PublishCommand).resolves({ MessageId: 'sns-android' });
    expect(await dispatch(key(ios), { ...ours(), breaker })).toMatchObject({
      kind: 'deferred',
      reason: 'APPLICATION_HELD',
    });
    expect(await dispatch(key(android), { ...ours(), breaker })).toMatchObject({ kind: 'sent' });
    expect(sns.commandCalls(PublishCommand).map((c) => c.args[0].input.TargetArn)).toEqual([ANDROID]);
  });
});

describe('dispatch: no send starts that cannot finish', () => {
  it('a slow claim leaves too little of the invocation: the send is not started, the item deferred at once', async () => {
    let now = NOW;
    const n = pending('EMAIL');
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-never' });
    ddb
      .on(UpdateCommand)
      .callsFakeOnce(async () => {
        now += 46_000; // the claim took 46 s of the record's 50
        return { Attributes: { ...sending(n), leaseUntil: now + 120_000 } };
      })
      .resolves({});
    const r = await dispatch(key(n), deps({ now: () => now, pacer: unpaced }));
    expect(r).toMatchObject({ kind: 'deferred', reason: 'NO_TIME_LEFT' });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
  });

  it('a token that needed no wait (pooled) after a slow audience read: still checked, not sent', async () => {
    let now = NOW;
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-never' });
    const audience = {
      check: async () => {
        now += 47_000;
        return undefined;
      },
    };
    const given: unknown[] = [];
    const token = { window: NOW - (NOW % 1_000), rank: 1 };
    const pacer: Pacer = { acquire: async () => token, giveBack: (c, back) => void given.push([c, back]) };
    const r = await dispatch(key(n), deps({ now: () => now, pacer, audience }));
    expect(r).toMatchObject({ kind: 'deferred', reason: 'NO_TIME_LEFT' });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
    expect(given).toEqual([['EMAIL', token]]);
  });

  it('a send that would outlive its lease is not started either', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: { ...sending(n), leaseUntil: NOW + 4_000 } })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-never' });
    const r = await dispatch(key(n));
    expect(r).toMatchObject({ kind: 'deferred', reason: 'NO_TIME_LEFT' });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
  });
});

describe('dispatch: a read between the claim and the send that fails sent nothing', () => {
  it('the audience read fails (DynamoDB throttled): the claim goes back as a NOT_SENT deferral, never left SENDING', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    const given: unknown[] = [];
    const token = { window: NOW - (NOW % 1_000), rank: 1 };
    const pacer: Pacer = { acquire: async () => token, giveBack: (c, back) => void given.push([c, back]) };
    const audience = {
      check: async () => {
        throw dynamoError('ThrottlingException', 400);
      },
    };
    const r = await dispatch(key(n), deps({ pacer, audience }));
    expect(r).toMatchObject({ kind: 'deferred', reason: 'NOT_SENT', code: 'ThrottlingException' });
    expect(transitions()).toEqual(['SENDING', 'PENDING']);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(0);
    expect(given).toEqual([['EMAIL', token]]);
  });

  it('the breaker read fails: deferred the same way', async () => {
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    const breaker: Breaker = {
      heldUntil: async () => {
        throw dynamoError('InternalServerError', 500);
      },
      hold: async (_s, _c, now) => now,
    };
    expect(await dispatch(key(n), deps({ breaker }))).toMatchObject({ kind: 'deferred', reason: 'NOT_SENT' });
    expect(sns.commandCalls(PublishCommand)).toHaveLength(0);
  });
});
