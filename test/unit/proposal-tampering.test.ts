/**
 * A proposal read from the table is checked against its write-once PROPOSE audit record before it is approved
 * (functions/domain/approval.ts proposalTampering): whoever can write the table may not edit what the approver
 * applies — its request, what was shown, its proposer, its reason or its expiry.
 */
import { describe, expect, it } from 'vitest';
import { type Proposal, proposalTampering, proposedDigests } from '../../functions/domain/approval.ts';
import type { AuditRecord } from '../../functions/domain/audit.ts';

const alice = { principal: 'alice', verifiedBy: 'LOCAL_USER', person: 'alice' } as const;
const proposal: Proposal = {
  id: 'p-20261206T010000Z-abc123',
  action: 'SUPPRESSION_LIFT',
  target: 'EMAIL#a1b2',
  request: { channel: 'EMAIL', contactHash: 'a1b2' },
  shown: { state: 'ACTIVE' },
  fingerprint: 'f00d',
  reason: 'customer asked on the phone',
  proposedBy: alice,
  proposedAt: '2026-12-06T01:00:00.000Z',
  proposeRecord: 'audit/2026-12-06T01:00:00.000Z-abc123.json',
  approveBy: '2026-12-07T01:00:00.000Z',
  state: 'PENDING',
};
const record = (details: Record<string, unknown> = {}): AuditRecord => ({
  kind: 'AUDIT',
  action: 'SUPPRESSION_LIFT',
  step: 'PROPOSE',
  by: alice,
  proposal: proposal.id,
  at: proposal.proposedAt,
  reason: proposal.reason,
  target: proposal.target,
  details: { ...proposal.shown, proposed: proposedDigests(proposal), approveBy: proposal.approveBy, ...details },
});

describe('a proposal checked against its PROPOSE audit record', () => {
  it('agrees when nothing was edited', () => {
    expect(proposalTampering(proposal, record())).toBeUndefined();
  });

  it('an expiry moved in the table (to keep a proposal approvable past its time) is TAMPERED', () => {
    const later = { ...proposal, approveBy: '2027-01-06T01:00:00.000Z' };
    expect(proposalTampering(later, record())).toEqual({
      code: 'TAMPERED',
      message: `proposal ${proposal.id} is not what was proposed (another expiry): nothing was done; report it`,
    });
    // Moved earlier is an edit too.
    expect(proposalTampering({ ...proposal, approveBy: '2026-12-06T02:00:00.000Z' }, record())?.code).toBe('TAMPERED');
  });

  it('a record written before records kept the expiry is compared with the exact expiry its DONE outcome stored', () => {
    // As the old propose wrote it: the expiry computed after the record was stamped (the audit write's latency
    // later), on a stage of 720 hours, kept only in the outcome.
    const { approveBy: _kept, ...withoutExpiry } = record().details;
    const expiry = '2027-01-05T01:00:00.137Z';
    const pending = { ...proposal, approveBy: expiry };
    const old: AuditRecord = {
      ...record(),
      details: withoutExpiry,
      outcome: {
        kind: 'AUDIT_OUTCOME',
        at: '2026-12-06T01:00:00.140Z',
        result: 'DONE',
        details: { proposal: proposal.id, approveBy: expiry },
      },
    };
    expect(proposalTampering(pending, old)).toBeUndefined();
    expect(proposalTampering({ ...pending, approveBy: '2027-01-05T01:00:00.000Z' }, old)?.message).toMatch(
      /another expiry/,
    );
  });

  it('a record with neither bounds it: never later than the longest any stage allows, with a minute for the audit write', () => {
    const { approveBy: _kept, ...withoutExpiry } = record().details;
    const older = { ...record(), details: withoutExpiry };
    expect(proposalTampering(proposal, older)).toBeUndefined();
    // 720 hours after the record is the longest proposalHours allows, computed after the record was written.
    expect(proposalTampering({ ...proposal, approveBy: '2027-01-05T01:00:00.250Z' }, older)).toBeUndefined();
    expect(proposalTampering({ ...proposal, approveBy: '2027-01-05T01:01:00.001Z' }, older)?.message).toMatch(
      /another expiry/,
    );
  });

  it('the request, the reason or the proposer edited is TAMPERED, named', () => {
    expect(proposalTampering({ ...proposal, reason: 'approved by phone' }, record())?.message).toMatch(
      /another reason/,
    );
    expect(
      proposalTampering({ ...proposal, request: { channel: 'EMAIL', contactHash: 'ffff' } }, record())?.message,
    ).toMatch(/another request or preview/);
    expect(
      proposalTampering({ ...proposal, proposedBy: { ...alice, principal: 'carol', person: 'carol' } }, record())
        ?.message,
    ).toMatch(/another proposer/);
    expect(proposalTampering(proposal, undefined)?.message).toMatch(/no PROPOSE audit record/);
  });
});
