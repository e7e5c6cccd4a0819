import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { deliveryVerdict, notificationIdOfTag } from '../../functions/domain/feedback.ts';
import { notificationIdOf } from '../../functions/domain/keys.ts';
import { messageIdAttribute, messageIdOf } from '../../functions/domain/message-id.ts';
import { buildEarlierSend } from '../../functions/domain/notification.ts';

const tagOf = (eventId: string, channel: string) => Buffer.from(`${eventId}#${channel}`).toString('base64url');

describe("where a send's message id is kept", () => {
  it('only a channel whose reports carry our tag keeps its id off the providerMessage index', () => {
    for (const channel of CHANNELS) {
      const tagged = notificationIdOfTag(tagOf('evt-1', channel)) !== undefined;
      expect(messageIdAttribute(channel)).toBe(tagged ? 'sesMessageId' : 'providerMessageId');
    }
    expect(messageIdAttribute('EMAIL')).toBe('sesMessageId');
    expect(messageIdAttribute('SMS')).toBe('providerMessageId');
    expect(messageIdAttribute('PUSH')).toBe('providerMessageId');
  });

  it("reads an email's id from either attribute: sesMessageId now, providerMessageId on items written before", () => {
    expect(messageIdOf({ sesMessageId: 'ses-new' })).toBe('ses-new');
    expect(messageIdOf({ providerMessageId: 'ses-old' })).toBe('ses-old');
    expect(messageIdOf({ providerMessageId: 'sns-1' })).toBe('sns-1');
    expect(messageIdOf({})).toBeUndefined();
    expect(messageIdOf({ sesMessageId: '', providerMessageId: 7 })).toBeUndefined();
  });

  it("an email's earlier send keeps its id off the index too; an SMS's stays on it for SNS's late report", () => {
    const email = buildEarlierSend({ eventId: 'evt-2', channel: 'EMAIL' }, 'ses-2', 0);
    expect(email).toMatchObject({ sesMessageId: 'ses-2', notificationId: notificationIdOf('evt-2', 'EMAIL') });
    expect(email).not.toHaveProperty('providerMessageId');
    const sms = buildEarlierSend({ eventId: 'evt-2', channel: 'SMS' }, 'sns-2', 0);
    expect(sms).toMatchObject({ providerMessageId: 'sns-2' });
    expect(sms).not.toHaveProperty('sesMessageId');
  });

  it("a report is judged against an email's recorded send whichever attribute holds it", () => {
    const f = { messageId: 'ses-3', rank: 2, atMs: 10, sentAtMs: 1 };
    expect(deliveryVerdict({ sesMessageId: 'ses-3' }, f)).toBe('apply');
    expect(deliveryVerdict({ providerMessageId: 'ses-3' }, f)).toBe('apply');
    expect(deliveryVerdict({ sesMessageId: 'ses-other' }, f)).toBe('otherSend');
  });
});
