/**
 * Whether an item's evidence reference is its current attempt's (functions/domain/attempt-evidence.ts): a reference
 * names the attempt whose send wrote it, and is this attempt's only when that is the item's attempt — no clocks
 * compared. One written before references named their attempt falls back on time: every send of the attempt on the
 * item was accepted at or after its createdAt (a resend, a release from HELD move it), so one accepted earlier names
 * an earlier attempt's record.
 */
import { expect, it } from 'vitest';
import { type SendProof, sentWriteOf } from '../../functions/dispatch/record-evidence.ts';
import { attemptEvidence } from '../../functions/domain/attempt-evidence.ts';
import { buildSuccessor } from '../../functions/domain/failover.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { decodeTransfer, transferEvent } from '../support/events.ts';

const CREATED = '2026-12-06T10:00:00.000Z';
const naming = (acceptedAt: string, attempt?: number) => ({
  batch: 'b',
  sha256: 'ab'.repeat(32),
  acceptedAt,
  ...(attempt === undefined ? {} : { attempt }),
});

it("a reference naming its attempt is this attempt's only when that is the item's attempt, whatever the clocks say", () => {
  // The dispatch clock 4 ms behind the one that wrote createdAt: this attempt's own send still reads as its own.
  const behind = naming('2026-12-06T09:59:59.996Z', 2);
  expect(attemptEvidence({ attempt: 2, createdAt: CREATED, evidence: behind })).toBe(behind);
  // Attempt 1's, however late its acceptedAt reads: an earlier attempt's.
  expect(attemptEvidence({ attempt: 2, createdAt: CREATED, evidence: naming('2026-12-06T10:00:01.000Z', 1) })).toBe(
    undefined,
  );
});

it("a reference without its attempt (an earlier version's): accepted before the item's createdAt is an earlier attempt's; at or after it, this attempt's", () => {
  const earlier = naming('2026-12-06T09:59:59.999Z');
  const same = naming(CREATED);
  expect(attemptEvidence({ attempt: 2, createdAt: CREATED, evidence: earlier })).toBeUndefined();
  expect(attemptEvidence({ attempt: 2, createdAt: CREATED, evidence: same })).toBe(same);
  expect(attemptEvidence({ attempt: 2, createdAt: CREATED })).toBeUndefined();
  // An item without a createdAt (none is written so) trusts the reference, as before the rule.
  const noCreatedAt = { attempt: 2, evidence: earlier } as unknown as Parameters<typeof attemptEvidence>[0];
  expect(attemptEvidence(noCreatedAt)).toBe(earlier);
});

it("the reference a send's SENT write (and its lease extension) carries names the attempt of its record", () => {
  const proof = {
    sha256: 'ab'.repeat(32),
    bytes: new Uint8Array(),
    record: { attempt: 3, acceptedAt: CREATED },
  } as unknown as SendProof;
  const n = { attempt: 3 } as Parameters<typeof sentWriteOf>[0];
  const { evidence } = sentWriteOf(n, proof, 'b', { channel: 'SMS' } as Parameters<typeof sentWriteOf>[3]);
  expect(evidence).toEqual({ batch: 'b', sha256: 'ab'.repeat(32), acceptedAt: CREATED, attempt: 3 });
  expect(attemptEvidence({ attempt: 3, createdAt: CREATED, evidence })).toBe(evidence);
});

it("a failover's successor does not carry its original's reference: its own attempts count from 0 again, so attempt 1's would read as its own", () => {
  const at = Date.parse(CREATED);
  const placement = { sweepShards: 8, pendingThresholdMs: 60_000 };
  const notice = buildNotification(
    decodeTransfer(transferEvent({ eventId: 'fo-1' })).event,
    'SMS',
    '+81',
    at,
    {
      retentionDays: 1,
    },
    placement,
  );
  // In flight at the failover: its extension put the message id and attempt 1's reference on it.
  const original = { ...notice, status: 'SENDING' as const, attempt: 1, evidence: naming(CREATED, 1) };
  const successor = buildSuccessor(
    original,
    { status: 'UNKNOWN', heldReason: 'IN_FLIGHT_AT_FAILOVER' },
    {
      owner: 'ap-northeast-3',
      epoch: 2,
    },
    at + 60_000,
    placement,
  );
  expect(successor.evidence).toBeUndefined();
  expect(attemptEvidence({ ...successor, attempt: 1 })).toBeUndefined();
});
