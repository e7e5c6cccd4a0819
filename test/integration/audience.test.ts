/**
 * Delivery feedback and the audience on DynamoDB Local, through the real handlers: SES feedback (reordered and
 * duplicated) recorded by rank without touching SENT; a permanent bounce or a complaint suppressing the address, so a
 * later notification to it ends SUPPRESSED and is not sent; an operator lifting it; preferences through the inbox,
 * newest first.
 */
import { readFileSync } from 'node:fs';
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { addressHash } from '../../functions/domain/audience.ts';
import { allowedChannels, EVENT_TYPES } from '../../functions/domain/catalogue.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import type { EventType } from '../../functions/domain/event/contract.ts';
import { notificationSk, parseNotificationId } from '../../functions/domain/keys.ts';
import { messageIdOf } from '../../functions/domain/message-id.ts';
import { apply, liftSuppression, listAudit, listSuppressions, preview } from '../../functions/operator/index.ts';
import { DynamoAudienceStore } from '../../functions/stores/audience-store.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { converge, type Handlers, KafkaMapping, lambdaContext, StreamMapping } from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { preferencesEvent, transferEvent } from '../support/events.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE_ID, BOB_ID, operatorOn } from '../support/operator.ts';
import { type SesEventOptions, type SesEventType, sesEvent } from '../support/ses-events.ts';

const { ses, sns } = providerMocks();
let table: LocalTable;
let handlers: Handlers;
let reader: StreamReader;
let stream: StreamMapping;
let kafka: KafkaMapping;
let audience: DynamoAudienceStore;
let offset = 0;

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  handlers = await handlersOn(table, { PENDING_THRESHOLD_SECONDS: '1' });
  reader = new StreamReader(table.endpoint, table.tableName);
  stream = new StreamMapping(reader, handlers.dispatch);
  kafka = new KafkaMapping(handlers.ingest);
  audience = new DynamoAudienceStore(table.doc, table.tableName);
});
afterAll(() => reader.close());

beforeEach(() => {
  ses.reset();
  sns.reset();
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

const ingest = async (values: object[]) => {
  await kafka.deliver(
    mskEvent(values.map((value) => ({ topic: 'banking.transfers', partition: 0, offset: offset++, value }))),
  );
  await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });
};
const notification = async (eventId: string, channel: Channel = 'EMAIL') =>
  (await table.eventItems(eventId)).find((i) => i.sk === notificationSk(channel)) ?? {};
/** SES feedback about the message SES accepted for the notification (unless the test names another message). */
const feedback = async (type: SesEventType, o: SesEventOptions) => {
  const ref = parseNotificationId(o.notificationId ?? '');
  const sent = await notification(ref?.eventId ?? '', ref?.channel);
  const messageId = messageIdOf(sent);
  return handlers.feedback(
    sesEvent(type, { ...(messageId === undefined ? {} : { messageId }), ...o }),
    lambdaContext('notifier-feedback'),
  );
};
const emailed = () => ses.commandCalls(SendEmailCommand).map((c) => c.args[0].input.Destination?.ToAddresses?.[0]);
const email = (eventId: string, to: string) =>
  transferEvent({ eventId, channels: ['EMAIL'], recipient: { email: to, userId: `user-of-${eventId}` } });

describe('delivery feedback on DynamoDB Local', () => {
  it('a late Delivery and duplicates never overwrite a Bounce; SENT stays SENT', async () => {
    await ingest([email('fb-1', 'gone@example.com')]);
    const nid = 'fb-1#EMAIL';
    const sent = await notification('fb-1');
    expect(sent).toMatchObject({ status: 'SENT' });
    await feedback('DeliveryDelay', { notificationId: nid, to: 'gone@example.com', at: '2026-11-30T09:15:02Z' });
    await feedback('Bounce', { notificationId: nid, to: 'gone@example.com', at: '2026-11-30T09:15:05Z' });
    await feedback('Delivery', { notificationId: nid, to: 'gone@example.com', at: '2026-11-30T09:15:04Z' });
    await feedback('Bounce', { notificationId: nid, to: 'gone@example.com', at: '2026-11-30T09:15:05Z' });
    await feedback('DeliveryDelay', { notificationId: nid, to: 'gone@example.com', at: '2026-11-30T09:15:09Z' });
    const after = await notification('fb-1');
    expect(after).toMatchObject({
      status: 'SENT',
      deliveryStatus: 'BOUNCED',
      bounceType: 'Permanent',
      bounceSubType: 'General',
      deliveryAt: '2026-11-30T09:15:05.000Z',
      // The state machine's own attributes are untouched.
      updatedAt: sent.updatedAt,
      attempt: sent.attempt,
      sesMessageId: sent.sesMessageId,
    });
  });

  it('feedback about another message of the notification (an earlier send, before a resend) changes nothing', async () => {
    await ingest([email('fb-other', 'other-message@example.com')]);
    const nid = 'fb-other#EMAIL';
    await feedback('Delivery', {
      notificationId: nid,
      to: 'other-message@example.com',
      at: '2026-11-30T09:15:04Z',
      messageId: 'an-earlier-send',
    });
    expect(await notification('fb-other')).not.toHaveProperty('deliveryStatus');
    await feedback('Delivery', { notificationId: nid, to: 'other-message@example.com', at: '2026-11-30T09:15:05Z' });
    expect(await notification('fb-other')).toMatchObject({ deliveryStatus: 'DELIVERED' });
  });

  it('every order of the same feedback ends the same: COMPLAINED over DELIVERED over DELAYED', async () => {
    await ingest([email('fb-2', 'a@example.com'), email('fb-3', 'b@example.com')]);
    const events: [SesEventType, string][] = [
      ['DeliveryDelay', '2026-11-30T09:15:02Z'],
      ['Delivery', '2026-11-30T09:15:04Z'],
      ['Complaint', '2026-11-30T10:00:00Z'],
    ];
    for (const e of events) await feedback(e[0], { notificationId: 'fb-2#EMAIL', to: 'a@example.com', at: e[1] });
    for (const e of [...events].reverse())
      await feedback(e[0], { notificationId: 'fb-3#EMAIL', to: 'b@example.com', at: e[1] });
    for (const id of ['fb-2', 'fb-3']) {
      expect(await notification(id)).toMatchObject({ status: 'SENT', deliveryStatus: 'COMPLAINED' });
    }
  });

  it('feedback for a notification that no longer exists still suppresses the address', async () => {
    const r = await feedback('Complaint', { notificationId: 'expired-long-ago#EMAIL', to: 'old@example.com' });
    expect(r).toMatchObject({ kind: 'noNotification', suppressions: ['suppressed'] });
    expect((await audience.list('EMAIL')).map((s) => s.sk)).toContain(addressHash('EMAIL', 'old@example.com'));
  });
});

describe('suppression on DynamoDB Local', () => {
  it('after a permanent bounce, a later notification to the address (any spelling) ends SUPPRESSED, not sent', async () => {
    await ingest([email('sp-1', 'bouncer@example.com')]);
    await feedback('Bounce', { notificationId: 'sp-1#EMAIL', to: 'bouncer@example.com' });
    ses.resetHistory();
    await ingest([email('sp-2', 'Bouncer@Example.com')]);
    expect(await notification('sp-2')).toMatchObject({ status: 'SUPPRESSED', suppressedReason: 'BOUNCED' });
    expect((await notification('sp-2')).sweepKey).toBeUndefined();
    expect(emailed()).toEqual([]);
    // No address in any key or attribute of the suppression item.
    const items = await table.allItems();
    const suppression = items.filter((i) => i.kind === 'SUPPRESSION');
    expect(JSON.stringify(suppression).toLowerCase()).not.toContain('bouncer@');
  });

  it("a bounce naming another address than the notification's own suppresses nothing; its own is suppressed", async () => {
    await ingest([email('sp-own', 'own@example.com')]);
    const stray = await feedback('Bounce', { notificationId: 'sp-own#EMAIL', to: 'someone-else@example.com' });
    expect(stray).toMatchObject({ suppressions: ['notTheRecipient'] });
    expect((await audience.list('EMAIL')).map((s) => s.sk)).not.toContain(
      addressHash('EMAIL', 'someone-else@example.com'),
    );
    const own = await feedback('Bounce', { notificationId: 'sp-own#EMAIL', to: 'Own@Example.com' });
    expect(own).toMatchObject({ suppressions: ['suppressed'] });
  });

  it('a transient bounce suppresses nothing; a complaint does', async () => {
    await ingest([email('sp-3', 'full@example.com'), email('sp-4', 'spam-button@example.com')]);
    await feedback('Bounce', { notificationId: 'sp-3#EMAIL', to: 'full@example.com', bounceType: 'Transient' });
    await feedback('Complaint', { notificationId: 'sp-4#EMAIL', to: 'spam-button@example.com' });
    ses.resetHistory();
    await ingest([email('sp-5', 'full@example.com'), email('sp-6', 'spam-button@example.com')]);
    expect(await notification('sp-5')).toMatchObject({ status: 'SENT' });
    expect(await notification('sp-6')).toMatchObject({ status: 'SUPPRESSED', suppressedReason: 'COMPLAINED' });
    expect(emailed()).toEqual(['full@example.com']);
  });

  it('an operator lifts a suppression: the next notification is sent, and a duplicate of the old bounce does not re-suppress', async () => {
    await ingest([email('sp-7', 'back@example.com')]);
    const old = { notificationId: 'sp-7#EMAIL', to: 'back@example.com', at: '2026-11-30T09:15:05Z' };
    await feedback('Bounce', old);
    expect(
      await audience.lift('EMAIL', addressHash('EMAIL', 'back@example.com'), ALICE_ID, Date.now(), 'address fixed'),
    ).toBe(true);
    expect(
      await audience.lift('EMAIL', addressHash('EMAIL', 'back@example.com'), ALICE_ID, Date.now(), 'address fixed'),
    ).toBe(false);
    expect(await feedback('Bounce', old)).toMatchObject({ suppressions: ['liftedSince'] });
    ses.resetHistory();
    await ingest([email('sp-8', 'back@example.com')]);
    expect(await notification('sp-8')).toMatchObject({ status: 'SENT' });
    // A new bounce, after the lift, suppresses it again.
    await feedback('Bounce', { notificationId: 'sp-8#EMAIL', to: 'back@example.com', at: new Date().toISOString() });
    await ingest([email('sp-9', 'back@example.com')]);
    expect(await notification('sp-9')).toMatchObject({ status: 'SUPPRESSED', suppressedReason: 'BOUNCED' });
  });
});

describe('preferences on DynamoDB Local', () => {
  const transfer = (eventId: string) => transferEvent({ eventId, recipient: { userId: 'u-prefs' } });

  it('an opted-out channel ends SUPPRESSED (OPTED_OUT); an older update arriving late changes nothing', async () => {
    await ingest([preferencesEvent('pr-1', '2026-11-30T09:00:00Z', ['SMS'], 'u-prefs')]);
    await ingest([transfer('pr-t1')]);
    expect(await notification('pr-t1', 'SMS')).toMatchObject({ status: 'SUPPRESSED', suppressedReason: 'OPTED_OUT' });
    expect(await notification('pr-t1', 'EMAIL')).toMatchObject({ status: 'SENT' });
    expect(await notification('pr-t1', 'PUSH')).toMatchObject({ status: 'SENT' });
    expect(sns.commandCalls(PublishCommand).filter((c) => c.args[0].input.PhoneNumber)).toHaveLength(0);

    // Older, arriving late: recorded in the inbox as STALE, the opt-out stays.
    await ingest([preferencesEvent('pr-0', '2026-11-30T08:00:00Z', [], 'u-prefs')]);
    expect((await table.eventItems('pr-0')).find((i) => i.kind === 'INBOX')).toMatchObject({ skipped: 'STALE' });
    await ingest([transfer('pr-t2')]);
    expect(await notification('pr-t2', 'SMS')).toMatchObject({ status: 'SUPPRESSED', suppressedReason: 'OPTED_OUT' });

    // Newer, empty: back in to everything.
    await ingest([preferencesEvent('pr-2', '2026-11-30T10:00:00Z', [], 'u-prefs')]);
    await ingest([transfer('pr-t3')]);
    expect(await notification('pr-t3', 'SMS')).toMatchObject({ status: 'SENT' });
  });

  /**
   * The opt-out rule for every notice type, stated per type: a new type must be listed here with the decision taken
   * for it (a security notice is exempt), and every listed one is checked through the pipeline, on DynamoDB Local.
   */
  const PREFERENCES_APPLY: Record<EventType, boolean> = {
    TransferCompleted: true,
    TransferFailed: true,
    CardPayment: true,
    LoginFromNewDevice: false,
    PasswordChanged: false,
    LowBalance: true,
    PaymentDue: true,
    StatementReady: true,
    DirectDebitUpcoming: true,
    OneTimePasscode: false,
  };
  /** The data of each type: the transfers' factory, and examples/catalogue.jsonl for the rest. */
  const catalogueData = new Map(
    readFileSync(new URL('../../examples/catalogue.jsonl', import.meta.url), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { eventId: string; type: string; data: Record<string, unknown> })
      .filter((e) => e.eventId.startsWith('cat-en-'))
      .map((e) => [e.type, e.data] as const),
  );

  it('every notice type: an opted-out channel ends SUPPRESSED unless the type is exempt; a hard stop silences every type', async () => {
    expect(Object.keys(PREFERENCES_APPLY).sort()).toEqual([...EVENT_TYPES].sort());
    await ingest([preferencesEvent('pr-every', '2026-11-30T09:00:00Z', ['EMAIL', 'PUSH'], 'u-every')]);
    // The customer's phone replied STOP: a hard stop, which no type is exempt from.
    await audience.suppressAddress(
      'SMS',
      '+819012345678',
      'CARRIER_OPT_OUT',
      'pr-every-stop#SMS',
      '2026-11-30T09:00:00Z',
    );
    for (const type of EVENT_TYPES) {
      const eventId = `pr-every-${type}`;
      const data = catalogueData.get(type);
      await ingest([
        transferEvent({
          eventId,
          type,
          occurredAt: new Date(Date.now() - 60_000).toISOString(),
          recipient: { userId: 'u-every' },
          ...(data !== undefined
            ? { data }
            : type === 'TransferFailed'
              ? { data: { reason: 'insufficient funds' } }
              : {}),
        }),
      ]);
      for (const channel of (['EMAIL', 'PUSH'] as const).filter((c) => allowedChannels(type).includes(c)))
        expect(await notification(eventId, channel), `${type} ${channel}`).toMatchObject(
          PREFERENCES_APPLY[type] ? { status: 'SUPPRESSED', suppressedReason: 'OPTED_OUT' } : { status: 'SENT' },
        );
      if (allowedChannels(type).includes('SMS'))
        expect(await notification(eventId, 'SMS'), `${type} SMS`).toMatchObject({
          status: 'SUPPRESSED',
          suppressedReason: 'CARRIER_OPT_OUT',
        });
    }
    expect(emailed().filter((to) => to === 'hanako@example.com')).toHaveLength(
      EVENT_TYPES.filter((t) => !PREFERENCES_APPLY[t] && allowedChannels(t).includes('EMAIL')).length,
    );
  });

  it('a redelivered preferences batch is a duplicate', async () => {
    const e = preferencesEvent('pr-dup', '2026-11-30T07:00:00Z', ['PUSH'], 'u-dup');
    await ingest([e]);
    await ingest([e]);
    const inbox = (await table.eventItems('pr-dup')).filter((i) => i.kind === 'INBOX');
    expect(inbox).toHaveLength(1);
    expect(inbox[0]).not.toHaveProperty('skipped');
  });
});

describe("an operator's suppression lift", () => {
  const ports = () => operatorOn(table);

  it('lists active suppressions by hash (never an address), lifts one after its preview, audited, and refuses when there is none', async () => {
    await ingest([email('op-1', 'ops-case@example.com')]);
    await feedback('Bounce', { notificationId: 'op-1#EMAIL', to: 'ops-case@example.com' });
    const hash = addressHash('EMAIL', 'ops-case@example.com');
    const on = ports();
    const listed = await listSuppressions(on, 'EMAIL', false);
    expect(listed.find((i) => i.addressHash === hash)).toMatchObject({
      cause: 'BOUNCED',
      notificationId: 'op-1#EMAIL',
    });
    expect(JSON.stringify(listed)).not.toContain('@');
    const request = { channel: 'EMAIL' as const, addressHash: addressHash('EMAIL', 'OPS-CASE@example.com') };
    const shown = await preview(liftSuppression, on, request);
    expect(shown).toMatchObject({ ok: true, value: { state: 'ACTIVE', cause: 'BOUNCED' } });
    expect((await listSuppressions(on, 'EMAIL', false)).map((i) => i.addressHash)).toContain(hash);
    const alice = { identity: ALICE_ID, reason: 'mailbox fixed' };
    expect(await apply(liftSuppression, on, request, alice)).toEqual({
      lifted: true,
      channel: 'EMAIL',
      addressHash: hash,
      by: 'alice',
    });
    // Audited: who, when, why, which suppression, and the outcome (kept as long as the evidence).
    expect(await listAudit(on)).toMatchObject([
      {
        action: 'SUPPRESSION_LIFT',
        by: ALICE_ID,
        reason: 'mailbox fixed',
        target: `EMAIL#${hash}`,
        outcome: { result: 'DONE' },
      },
    ]);
    await expect(apply(liftSuppression, on, request, { identity: BOB_ID, reason: 'again' })).rejects.toThrow(
      `no active EMAIL suppression under ${hash}`,
    );
    expect((await listSuppressions(on, 'EMAIL', false)).map((i) => i.addressHash)).not.toContain(hash);
    expect((await listSuppressions(on, 'EMAIL', true)).find((i) => i.addressHash === hash)).toMatchObject({
      state: 'LIFTED',
      liftedBy: 'alice',
      liftReason: 'mailbox fixed',
    });
  });
});
