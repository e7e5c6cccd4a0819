/**
 * An operator's decision on a held notice (functions/domain/held.ts): which notices may be decided, why the others are
 * refused, what a release risks on each channel's policy, and how a settlement ends.
 */
import { describe, expect, it } from 'vitest';
import { type HeldCandidate, releaseRefusal, releaseRisk, settlementOf } from '../../functions/domain/held.ts';

const ID = 'e-1#SMS#E2';
const held: HeldCandidate = {
  notificationId: ID,
  status: 'FAILOVER_HELD',
  channel: 'SMS',
  supersedes: 'NOTIFICATION#SMS',
  heldReason: 'INHERITED_PENDING',
  sweepKey: 'HELD#SMS#1',
};

describe('releasing a held notice', () => {
  it('is refused when the original here shows it sent (ACCEPTED) or the customer erased; an original last seen unfinished proves nothing', () => {
    expect(releaseRefusal(ID, held, { status: 'SENT', providerMessageId: 'm-1' })?.code).toBe('ACCEPTED');
    expect(releaseRefusal(ID, held, { status: 'SENT', providerMessageId: 'm-1' })?.message).toContain('settle it');
    expect(releaseRefusal(ID, held, { status: 'PENDING' })).toBeUndefined();
    expect(releaseRefusal(ID, { ...held, status: 'UNKNOWN' }, { status: 'SENDING' })).toBeUndefined();
    expect(releaseRefusal(ID, { ...held, erasedAt: '2026-12-01T00:00:00Z' }, undefined)?.code).toBe('ERASED');
    expect(releaseRefusal(ID, held, undefined)).toBeUndefined();
    expect(releaseRefusal(ID, held, { status: 'FAILED' })).toBeUndefined();
  });

  it('is refused for a notice no failover held (NOT_HELD) and one decided already (ALREADY_RESOLVED)', () => {
    const { supersedes: _s, ...plain } = held;
    expect(releaseRefusal(ID, { ...plain, status: 'FAILED' }, undefined)?.code).toBe('NOT_HELD');
    expect(releaseRefusal(ID, { ...held, status: 'PENDING', sweepKey: 'PENDING#SMS#0' }, undefined)?.code).toBe(
      'ALREADY_RESOLVED',
    );
    // An UNKNOWN successor a reconciliation settled as unknown no longer waits: decided.
    const { sweepKey: _k, ...settled } = held;
    expect(releaseRefusal(ID, { ...settled, status: 'UNKNOWN' }, undefined)?.code).toBe('ALREADY_RESOLVED');
    expect(releaseRefusal(ID, { ...held, status: 'UNKNOWN' }, undefined)).toBeUndefined();
  });

  it("says plainly on an at-most-once channel that the customer may get it twice and that it is the operator's decision", () => {
    const once = releaseRisk('SMS', 'AT_MOST_ONCE', 'not here');
    expect(once).toContain('SMS is at-most-once: If the old region had sent it, the customer gets it twice');
    expect(once).toContain('your decision');
    expect(releaseRisk('EMAIL', 'AT_LEAST_ONCE', 'not here')).toContain('The bank accepts a rare second copy');
  });
});

describe('settling a held notice', () => {
  it("is handed over with the operator's proof or the original's finished record, else FAILED; an UNKNOWN one stays UNKNOWN", () => {
    expect(settlementOf(held, undefined, 'ses-1')).toEqual({ to: 'HANDED_OVER', proof: 'ses-1' });
    expect(settlementOf(held, { status: 'SENT', providerMessageId: 'm-9' }, undefined)).toEqual({
      to: 'HANDED_OVER',
      proof: 'original SENT (m-9)',
    });
    expect(settlementOf(held, { status: 'PENDING' }, undefined)).toEqual({ to: 'FAILED', lastError: 'HELD_SETTLED' });
    // An original handed over carries no outcome of its own (it may name this very notice).
    expect(settlementOf(held, { status: 'HANDED_OVER' }, undefined)).toEqual({
      to: 'FAILED',
      lastError: 'HELD_SETTLED',
    });
    expect(settlementOf(held, undefined, undefined)).toEqual({ to: 'FAILED', lastError: 'HELD_SETTLED' });
    expect(settlementOf({ ...held, status: 'UNKNOWN' }, undefined, undefined)).toEqual({ to: 'UNKNOWN' });
  });
});
