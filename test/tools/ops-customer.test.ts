/**
 * `npm run ops` on one customer's data (test/support/customer-fixture.ts): the deliberate actions need a reason and
 * --confirm, show what they would do without it (exit 3), and are audited — who (the local run's verified user), why,
 * what changed, the outcome; what four eyes covers is proposed by one operator and approved by another.
 */
import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { listAudit } from '../../functions/operator/index.ts';
import { main } from '../../tools/ops/cli.ts';
import { type CustomerFixture, customerFixture } from '../support/customer-fixture.ts';
import { transferEvent } from '../support/events.ts';
import { ALICE_ID as ANA, BOB_ID as BO } from '../support/operator.ts';

let f: CustomerFixture;
/** Without a second identity given, the CLI acts as the login of this process (its local, verified user). */
const BY_THIS_PROCESS = userInfo().username;
/** An event's items but the quarantine's reference to it: what a replay or an action wrote for it. */
const writtenFor = async (eventId: string) =>
  (await f.table.eventItems(eventId)).filter((i) => i.kind !== 'QUARANTINE_REF');

beforeAll(async () => {
  f = await customerFixture(inject('dynamoEndpoint'), 'ops-customer.test');
});

describe('npm run ops: deliberate operator actions on one customer', () => {
  it('customer says for each notice what was sent or exactly why not, in plain text', async () => {
    let text = '';
    expect(await main(['customer', 'cust-1', ...f.where], (t) => (text += t))).toBe(0);
    expect(text).toContain('customer cust-1: 5 notice(s)');
    expect(text).toContain('preferences: opted out of ["SMS"]');
    expect(text).toMatch(/c1-sent#?.*\n.*sent 2026-12-01T10:00:02Z to hanako@example.com/);
  });

  it('replay-quarantine with an edited value: refused without a reason, shown without --confirm, refused when confirmed alone, proposed by one operator and applied by another, audited (who, when, why, what changed)', async () => {
    const id = await f.publish(transferEvent({ eventId: 'q-replay', channels: ['EMAIL'], data: { amount: 1.5 } }));
    const file = join(f.evidenceDir, 'fixed.json');
    writeFileSync(
      file,
      JSON.stringify(transferEvent({ eventId: 'q-replay', channels: ['EMAIL'], data: { amount: '150' } })),
    );
    const where = f.where;
    await expect(main(['replay-quarantine', id, '--value-file', file, ...where], () => undefined)).rejects.toThrow(
      /--reason/,
    );
    let printed = '';
    const replay = ['replay-quarantine', id, '--value-file', file, '--reason', 'producer fixed the amount'];
    const shown = await main(
      [...replay, ...where],
      (t) => {
        printed += t;
      },
      ANA,
    );
    expect(shown).toBe(3);
    expect(printed).toContain('data.amount: 1.5 → "150"');
    expect(printed).toContain('Four eyes: OPERATOR_CONTENT is proposed by one identity and approved by another');
    expect(await writtenFor('q-replay')).toEqual([]);
    const hijack = join(f.evidenceDir, 'hijack.json');
    writeFileSync(
      hijack,
      JSON.stringify(transferEvent({ eventId: 'q-else', channels: ['EMAIL'], data: { amount: '9999' } })),
    );
    await expect(
      main(['replay-quarantine', id, '--value-file', hijack, '--reason', 'x', '--confirm', ...where], () => undefined),
    ).rejects.toThrow(/keeps the quarantined record's eventId/);
    await expect(main([...replay, '--confirm', ...where], () => undefined, ANA)).rejects.toThrow(/four eyes/);
    let proposed = '';
    expect(await main(['propose', ...replay, '--json', ...where], (t) => (proposed += t), ANA)).toBe(0);
    const proposal = JSON.parse(proposed) as { id: string; status: string };
    expect(proposal.status).toBe('PENDING');
    expect(await writtenFor('q-replay')).toEqual([]);
    const approve = ['approve', proposal.id, '--reason', 'amount checked with the producer'];
    await expect(main([...approve, '--confirm', ...where], () => undefined, ANA)).rejects.toThrow(/another identity/);
    let before = '';
    expect(await main([...approve, ...where], (t) => (before += t), BO)).toBe(3);
    expect(before).toContain('Unchanged since it was proposed.');
    expect(await main([...approve, '--confirm', ...where], () => undefined, BO)).toBe(0);
    expect((await f.table.eventItems('q-replay')).map((i) => i.sk)).toContain('INBOX');
    const audits = (await listAudit(f.ports)).filter((a) => a.action === 'REPLAY' && a.outcome?.result === 'DONE');
    expect(audits.find((a) => a.step === 'APPROVE')).toMatchObject({
      by: BO,
      reason: 'amount checked with the producer',
      proposal: proposal.id,
      target: id,
      details: {
        proposedBy: ANA,
        proposalReason: 'producer fixed the amount',
        value: 'edited',
        review: { changes: [{ path: 'data.amount', before: 1.5, after: '150' }] },
      },
    });
    expect(audits.find((a) => a.step === 'PROPOSE')).toMatchObject({ by: ANA, proposal: proposal.id });
    let auditText = '';
    await main(['audit', ...where], (t) => {
      auditText += t;
    });
    expect(auditText).toContain('REPLAY');
    expect(auditText).toContain('why: producer fixed the amount');
  });

  it('export and erase need a user, a reason and --confirm, and are audited; erase is four eyes', async () => {
    const where = f.where;
    await expect(main(['export', '--reason', 'r', ...where], () => undefined)).rejects.toThrow(/--user/);
    await expect(main(['erase', '--user', 'cust-2', ...where], () => undefined)).rejects.toThrow(/--reason/);
    const erase = ['erase', '--user', 'cust-2', '--reason', 'GDPR art. 17 request'];
    expect(await main([...erase, ...where], () => undefined)).toBe(3);
    await expect(main([...erase, '--confirm', ...where], () => undefined)).rejects.toThrow(/four eyes/);
    expect(await f.ports.events.eventIdsOfUser('cust-2')).toEqual(['c2-other']);
    let exported = '';
    expect(
      await main(
        ['export', '--user', 'cust-2', '--reason', 'GDPR art. 15 request', '--confirm', ...where],
        (t) => {
          exported += t;
        },
        BO,
      ),
    ).toBe(0);
    expect(JSON.parse(exported)).toMatchObject({ userId: 'cust-2', notifications: [{ eventId: 'c2-other' }] });
    const actions = (await listAudit(f.ports)).map(
      (a) => `${a.action} ${a.step} ${a.target} ${a.by.principal} ${a.outcome?.result}`,
    );
    expect(actions).toContain('EXPORT CONFIRM cust-2 bob DONE');
    expect(actions).toContain(`ERASE CONFIRM cust-2 ${BY_THIS_PROCESS} REFUSED`);
  });

  it('audit prints each action with its outcome', async () => {
    let text = '';
    await main(['audit', ...f.where], (t) => (text += t));
    expect(text).toMatch(
      /REPLAY +APPROVE .* by bob \(LOCAL_USER\) {2}\(proposal p-.*\n {4}why: amount checked with the producer\n.*\n {4}outcome: DONE at /,
    );
  });
});
