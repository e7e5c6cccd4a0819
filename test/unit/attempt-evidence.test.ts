/**
 * Whether an item's evidence reference is its current attempt's (functions/domain/attempt-evidence.ts): every send of
 * the attempt on the item was accepted at or after its createdAt (a resend, a release from HELD move it), so one
 * accepted earlier names an earlier attempt's record.
 */
import { expect, it } from 'vitest';
import { attemptEvidence } from '../../functions/domain/attempt-evidence.ts';

const CREATED = '2026-12-06T10:00:00.000Z';
const naming = (acceptedAt: string) => ({ batch: 'b', sha256: 'ab'.repeat(32), acceptedAt });

it("a reference accepted before the item's createdAt is an earlier attempt's; one accepted at or after it is this attempt's", () => {
  const earlier = naming('2026-12-06T09:59:59.999Z');
  const same = naming(CREATED);
  expect(attemptEvidence({ createdAt: CREATED, evidence: earlier })).toBeUndefined();
  expect(attemptEvidence({ createdAt: CREATED, evidence: same })).toBe(same);
  expect(attemptEvidence({ createdAt: CREATED })).toBeUndefined();
});
