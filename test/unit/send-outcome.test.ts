import { describe, expect, it } from 'vitest';
import { actionFor, attemptsUsed, isExpired } from '../../functions/domain/send-outcome.ts';

describe('what each failure class does to a notification', () => {
  it('rejected: FAILED with the reason, whatever the channel policy', () => {
    expect(actionFor('rejected', 'AT_MOST_ONCE', true)).toBe('fail');
    expect(actionFor('rejected', 'AT_LEAST_ONCE', true)).toBe('fail');
  });

  it('throttled and not sent: deferred, never FAILED, even with no attempt budget left', () => {
    for (const c of ['throttled', 'notSent'] as const) {
      expect(actionFor(c, 'AT_MOST_ONCE', false)).toBe('defer');
      expect(actionFor(c, 'AT_LEAST_ONCE', false)).toBe('defer');
    }
  });

  it('account blocked: the channel is held, nothing FAILED', () => {
    expect(actionFor('accountBlocked', 'AT_MOST_ONCE', false)).toBe('holdChannel');
    expect(actionFor('accountBlocked', 'AT_LEAST_ONCE', true)).toBe('holdChannel');
  });

  it('unknown: UNKNOWN at most once; resent at least once while the budget lasts, then UNKNOWN', () => {
    expect(actionFor('unknown', 'AT_MOST_ONCE', true)).toBe('markUnknown');
    expect(actionFor('unknown', 'AT_LEAST_ONCE', true)).toBe('resend');
    expect(actionFor('unknown', 'AT_LEAST_ONCE', false)).toBe('markUnknown');
  });

  it('deferrals do not count against the attempt budget', () => {
    expect(attemptsUsed({ attempt: 12, deferrals: 11 })).toBe(1);
    expect(attemptsUsed({ attempt: 3 })).toBe(3);
  });

  it('expires past the maximum age since createdAt', () => {
    const createdAt = '2026-11-30T09:00:00.000Z';
    const day = 86_400_000;
    expect(isExpired({ createdAt }, Date.parse(createdAt) + day, day)).toBe(false);
    expect(isExpired({ createdAt }, Date.parse(createdAt) + day + 1, day)).toBe(true);
  });
});
