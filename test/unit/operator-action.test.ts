/**
 * The one runner of the operator's actions (functions/operator/action.ts): a preview writes nothing; asked to apply,
 * a refusal is audited (the record and its REFUSED outcome) and nothing is performed; an action whose audit record
 * cannot be written does not happen; every action that ran has its outcome beside its record — done, refused (and
 * why), or failed — with the verified identity of who asked.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ok, refused } from '../../functions/operator/action.ts';
import {
  apply,
  type OperatorAction,
  OperatorError,
  type OperatorPorts,
  preview,
} from '../../functions/operator/index.ts';
import { EvidenceAuditLog } from '../../functions/stores/audit-log.ts';
import { type EvidenceStore, FileEvidenceStore } from '../../functions/stores/evidence-store.ts';

const NOW = Date.parse('2026-12-02T05:00:00Z');
const ALICE_ID = { principal: 'arn:aws:sts::123456789012:assumed-role/Ops/alice', verifiedBy: 'AWS_IAM' } as const;
const ALICE = { identity: ALICE_ID, reason: 'the customer called' };

function portsWith(evidence: EvidenceStore = new FileEvidenceStore(mkdtempSync(join(tmpdir(), 'audit-')))) {
  return { evidence, audit: new EvidenceAuditLog(evidence), now: () => NOW } as unknown as OperatorPorts;
}

/** A toy action over a number: refused when odd, and performed by `perform`. */
const action = (
  perform: OperatorAction<number, number, number, string>['perform'],
): OperatorAction<number, number, number, string> => ({
  audit: 'RESEND',
  target: (n) => `n-${n}`,
  kind: () => 'RESEND',
  read: async (_ports, n) => n,
  decide: (n) => (n % 2 === 0 ? ok(n) : refused('IN_FLIGHT', `${n} is odd`)),
  shown: (n) => ({ n }),
  perform,
  done: (outcome) => ({ outcome }),
});

describe('an operator action', () => {
  it('previews without writing anything; a refusal asked to apply is audited with its true reason and nothing is performed', async () => {
    const ports = portsWith();
    let performed = 0;
    const toy = action(async () => {
      performed++;
      return ok('done');
    });
    expect(await preview(toy, ports, 3)).toEqual({ ok: false, refusal: { code: 'IN_FLIGHT', message: '3 is odd' } });
    expect(await preview(toy, ports, 2)).toEqual({ ok: true, value: 2 });
    expect(await ports.audit.list()).toEqual([]);
    await expect(apply(toy, ports, 3, ALICE)).rejects.toThrow(OperatorError);
    expect(performed).toBe(0);
    expect(await ports.audit.list()).toMatchObject([
      {
        action: 'RESEND',
        step: 'CONFIRM',
        by: ALICE_ID,
        target: 'n-3',
        outcome: { result: 'REFUSED', details: { code: 'IN_FLIGHT', message: '3 is odd' } },
      },
    ]);
  });

  it('is refused without a reason, before anything is read or written', async () => {
    const ports = portsWith();
    const error = await apply(
      action(async () => ok('done')),
      ports,
      2,
      { identity: ALICE_ID, reason: '  ' },
    ).catch((e: unknown) => e);
    expect((error as OperatorError).refusal.code).toBe('INVALID');
    expect(await ports.audit.list()).toEqual([]);
  });

  it("a gate's refusal (four eyes, a changed state) is audited and stops the action", async () => {
    const ports = portsWith();
    let performed = 0;
    const toy = action(async () => {
      performed++;
      return ok('done');
    });
    const gate = () => ({ code: 'APPROVAL_REQUIRED' as const, message: 'another identity approves it' });
    await expect(apply(toy, ports, 2, ALICE, { step: 'CONFIRM', gate })).rejects.toThrow('another identity');
    expect(performed).toBe(0);
    expect((await ports.audit.list())[0]).toMatchObject({
      details: { n: 2 },
      outcome: { result: 'REFUSED', details: { code: 'APPROVAL_REQUIRED' } },
    });
  });

  it('is audited before it is performed, and its outcome after: who, why, what it was shown, what it did', async () => {
    const ports = portsWith();
    const toy = action(async () => {
      // The record is there before anything is done.
      expect(await ports.audit.list()).toMatchObject([{ action: 'RESEND', target: 'n-2' }]);
      return ok('done');
    });
    expect(await apply(toy, ports, 2, ALICE)).toBe('done');
    expect(await ports.audit.list()).toEqual([
      {
        kind: 'AUDIT',
        action: 'RESEND',
        step: 'CONFIRM',
        by: ALICE_ID,
        at: '2026-12-02T05:00:00.000Z',
        reason: 'the customer called',
        target: 'n-2',
        details: { n: 2 },
        outcome: {
          kind: 'AUDIT_OUTCOME',
          at: '2026-12-02T05:00:00.000Z',
          result: 'DONE',
          details: { outcome: 'done' },
        },
      },
    ]);
  });

  it('a write refused on its condition is audited REFUSED with the reason, and thrown as the refusal', async () => {
    const ports = portsWith();
    const toy = action(async () => refused('CHANGED', 'moved while being done'));
    const error = await apply(toy, ports, 2, ALICE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperatorError);
    expect((error as OperatorError).refusal).toEqual({ code: 'CHANGED', message: 'moved while being done' });
    expect((await ports.audit.list())[0]?.outcome).toMatchObject({
      result: 'REFUSED',
      details: { code: 'CHANGED', message: 'moved while being done' },
    });
  });

  it('a failure is audited FAILED and thrown as it was', async () => {
    const ports = portsWith();
    const failure = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    const toy = action(async () => {
      throw failure;
    });
    await expect(apply(toy, ports, 2, ALICE)).rejects.toBe(failure);
    expect((await ports.audit.list())[0]?.outcome).toMatchObject({
      result: 'FAILED',
      details: { error: 'ThrottlingException', message: 'Rate exceeded' },
    });
  });

  it('does not happen when its audit record cannot be written', async () => {
    const broken: EvidenceStore = {
      put: async () => {
        throw new Error('AccessDenied');
      },
      list: async () => [],
      get: async () => undefined,
      history: async () => [],
    };
    let performed = 0;
    const toy = action(async () => {
      performed++;
      return ok('done');
    });
    await expect(apply(toy, portsWith(broken), 2, ALICE)).rejects.toThrow('AccessDenied');
    expect(performed).toBe(0);
  });

  it('lists records newest first with their outcomes; one without an outcome has none; a bare name of an older record reads UNVERIFIED', async () => {
    const evidence = new FileEvidenceStore(mkdtempSync(join(tmpdir(), 'audit-')));
    const log = new EvidenceAuditLog(evidence);
    const first = await log.record({ action: 'ERASE', by: ALICE_ID, reason: 'r', target: 'u-1', details: {} }, NOW);
    // As a record written before identities were verified holds it: the caller's own word.
    const legacy = { action: 'EXPORT', by: 'b', reason: 'r', target: 'u-2', details: {} };
    await log.record(legacy as unknown as Parameters<typeof log.record>[0], NOW + 1000);
    await log.recordOutcome(first.key, { result: 'DONE', details: {} }, NOW + 2000);
    const listed = await log.list();
    expect(listed.map((r) => [r.action, r.outcome?.result])).toEqual([
      ['EXPORT', undefined],
      ['ERASE', 'DONE'],
    ]);
    expect((await log.list('2026-12-02T05:00:01')).map((r) => r.action)).toEqual(['EXPORT']);
    expect(listed.map((r) => r.by)).toEqual([{ principal: 'b', verifiedBy: 'UNVERIFIED' }, ALICE_ID]);
  });
});
