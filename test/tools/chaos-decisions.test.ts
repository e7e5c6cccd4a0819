/** The chaos suite's fault decisions: a pure function of (seed, the operation's identity, its occurrence). */
import { describe, expect, it } from 'vitest';
import { callIdentity, FaultDecisions } from '../../tools/chaos/calls.ts';
import { attributeSends, newWitness } from '../../tools/chaos/witness.ts';
import type { AcceptedSend } from '../../tools/local/providers.ts';

const draws = (d: FaultDecisions, ids: string[]) => ids.map((id) => d.unit(id));

describe('chaos fault decisions', () => {
  it('depend on the seed and the identity, not on the order of other calls or the run prefix', () => {
    const a = new FaultDecisions(42, 'r1x0-');
    const b = new FaultDecisions(42, 'r7x3-');
    const x = draws(a, ['tx:EVENT#r1x0-e1', 'tx:EVENT#r1x0-e2', 'tx:EVENT#r1x0-e1']);
    // Another run, other calls in between, another order: each identity's n-th occurrence decides alike.
    b.unit('Update:RATE#EMAIL');
    const y2 = b.unit('tx:EVENT#r7x3-e2');
    const y1 = draws(b, ['tx:EVENT#r7x3-e1', 'tx:EVENT#r7x3-e1']);
    expect([y1[0], y2, y1[1]]).toEqual(x);
    expect(x[0]).not.toBe(x[2]); // a second occurrence is a new decision
    expect(new FaultDecisions(43, 'r1x0-').unit('tx:EVENT#r1x0-e1')).not.toBe(x[0]);
    for (const u of x) expect(u >= 0 && u < 1).toBe(true);
  });

  it('name an update by its item, what it writes and its attempt; a send-rate window without its wall-clock key', () => {
    const markSent = {
      Key: { pk: 'EVENT#e1', sk: 'NOTIFICATION#SMS' },
      ExpressionAttributeValues: { ':to': 'SENT', ':attempt': 2, ':now': '2026-12-01T00:00:00.000Z' },
    };
    expect(callIdentity('UpdateCommand', markSent)).toBe('Update:EVENT#e1:NOTIFICATION#SMS:SENT:2:');
    const wire = {
      Key: { pk: { S: 'EVENT#e1' }, sk: { S: 'NOTIFICATION#SMS' } },
      ExpressionAttributeValues: { ':to': { S: 'SENT' }, ':attempt': { N: '2' } },
    };
    expect(callIdentity('UpdateItemCommand', wire)).toBe('Update:EVENT#e1:NOTIFICATION#SMS:SENT:2:');
    const window = (sk: string) => callIdentity('UpdateCommand', { Key: { pk: 'RATE#EMAIL', sk } });
    expect(window('1796068552000')).toBe(window('1796068553000'));
    expect(
      callIdentity('TransactWriteCommand', { TransactItems: [{ Put: { Item: { pk: 'EVENT#e9', sk: 'INBOX' } } }] }),
    ).toBe('tx:EVENT#e9');
  });
});

describe('the attempt witness', () => {
  it('ties each accepted send to its attempt: by message id, or in order among the unknown outcomes of its address', () => {
    const w = newWitness();
    w.attemptByMessageId.set('m-2', 2);
    w.unknownCalls.set('+15550001', [1, 3]);
    const send = (messageId: string, to: string): AcceptedSend => ({
      messageId,
      notificationId: undefined,
      channel: 'SMS',
      to,
      text: '',
      at: 0,
    });
    expect(
      attributeSends(
        [send('m-1', '+15550001'), send('m-2', '+15550001'), send('m-3', '+15550001'), send('m-9', '+1')],
        w,
      ),
    ).toEqual([1, 2, 3, undefined]);
  });
});
