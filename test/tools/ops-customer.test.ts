/**
 * `npm run ops` on one customer's data (test/support/customer-fixture.ts): the deliberate actions need a reason and
 * --confirm, show what they would do without it (exit 3), and are audited — who, why, what changed, the outcome.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { listAudit } from '../../functions/operator/index.ts';
import { main } from '../../tools/ops/cli.ts';
import { type CustomerFixture, customerFixture } from '../support/customer-fixture.ts';
import { transferEvent } from '../support/events.ts';

let f: CustomerFixture;

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

  it('replay-quarantine: refused without a reason, shown without --confirm, audited when done (who, when, why, what changed)', async () => {
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
    const shown = await main(
      ['replay-quarantine', id, '--value-file', file, '--reason', 'producer fixed the amount', '--by', 'ana', ...where],
      (t) => {
        printed += t;
      },
    );
    expect(shown).toBe(3);
    expect(printed).toContain('data.amount: 1.5 → "150"');
    expect(await f.table.eventItems('q-replay')).toEqual([]);
    const hijack = join(f.evidenceDir, 'hijack.json');
    writeFileSync(
      hijack,
      JSON.stringify(transferEvent({ eventId: 'q-else', channels: ['EMAIL'], data: { amount: '9999' } })),
    );
    await expect(
      main(['replay-quarantine', id, '--value-file', hijack, '--reason', 'x', '--confirm', ...where], () => undefined),
    ).rejects.toThrow(/keeps the quarantined record's eventId/);
    const done = await main(
      [
        'replay-quarantine',
        id,
        '--value-file',
        file,
        '--reason',
        'producer fixed the amount',
        '--by',
        'ana',
        '--confirm',
        ...where,
      ],
      () => undefined,
    );
    expect(done).toBe(0);
    expect((await f.table.eventItems('q-replay')).map((i) => i.sk)).toContain('INBOX');
    const [audit] = await listAudit(f.ports);
    expect(audit).toMatchObject({
      action: 'REPLAY',
      by: 'ana',
      reason: 'producer fixed the amount',
      target: id,
      details: { value: 'edited', changes: [{ path: 'data.amount', before: 1.5, after: '150' }] },
    });
    let auditText = '';
    await main(['audit', ...where], (t) => {
      auditText += t;
    });
    expect(auditText).toContain('REPLAY');
    expect(auditText).toContain('why: producer fixed the amount');
  });

  it('export and erase need a user, a reason and --confirm, and are audited', async () => {
    const where = f.where;
    await expect(main(['export', '--reason', 'r', ...where], () => undefined)).rejects.toThrow(/--user/);
    await expect(main(['erase', '--user', 'cust-2', ...where], () => undefined)).rejects.toThrow(/--reason/);
    expect(
      await main(['erase', '--user', 'cust-2', '--reason', 'GDPR art. 17 request 42', ...where], () => undefined),
    ).toBe(3);
    expect(await f.ports.events.eventIdsOfUser('cust-2')).toEqual(['c2-other']);
    let exported = '';
    expect(
      await main(
        ['export', '--user', 'cust-2', '--reason', 'GDPR art. 15 request 41', '--confirm', '--by', 'bo', ...where],
        (t) => {
          exported += t;
        },
      ),
    ).toBe(0);
    expect(JSON.parse(exported)).toMatchObject({ userId: 'cust-2', notifications: [{ eventId: 'c2-other' }] });
    const actions = (await listAudit(f.ports)).map((a) => `${a.action} ${a.target} ${a.by}`);
    expect(actions).toContain('EXPORT cust-2 bo');
  });

  it('audit prints each action with its outcome', async () => {
    let text = '';
    await main(['audit', ...f.where], (t) => (text += t));
    expect(text).toMatch(/REPLAY .*\n {4}why: producer fixed the amount\n.*\n {4}outcome: DONE at /);
  });
});
