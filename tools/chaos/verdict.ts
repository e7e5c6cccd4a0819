/**
 * The one verdict of a chaos run. `npm run chaos` takes its exit code, its table's PASS/FAIL and its --json verdict
 * from here, and the test suite asserts it: any broken invariant fails the run, with the invariant named.
 */
import type { ChaosReport } from './model.ts';

export interface Verdict {
  readonly pass: boolean;
  /** One line per broken invariant: what broke and how often. */
  readonly failures: string[];
}

/** Each invariant: its figure in the report, and what a non-zero figure means. */
const INVARIANTS: readonly [string, (r: ChaosReport) => number][] = [
  ['lost: a valid event lost a notification, or one was left PENDING/SENDING', (r) => r.lost],
  ['duplicates.bug: a second accepted send not explained by an unknown outcome', (r) => r.duplicates.bug],
  [
    'staleWrites: a holder whose lease was taken over still wrote its transition (fencing on attempt failed)',
    (r) => r.staleWrites,
  ],
  ['quarantineMismatches: bad input not quarantined with its expected reason', (r) => r.quarantineMismatches],
  ['headerInjections: CR/LF reached a subject', (r) => r.headerInjections],
  ['unescapedMarkup: markup reached an email unescaped', (r) => r.unescapedMarkup],
  ['unsafeText: a control, separator, bidi or ill-formed character reached a sent text', (r) => r.unsafeText],
  ['displayText.mismatches: third-party text not accepted and stored cleaned', (r) => r.displayText.mismatches],
  [
    'inputCases.mismatches: a spelling with one reading not accepted, or a refused channel not REFUSED alone, or sent',
    (r) => r.inputCases.mismatches,
  ],
  [
    'tooOld.mismatches: an event older than the max age was not recorded as TOO_OLD, or was sent',
    (r) => r.tooOld.mismatches,
  ],
  ['laterOffsetWon: a later offset of an eventId was written as the original', (r) => r.laterOffsetWon],
  ['piiLeaks: an email address or phone number in a log line', (r) => r.piiLeaks],
  [
    'illegalTransitions: an illegal state transition, a terminal state left, or attempt going back',
    (r) => r.illegalTransitions,
  ],
  ['inboxWithoutNotifications: inbox and notifications not written together', (r) => r.inboxWithoutNotifications],
  [
    'failedByQuotaOrAccount: a notification FAILED by a throttle, a quota or an account-level error, not its own reason',
    (r) => r.failedByQuotaOrAccount,
  ],
  [
    'resentAfterAcceptAtMostOnce: a second send after a 500 / reset following an accept, on an at-most-once channel',
    (r) => r.resentAfterAcceptAtMostOnce,
  ],
  [
    'sendsWithoutTime: a send started without the time to finish before the invocation or the lease ended',
    (r) => r.sendsWithoutTime,
  ],
  [
    'heldTooWide: a channel held for what one endpoint or one platform application did, not the account',
    (r) => r.heldTooWide,
  ],
  [
    'preferences.mismatches: a notification sent on a channel opted out before it, or suppressed on one not opted out',
    (r) => r.preferences.mismatches,
  ],
  ['prototypePolluted: a record polluted Object.prototype', (r) => Number(r.prototypePolluted)],
  [
    'reconciled: delivered ≠ accepted + duplicates + conflicts + quarantined + requarantined + failed',
    (r) => Number(!r.reconciled),
  ],
];

export function judge(report: ChaosReport): Verdict {
  const failures = INVARIANTS.flatMap(([what, figure]) => {
    const n = figure(report);
    return n > 0 ? [`${what} (${n})`] : [];
  });
  return { pass: failures.length === 0, failures };
}
