import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedList, outcomeOf } from '../../tools/local/outcomes.ts';

// The local run's summary lists at most a limit of each kind, however large the file: the memory of the summary must
// not grow with the run, and what it lists must be the first entries by its order, whatever came first.
describe('BoundedList', () => {
  it('keeps the first `limit` entries by its order and counts the rest', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.integer({ min: 1, max: 20 }), (xs, limit) => {
        const list = new BoundedList<number>(limit, (a, b) => a - b);
        for (const x of xs) list.add(x);
        const expected = [...xs].sort((a, b) => a - b).slice(0, limit);
        expect(list.list()).toEqual(expected);
        expect(list.total).toBe(xs.length);
        expect(list.notListed).toBe(xs.length - expected.length);
      }),
    );
  });

  it('never holds more than twice its limit', () => {
    const list = new BoundedList<number>(10, (a, b) => a - b);
    for (let i = 100_000; i > 0; i--) list.add(i);
    expect((list as unknown as { items: number[] }).items.length).toBeLessThan(20);
    expect(list.list()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe('outcomeOf', () => {
  it("gives a suppression's cause, a failure's last error, and no reason for a sent notification", () => {
    expect(outcomeOf({ notificationId: 'e#EMAIL', status: 'SUPPRESSED', suppressedReason: 'BOUNCED' }).reason).toBe(
      'BOUNCED',
    );
    expect(outcomeOf({ notificationId: 'e#SMS', status: 'FAILED', lastError: 'InvalidParameter' }).reason).toBe(
      'InvalidParameter',
    );
    expect(
      outcomeOf({ notificationId: 'e#PUSH', status: 'SENT', lastError: 'Throttling', deliveryStatus: 'DELIVERED' }),
    ).toEqual({ notificationId: 'e#PUSH', status: 'SENT', deliveryStatus: 'DELIVERED', reason: null });
  });
});
