/** The one state machine: every write's condition comes from its table, and the operator's resend is its own edge. */
import { describe, expect, it } from 'vitest';
import {
  canMove,
  IllegalTransitionError,
  moveCondition,
  NOTIFICATION_STATUSES,
  OPERATOR_TRANSITIONS,
  TERMINAL_STATUSES,
} from '../../functions/domain/state-machine.ts';

describe('the state machine', () => {
  it('a write takes its status condition from the table', () => {
    expect(moveCondition('SENDING', 'SENT')).toEqual({
      expression: '#status = :fromStatus',
      values: { ':fromStatus': 'SENDING' },
    });
  });

  it('refuses to build a write for an edge the table does not hold: nothing leaves a terminal status by the pipeline', () => {
    for (const from of TERMINAL_STATUSES) {
      for (const to of NOTIFICATION_STATUSES) {
        if (from === 'REFUSED' && to === 'PENDING') continue; // the producer's corrected resend
        expect(() => moveCondition(from, to)).toThrow(IllegalTransitionError);
      }
    }
  });

  it("the operator's resend: FAILED, UNKNOWN and SENT (with the accepted message id) back to PENDING, and nothing else", () => {
    const operatorEdges = NOTIFICATION_STATUSES.flatMap((from) =>
      NOTIFICATION_STATUSES.filter((to) => canMove(from, to, 'operator')).map((to) => `${from}→${to}`),
    );
    expect(operatorEdges.sort()).toEqual(['FAILED→PENDING', 'SENT→PENDING', 'UNKNOWN→PENDING']);
    expect(canMove('FAILED', 'PENDING')).toBe(false); // never the pipeline's
    expect(() => moveCondition('SENDING', 'PENDING', 'operator')).toThrow(IllegalTransitionError);
    expect(Object.keys(OPERATOR_TRANSITIONS).every((s) => TERMINAL_STATUSES.includes(s as never))).toBe(true);
  });
});
