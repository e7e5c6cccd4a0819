/** The chaos run's one verdict: any broken invariant fails it, named — quarantine mismatches and header injections too. */
import { describe, expect, it } from 'vitest';
import type { ChaosReport } from '../../tools/chaos/model.ts';
import { judge } from '../../tools/chaos/verdict.ts';

const clean = (): ChaosReport => ({
  seed: 1,
  events: 10,
  scheduleDigest: 'digest',
  records: 12,
  deliveries: 12,
  redeliveries: 0,
  faults: {},
  expectedSends: 20,
  sentOnce: 20,
  duplicates: { bug: 0, afterUnknownOutcome: 3 },
  staleWrites: 0,
  lost: 0,
  unknown: 0,
  failed: 0,
  quarantined: 2,
  quarantineMismatches: 0,
  conflicts: 0,
  piiLeaks: 0,
  illegalTransitions: 0,
  inboxWithoutNotifications: 0,
  headerInjections: 0,
  unescapedMarkup: 0,
  unsafeText: 0,
  displayText: { cases: 3, mismatches: 0 },
  inputCases: { cases: 2, mismatches: 0 },
  tooOld: { events: 1, mismatches: 0 },
  laterOffsetWon: 0,
  prototypePolluted: false,
  figures: {
    received: 12,
    accepted: 10,
    duplicates: 0,
    conflicts: 0,
    quarantined: 2,
    requarantined: 0,
    failed: 0,
    withoutNotifications: 0,
    tooOld: 1,
    displayTextSanitised: 3,
    cardNumbersMasked: 0,
    withRefusedChannels: 0,
    spellingsNormalised: 0,
    localeFallbacks: 0,
    timeZoneFallbacks: 0,
    repairs: 0,
  },
  reconciled: true,
  failedByQuotaOrAccount: 0,
  resentAfterAcceptAtMostOnce: 0,
  sendsWithoutTime: 0,
  heldTooWide: 0,
  preferences: { cases: 2, mismatches: 0 },
  problems: [],
});

describe('chaos verdict', () => {
  it('passes a clean run (duplicates after an unknown outcome are allowed)', () => {
    expect(judge(clean())).toEqual({ pass: true, failures: [] });
  });

  it.each<[string, Partial<ChaosReport>]>([
    ['lost', { lost: 1 }],
    ['duplicates.bug', { duplicates: { bug: 1, afterUnknownOutcome: 0 } }],
    ['staleWrites', { staleWrites: 1 }],
    ['quarantineMismatches', { quarantineMismatches: 2 }],
    ['headerInjections', { headerInjections: 1 }],
    ['unescapedMarkup', { unescapedMarkup: 1 }],
    ['unsafeText', { unsafeText: 1 }],
    ['displayText.mismatches', { displayText: { cases: 3, mismatches: 1 } }],
    ['inputCases.mismatches', { inputCases: { cases: 2, mismatches: 1 } }],
    ['tooOld.mismatches', { tooOld: { events: 1, mismatches: 1 } }],
    ['laterOffsetWon', { laterOffsetWon: 1 }],
    ['piiLeaks', { piiLeaks: 1 }],
    ['illegalTransitions', { illegalTransitions: 1 }],
    ['inboxWithoutNotifications', { inboxWithoutNotifications: 1 }],
    ['prototypePolluted', { prototypePolluted: true }],
    ['reconciled', { reconciled: false }],
    ['failedByQuotaOrAccount', { failedByQuotaOrAccount: 1 }],
    ['resentAfterAcceptAtMostOnce', { resentAfterAcceptAtMostOnce: 1 }],
    ['sendsWithoutTime', { sendsWithoutTime: 1 }],
    ['heldTooWide', { heldTooWide: 1 }],
    ['preferences.mismatches', { preferences: { cases: 2, mismatches: 1 } }],
  ])('fails on %s, naming it', (name, broken) => {
    const verdict = judge({ ...clean(), ...broken });
    expect(verdict.pass).toBe(false);
    expect(verdict.failures).toHaveLength(1);
    expect(verdict.failures[0]).toMatch(new RegExp(`^${name.replace('.', '\\.')}:`));
  });
});
