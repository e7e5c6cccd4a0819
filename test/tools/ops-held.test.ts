/**
 * `npm run ops -- held`, `release-held` and `settle-held` as an operator types them, on DynamoDB Local: the listing
 * (event, channel, customer, the contact point masked, since when, why held, the next page's mark), a release's
 * preview that says plainly an at-most-once channel may get it twice (exit 3, nothing moved), the confirm, a
 * settlement with what the customer is told, and the refusals' words (exit 3).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { Channel } from '../../functions/domain/channels.ts';
import { buildSuccessor } from '../../functions/domain/failover.ts';
import { eventPk, notificationIdOf } from '../../functions/domain/keys.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import type { VerifiedIdentity } from '../../functions/operator/index.ts';
import { main } from '../../tools/ops/cli.ts';
import { pendingNotification } from '../support/dispatch-deps.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE_ID } from '../support/operator.ts';

let table: LocalTable;
const auditDir = mkdtempSync(join(tmpdir(), 'ops-held-'));

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});

/** A successor a failover's promotion left held (epoch 2) in this replica. */
async function held(eventId: string, channel: Channel) {
  const original = {
    ...pendingNotification(channel, Date.now()),
    eventId,
    pk: eventPk(eventId),
    notificationId: notificationIdOf(eventId, channel),
  };
  const start = { status: 'FAILOVER_HELD', heldReason: 'INHERITED_PENDING' } as const;
  const successor = buildSuccessor(
    original,
    start,
    { owner: 'ap-northeast-3', epoch: 2 },
    Date.now(),
    DEFAULT_SWEEP_PLACEMENT,
  );
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: successor }));
  return successor.notificationId;
}

const opsIn = async (args: string[], as: VerifiedIdentity = ALICE_ID) => {
  let text = '';
  const where = ['--endpoint', table.endpoint, '--table', table.tableName, '--evidence-dir', auditDir];
  const code = await main([...args, ...where], (t) => (text += t), as);
  return { code, out: text };
};

const statusOf = async (eventId: string) =>
  (await table.eventItems(eventId)).find((i) => String(i.sk).endsWith('#E2'))?.status;

describe('npm run ops -- held', () => {
  it('lists each held notice on one line — event, status, why, since, customer, the contact point masked — and refuses a page mark it never printed', async () => {
    const sms = await held('ops-held-1', 'SMS');
    await held('ops-held-2', 'EMAIL');
    const listed = await opsIn(['held', '--channel', 'sms']);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(
      new RegExp(
        `^${sms}  FAILOVER_HELD  INHERITED_PENDING  since \\S+  customer u-42  to \\+81 ••• 5678  \\(carries NOTIFICATION#SMS\\)$`,
        'm',
      ),
    );
    expect(listed.out).not.toContain('ops-held-2');
    expect(listed.out).not.toContain('+819012345678');
    const json = JSON.parse((await opsIn(['held', '--json'])).out) as { held: { eventId: string }[] };
    expect(json.held.map((h) => h.eventId).sort()).toEqual(['ops-held-1', 'ops-held-2']);
    await expect(opsIn(['held', '--after', 'not-a-mark'])).rejects.toThrow(/--after: .* is not a page mark/);
  });
});

describe('npm run ops -- release-held, settle-held', () => {
  it('a release previews what it risks on an at-most-once channel (exit 3, nothing moved), then sends it confirmed', async () => {
    const id = await held('ops-release-1', 'SMS');
    const preview = await opsIn(['release-held', id, '--reason', 'primary cluster destroyed']);
    expect(preview.code).toBe(3);
    expect(preview.out).toContain(
      `${id} is FAILOVER_HELD (INHERITED_PENDING): the old region's record of it has not reached this replica.`,
    );
    expect(preview.out).toContain('SMS is at-most-once: If the old region had sent it, the customer gets it twice');
    expect(preview.out).toContain('releasing it is your decision, recorded as yours');
    expect(preview.out).toContain('Add --confirm --fingerprint');
    expect(await statusOf('ops-release-1')).toBe('FAILOVER_HELD');
    const done = await opsIn(['release-held', id, '--reason', 'primary cluster destroyed', '--confirm']);
    expect(done).toMatchObject({ code: 0 });
    expect(done.out).toContain(`${id}: FAILOVER_HELD → PENDING, released (by`);
    expect(await statusOf('ops-release-1')).toBe('PENDING');
    await expect(opsIn(['release-held', id, '--reason', 'again'])).rejects.toThrow(/is PENDING: already decided/);
  });

  it('a settlement says what the customer is told, and closes it unsent; a plain id and a missing reason are refused', async () => {
    const id = await held('ops-settle-1', 'EMAIL');
    const preview = await opsIn(['settle-held', id, '--reason', 'stale after two days']);
    expect(preview.code).toBe(3);
    expect(preview.out).toContain('Settling it closes it without sending: FAILED.');
    expect(preview.out).toContain(
      'The customer: tell the customer: this notice was held after a failover and never sent from this region.',
    );
    const done = await opsIn(['settle-held', id, '--reason', 'stale after two days', '--confirm']);
    expect(done.out).toContain(`${id}: FAILOVER_HELD → FAILED, settled (by`);
    expect(await statusOf('ops-settle-1')).toBe('FAILED');
    await expect(opsIn(['settle-held', id])).rejects.toThrow(/needs --reason/);
    await expect(opsIn(['settle-held', 'no-such#EMAIL', '--reason', 'x'])).rejects.toThrow(
      /no notification no-such#EMAIL/,
    );
  });
});
