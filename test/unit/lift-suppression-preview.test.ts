/**
 * Lifting a suppression says, before it is lifted, what lifting cannot do: a number whose owner replied STOP stays on
 * SNS's opted-out list, whatever notifier lifts, until it is opted in again (functions/operator/lift-suppression.ts).
 */
import { describe, expect, it } from 'vitest';
import type { SuppressionItem } from '../../functions/domain/audience.ts';
import { liftSuppression } from '../../functions/operator/lift-suppression.ts';
import { previewText } from '../../tools/ops/text/actions.ts';

const suppression = (cause: SuppressionItem['cause'], channel: SuppressionItem['channel']): SuppressionItem => ({
  pk: `SUPPRESSION#${channel}#a1b2`,
  sk: 'SUPPRESSION',
  kind: 'SUPPRESSION',
  channel,
  state: 'ACTIVE',
  cause,
  since: '2026-12-05T09:00:00.000Z',
  notificationId: 'demo-sms-stop#SMS',
});

const previewOf = (item: SuppressionItem) => {
  const decided = liftSuppression.decide(item, { channel: item.channel, addressHash: 'a1b2' });
  if (!decided.ok) throw new Error('refused');
  const shown = liftSuppression.shown(decided.value);
  const text = previewText({
    ok: true,
    action: 'SUPPRESSION_LIFT',
    target: `${item.channel}#a1b2`,
    shown,
    fingerprint: 'f',
  } as never);
  return { shown, text };
};

describe('the preview of a suppression lift', () => {
  it("a carrier opt-out (the customer replied STOP): says SNS still delivers no text until the number is opted in again, at the customer's request", () => {
    const { shown, text } = previewOf(suppression('CARRIER_OPT_OUT', 'SMS'));
    expect(shown.stillBlocked).toMatch(/replied STOP.*does not lift that/);
    expect(text).toContain('is suppressed (CARRIER_OPT_OUT since 2026-12-05T09:00:00.000Z, from demo-sms-stop#SMS)');
    expect(text).toMatch(
      /SNS keeps the number on the account's opted-out list and delivers no text to it until the number is opted in again \(SNS OptInPhoneNumber, at most once every 30 days per number\)/,
    );
    expect(text).toMatch(/only when the customer has asked to receive texts again \(for instance by replying START\)/);
    expect(text).not.toMatch(/lets the next notification to this address be sent/);
  });

  it('any other cause: lifting lets the next notification be sent, with no word of a carrier', () => {
    for (const [cause, channel] of [
      ['BOUNCED', 'EMAIL'],
      ['UNDELIVERABLE', 'SMS'],
    ] as const) {
      const { shown, text } = previewOf(suppression(cause, channel));
      expect(shown).not.toHaveProperty('stillBlocked');
      expect(text).toMatch(/Lifting it lets the next notification to this address be sent\.$/);
      expect(text).not.toMatch(/STOP|opted/);
    }
  });
});
