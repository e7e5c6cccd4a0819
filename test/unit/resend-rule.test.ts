/**
 * The operator's resend rule, pure (functions/domain/resend.ts): the preview and the write ask the same question, so
 * what an operator is shown is what the write does. Erasure comes first: nothing makes an erased notification
 * resendable, not even the accepted message id.
 */
import { describe, expect, it } from 'vitest';
import { ERASED_USER, isErased } from '../../functions/domain/erasure.ts';
import { resendRefusal } from '../../functions/domain/resend.ts';
import { NOTIFICATION_STATUSES } from '../../functions/domain/state-machine.ts';

const ID = 'e-1#SMS';

describe('an operator resend', () => {
  it('is allowed for FAILED and UNKNOWN, for SENT only with its accepted message id, and never in flight or REFUSED', () => {
    const allowed = NOTIFICATION_STATUSES.filter((status) => resendRefusal(ID, { status }) === undefined);
    expect(allowed).toEqual(['FAILED', 'UNKNOWN']);
    expect(resendRefusal(ID, { status: 'SENT', providerMessageId: 'm-1' })?.message).toMatch(/--despite-accepted m-1/);
    expect(resendRefusal(ID, { status: 'SENT', providerMessageId: 'm-1' }, 'm-2')?.message).toMatch(
      /names m-2, not m-1/,
    );
    expect(resendRefusal(ID, { status: 'SENT', providerMessageId: 'm-1' }, 'm-1')).toBeUndefined();
    expect(resendRefusal(ID, { status: 'REFUSED' })?.message).toMatch(/repairs it/);
    expect(resendRefusal(ID, { status: 'PENDING' })?.message).toMatch(/still in flight/);
    // Terminal, not in flight: the refusal says what stops it.
    expect(resendRefusal(ID, { status: 'SUPPRESSED', suppressedReason: 'OPTED_OUT' })).toEqual({
      code: 'SUPPRESSED',
      message: expect.stringMatching(/^e-1#SMS is SUPPRESSED \(OPTED_OUT\): the customer opted out/),
      cause: 'OPTED_OUT',
    });
  });

  it('a SENT text whose delivery failed is refused with that report as its reason, never "the customer has it"', () => {
    const failed = resendRefusal(ID, {
      status: 'SENT',
      providerMessageId: 'm-1',
      deliveryStatus: 'FAILED',
      deliveryResponse: 'Phone number is opted out',
    });
    expect(failed?.code).toBe('ACCEPTED');
    expect(failed?.message).toContain(
      'the provider accepted it as message m-1 (delivery: FAILED “Phone number is opted out”)',
    );
    expect(failed?.message).not.toContain('the customer has it');
    const delayed = resendRefusal(ID, { status: 'SENT', providerMessageId: 'm-1', deliveryStatus: 'DELAYED' });
    expect(delayed?.message).toContain('(delivery: DELAYED, still being tried)');
    const delivered = resendRefusal(ID, { status: 'SENT', providerMessageId: 'm-1', deliveryStatus: 'DELIVERED' });
    expect(delivered?.message).toContain('the customer has it');
  });

  it('a SENT notice with no delivery report says the provider accepted it, never "the customer has it"', () => {
    const unreported = resendRefusal(ID, { status: 'SENT', providerMessageId: 'm-1' });
    expect(unreported?.code).toBe('ACCEPTED');
    expect(unreported?.message).toContain('the provider accepted it as message m-1; no delivery report yet');
    expect(unreported?.message).not.toContain('the customer has it');
    expect(resendRefusal(ID, { status: 'SENT' })?.message).toContain(
      'the provider accepted it; no delivery report yet',
    );
    // A complaint is only drawn by a delivered message: the customer has it.
    const complained = resendRefusal(ID, { status: 'SENT', providerMessageId: 'm-1', deliveryStatus: 'COMPLAINED' });
    expect(complained?.message).toContain(
      'the customer has it (the provider accepted it as message m-1; delivery: COMPLAINED)',
    );
  });

  it('is refused for an erased notification whatever its status, even named by its accepted message id', () => {
    for (const status of NOTIFICATION_STATUSES) {
      for (const marks of [{ erasedAt: '2026-12-02T05:00:00.000Z' }, { userId: ERASED_USER, erasedAt: '2026-12-02' }]) {
        const item = { status, providerMessageId: 'm-1', ...marks };
        expect(isErased(item)).toBe(true);
        expect(resendRefusal(ID, item, 'm-1')?.message, status).toMatch(
          /^e-1#SMS was erased.*: an erased notification is never resent/,
        );
      }
    }
    expect(isErased({ userId: 'u-1' })).toBe(false);
    // The user id is the producer's to choose: a customer called ERASED is a customer. Every erasure writes its time.
    expect(isErased({ userId: ERASED_USER })).toBe(false);
    expect(resendRefusal(ID, { status: 'FAILED', userId: ERASED_USER })).toBeUndefined();
  });
});
