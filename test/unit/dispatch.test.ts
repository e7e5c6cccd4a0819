import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoNotificationStore } from '../../functions/commons/notification-store.ts';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { ProviderSender, tagValue } from '../../functions/dispatch/senders.ts';
import { dispatchable } from '../../functions/dispatch/stream-record.ts';
import { parseEventJson } from '../../functions/domain/event.ts';
import { buildNotification, type NotificationItem } from '../../functions/domain/notification.ts';
import { EXAMPLE_BRAND } from '../../local/example-brand.ts';
import { PUSH_ARN, transferEvent } from '../support/events.ts';
import { streamEvent, streamRecord } from '../support/stream.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const ses = mockClient(SESClient);
const sns = mockClient(SNSClient);
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const NOW = Date.parse('2026-11-30T09:20:00Z');

const event = (() => {
  const d = parseEventJson(JSON.stringify(transferEvent()));
  if (!d.ok) throw new Error('fixture');
  return d.event;
})();
const pending = (channel: 'EMAIL' | 'PUSH' | 'SMS') =>
  buildNotification(
    event,
    channel,
    channel === 'EMAIL' ? 'hanako@example.com' : channel === 'PUSH' ? PUSH_ARN : '+819012345678',
    NOW - 1000,
    { retentionDays: 35 },
  );
const sending = (n: NotificationItem, attempt = 1): NotificationItem => ({
  ...n,
  status: 'SENDING',
  attempt,
  leaseUntil: NOW + 300_000,
});
const key = (n: NotificationItem) => ({ pk: n.pk, sk: n.sk });

const deps = (over: Partial<DispatchDeps> = {}): DispatchDeps => ({
  store: new DynamoNotificationStore(doc, 'notifier-test'),
  sender: new ProviderSender(new SESClient({}), new SNSClient({}), {
    senderEmail: 'notifications@example.com',
    configurationSet: 'notifier',
  }),
  now: () => NOW,
  sleep: async () => undefined,
  policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_LEAST_ONCE' },
  leaseMs: 300_000,
  sendTimeoutMs: 5_000,
  maxSendAttempts: 3,
  retryBaseMs: 100,
  brand: EXAMPLE_BRAND,
  ...over,
});

const conditionFailed = () =>
  Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
const providerError = (name: string, status?: number) =>
  Object.assign(new Error(name), { name, $metadata: status === undefined ? {} : { httpStatusCode: status } });

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
    const r = await dispatchNotification(key(n), undefined, deps());
    expect(r).toMatchObject({ kind: 'sent', providerMessageId: 'ses-1', fenced: false });

    const [claim, mark] = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(claim?.ConditionExpression).toBe('#status = :pending');
    expect(claim?.UpdateExpression).toContain('attempt = attempt + :one');
    expect(claim?.ExpressionAttributeValues?.[':lease']).toBe(NOW + 300_000);
    expect(mark?.ConditionExpression).toBe('#status = :sending AND attempt = :attempt');
    expect(mark?.ExpressionAttributeValues).toMatchObject({
      ':to': 'SENT',
      ':attempt': 1,
      ':providerMessageId': 'ses-1',
    });
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

  it('a redelivered record finds the item no longer PENDING: no send', async () => {
    const n = pending('EMAIL');
    ddb.on(UpdateCommand).rejects(conditionFailed());
    ddb.on(GetCommand).resolves({ Item: { ...n, status: 'SENT', attempt: 1 } });
    const r = await dispatchNotification(key(n), undefined, deps());
    expect(r).toEqual({ kind: 'skipped', why: 'claimedElsewhere' });
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
    const results = await Promise.all([
      dispatchNotification(key(n), undefined, deps()),
      dispatchNotification(key(n), undefined, deps()),
    ]);
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
    const r = await dispatchNotification(key(n), undefined, deps());
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
    const r = await dispatchNotification(key(n), undefined, deps());
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
    const r = await dispatchNotification(key(n), undefined, deps());
    expect(r).toMatchObject({ kind: 'failed', reason: 'EndpointDisabledException' });
    expect(transitions()).toEqual(['SENDING', 'FAILED']);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(1);
  });

  it('a transient failure → back to PENDING with a backoff, the one retry path', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).rejects(providerError('Throttling', 400));
    const r = await dispatchNotification(key(n), undefined, deps());
    expect(r).toMatchObject({ kind: 'retrying', reason: 'Throttling' });
    const release = ddb.commandCalls(UpdateCommand)[1]!.args[0].input;
    expect(release.ExpressionAttributeValues).toMatchObject({ ':to': 'PENDING', ':reason': 'Throttling' });
    expect(release.ExpressionAttributeValues?.[':retryAt']).toBeGreaterThanOrEqual(NOW);
  });

  it('a transient failure on the last attempt → FAILED RETRIES_EXHAUSTED', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n, 3) })
      .resolves({});
    ses.on(SendEmailCommand).rejects(providerError('ServiceUnavailable', 503));
    const r = await dispatchNotification(key(n), undefined, deps());
    expect(r).toMatchObject({ kind: 'failed', reason: 'RETRIES_EXHAUSTED: ServiceUnavailable' });
  });

  it('unknown outcome on an AT_MOST_ONCE channel → UNKNOWN, never resent', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).rejects(providerError('TimeoutError'));
    const r = await dispatchNotification(key(n), undefined, deps());
    expect(r).toMatchObject({ kind: 'unknown', resend: false });
    expect(transitions()).toEqual(['SENDING', 'UNKNOWN']);
  });

  it('unknown outcome on an AT_LEAST_ONCE channel → PENDING again for a resend', async () => {
    const n = pending('SMS');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    sns.on(PublishCommand).rejects(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const r = await dispatchNotification(key(n), undefined, deps());
    expect(r).toMatchObject({ kind: 'unknown', resend: true });
    expect(transitions()).toEqual(['SENDING', 'PENDING']);
  });

  it('SMS is published to the number as Transactional; push as MessageStructure json with APNS and GCM', async () => {
    ddb
      .on(UpdateCommand)
      .callsFake((input) =>
        input.ConditionExpression === '#status = :pending'
          ? { Attributes: sending(input.Key.sk.endsWith('SMS') ? pending('SMS') : pending('PUSH')) }
          : {},
      );
    sns.on(PublishCommand).resolves({ MessageId: 'm' });
    await dispatchNotification(key(pending('SMS')), undefined, deps());
    await dispatchNotification(key(pending('PUSH')), undefined, deps());
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
    const r = await dispatchNotification(key(n), undefined, deps());
    expect(r).toMatchObject({ kind: 'unknown', reason: 'UnexpectedResponseError' });
  });

  it('waits out a retry backoff before claiming', async () => {
    const n = pending('EMAIL');
    const waits: number[] = [];
    ddb.on(UpdateCommand).rejects(conditionFailed());
    ddb.on(GetCommand).resolves({ Item: { ...n, status: 'SENT' } });
    await dispatchNotification(key(n), NOW + 800, deps({ sleep: async (ms) => void waits.push(ms) }));
    expect(waits).toEqual([800]);
  });
});

describe('dispatch: which stream records send', () => {
  const n = pending('EMAIL');
  it('a new PENDING notification (INSERT) and one put back to PENDING (MODIFY) are dispatched', () => {
    expect(dispatchable(streamRecord('INSERT', n))?.key).toEqual(key(n));
    expect(dispatchable(streamRecord('MODIFY', { ...n, retryAt: NOW + 5 }, sending(n)))).toEqual({
      key: key(n),
      retryAt: NOW + 5,
    });
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

describe('dispatch handler', () => {
  it('reports only the record whose DynamoDB update failed as a batch item failure', async () => {
    const { handler } = await import('../../functions/dispatch/index.ts');
    const ok = pending('EMAIL');
    const broken = { ...pending('PUSH'), pk: 'EVENT#broken', notificationId: 'broken#PUSH' };
    ddb.on(UpdateCommand).callsFake((input) => {
      if (input.Key.pk === 'EVENT#broken')
        throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
      return input.ConditionExpression === '#status = :pending' ? { Attributes: sending(ok) } : {};
    });
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-ok' });
    const records = [streamRecord('INSERT', ok), streamRecord('INSERT', broken), streamRecord('REMOVE', undefined, ok)];
    const response = await handler(streamEvent(records), {} as never);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1]!.dynamodb!.SequenceNumber }]);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
  });
});
