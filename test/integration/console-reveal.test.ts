/**
 * Showing a masked contact point in full (functions/operator/reveal.ts) on DynamoDB Local, through the operations
 * the console calls: it needs a reason, is audited with the verified identity and its outcome — the channel, never
 * the value — and is refused truthfully (and audited) when there is nothing to show; a bank may put it under four
 * eyes. The console's own reads show the contact masked.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { eventPage } from '../../functions/console/views.ts';
import { approvalPolicyOf } from '../../functions/domain/approval.ts';
import type { VerifiedIdentity } from '../../functions/domain/identity.ts';
import { listAudit, type OperatorPorts, operations } from '../../functions/operator/index.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { operatorOn } from '../support/operator.ts';

let table: LocalTable;
let ports: OperatorPorts;
const SAM: VerifiedIdentity = { principal: 'bank_sam', verifiedBy: 'IDENTITY_PROVIDER', display: 'Sam Rivera' };
const NUMBER = '+14155550182';

const policy = (kinds?: string) => {
  const parsed = approvalPolicyOf(kinds, 24);
  if ('unknown' in parsed) throw new Error(parsed.unknown.join());
  return parsed.policy;
};

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ports = operatorOn(table);
  await table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: 'EVENT#rv-1',
        sk: 'NOTIFICATION#SMS',
        kind: 'NOTIFICATION',
        notificationId: 'rv-1#SMS',
        eventId: 'rv-1',
        channel: 'SMS',
        userId: 'rv-customer',
        recipient: NUMBER,
        status: 'SENT',
        attempt: 1,
        template: 'TransferCompleted',
        createdAt: '2026-12-01T00:00:00.000Z',
      },
    }),
  );
});

describe('showing a contact point in full', () => {
  it('needs a reason: refused before anything is read or shown', async () => {
    const ops = operations(ports, policy());
    await expect(
      ops.confirm('REVEAL', { notificationId: 'rv-1#SMS' }, { identity: SAM, reason: ' ' }),
    ).rejects.toMatchObject({
      refusal: { code: 'INVALID' },
    });
  });

  it('is audited with who, why and the outcome — the channel, never the number', async () => {
    const ops = operations(ports, policy());
    const preview = await ops.preview('REVEAL', { notificationId: 'rv-1#SMS' });
    expect(preview).toMatchObject({ ok: true, kind: 'REVEAL', approvalRequired: false, userId: 'rv-customer' });
    const shown = await ops.confirm(
      'REVEAL',
      { notificationId: 'rv-1#SMS' },
      { identity: SAM, reason: 'customer on the phone' },
    );
    expect(shown).toMatchObject({ channel: 'SMS', contact: NUMBER });
    const audit = (await listAudit(ports)).filter((r) => r.action === 'REVEAL' && r.target === 'rv-1#SMS');
    expect(audit.map((r) => [r.step, r.by, r.reason, r.outcome?.result])).toEqual([
      ['CONFIRM', SAM, 'customer on the phone', 'DONE'],
    ]);
    expect(JSON.stringify(audit)).not.toContain('4155550182');
  });

  it('is refused truthfully, and audited, when there is no such notice', async () => {
    const ops = operations(ports, policy());
    await expect(
      ops.confirm('REVEAL', { notificationId: 'rv-missing#SMS' }, { identity: SAM, reason: 'customer on the phone' }),
    ).rejects.toMatchObject({ refusal: { code: 'NOT_FOUND' } });
    const audit = (await listAudit(ports)).filter((r) => r.target === 'rv-missing#SMS');
    expect(audit.map((r) => [r.action, r.outcome?.result, r.outcome?.details.code])).toEqual([
      ['REVEAL', 'REFUSED', 'NOT_FOUND'],
    ]);
  });

  it('needs another person’s approval where the bank names REVEAL in the four-eyes setting', async () => {
    const ops = operations(ports, policy('REVEAL'));
    await expect(
      ops.confirm('REVEAL', { notificationId: 'rv-1#SMS' }, { identity: SAM, reason: 'customer on the phone' }),
    ).rejects.toMatchObject({ refusal: { code: 'APPROVAL_REQUIRED' } });
  });

  it('the console shows the notice with the number masked', async () => {
    const page = await eventPage(ports, 'rv-1');
    expect(page.userId).toBe('rv-customer');
    expect(page.notices.map((n) => [n.notificationId, n.to])).toEqual([['rv-1#SMS', '+1 ••• 0182']]);
  });
});
