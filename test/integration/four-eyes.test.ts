/**
 * Four eyes on DynamoDB Local (functions/operator/operations.ts, functions/stores/proposal-store.ts): what the policy
 * names is proposed by one identity and approved by another — never confirmed alone, never approved by its proposer,
 * never after its expiry, never twice, never on a state that changed since it was proposed — and both halves are
 * audited with the verified identities. The routes answer the same over HTTP, with the status a client reads.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { identityOf } from '../../functions/console/api.ts';
import { type Caller, callerOf, parseGroupRoles } from '../../functions/console/caller.ts';
import { approvalPolicyOf } from '../../functions/domain/approval.ts';
import { PROPOSALS_PK, proposalSk } from '../../functions/domain/keys.ts';
import {
  type ApprovalPolicy,
  answer,
  type IngestInvoker,
  listAudit,
  type Operations,
  type OperatorPorts,
  operations,
} from '../../functions/operator/index.ts';
import { iamIdentityOf } from '../../functions/operator-api/iam-identity.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE, ALICE_ID, BOB, BOB_ID, operatorOn, putEmailSuppression } from '../support/operator.ts';

let table: LocalTable;
let ingest: IngestInvoker;
const T0 = Date.parse('2026-12-02T08:00:00Z');
const HOUR = 3_600_000;

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ingest = await localIngest(table.endpoint, table.tableName);
});

const policyOf = (kinds?: string, userNameIsEmail = false): ApprovalPolicy => {
  const parsed = approvalPolicyOf(kinds, 24, userNameIsEmail);
  if ('unknown' in parsed) throw new Error(parsed.unknown.join());
  return parsed.policy;
};

/** Operations on the test's table with a clock the test moves. */
function world(kinds?: string, userNameIsEmail = false) {
  let now = T0;
  const ports: OperatorPorts = operatorOn(table, { invokeIngest: (e) => ingest(e), now: () => now });
  return {
    ports,
    ops: operations(ports, policyOf(kinds, userNameIsEmail)) as Operations,
    later: (ms: number) => {
      now += ms;
    },
  };
}

/** People as each surface verifies them: the console's (an e-mail), Identity Center users, plain roles. */
function people() {
  const groups = parseGroupRoles(JSON.stringify({ support: ['support'], approver: ['approvers'] }));
  const inConsole = (email: string) => ({
    identity: identityOf(
      callerOf({ 'cognito:username': `Bank_${email}`, email, 'custom:groups': '["approvers"]' }, groups) as Caller,
    ),
    reason: 'checked with the customer',
  });
  const viaApi = (arn: string) => ({
    identity: iamIdentityOf({ userArn: arn }) as NonNullable<ReturnType<typeof iamIdentityOf>>,
    reason: 'customer asked on the phone',
  });
  const sso = (user: string) =>
    viaApi(`arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Operators_0a1b2c/${user}`);
  return {
    inConsole,
    sso,
    federated: viaApi('arn:aws:sts::123456789012:assumed-role/operators/alice'),
    admin: viaApi('arn:aws:sts::123456789012:assumed-role/admin/x'),
  };
}

const suppress = (address: string) => putEmailSuppression(table.doc, table.tableName, address, 'fe-0#EMAIL');
/** A write straight to a proposal's item, as someone the table let write would make it. */
const editProposal = (id: string, attribute: string, value: unknown) =>
  table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { pk: PROPOSALS_PK, sk: proposalSk(id) },
      UpdateExpression: 'SET #a = :v',
      ExpressionAttributeNames: { '#a': attribute },
      ExpressionAttributeValues: { ':v': value },
    }),
  );
const failed = (id: string) =>
  table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: `EVENT#${id}`,
        sk: 'NOTIFICATION#EMAIL',
        kind: 'NOTIFICATION',
        notificationId: `${id}#EMAIL`,
        eventId: id,
        channel: 'EMAIL',
        userId: 'fe-customer',
        status: 'FAILED',
        attempt: 2,
        template: 'TransferCompleted',
        createdAt: '2026-12-01T00:00:00.000Z',
      },
    }),
  );

describe('four eyes: what the policy names is proposed by one identity and approved by another', () => {
  it('a suppression lift is refused when confirmed alone (audited), proposed by alice, refused to alice, applied once by bob — both halves audited', async () => {
    const { ports, ops, later } = world();
    const lift = await suppress('fe-lift@example.com');
    const preview = await ops.preview('SUPPRESSION_LIFT', lift);
    expect(preview).toMatchObject({ ok: true, kind: 'SUPPRESSION_LIFT', approvalRequired: true });
    await expect(ops.confirm('SUPPRESSION_LIFT', lift, ALICE)).rejects.toMatchObject({
      refusal: { code: 'APPROVAL_REQUIRED' },
    });
    later(1000);
    const proposal = await ops.propose('SUPPRESSION_LIFT', lift, ALICE);
    expect(proposal).toMatchObject({
      status: 'PENDING',
      proposedBy: ALICE_ID,
      approveBy: new Date(T0 + 1000 + 24 * HOUR).toISOString(),
      shown: { state: 'ACTIVE', cause: 'BOUNCED' },
    });
    expect((await ops.proposals({ status: 'PENDING' })).map((p) => p.id)).toContain(proposal.id);
    later(1000);
    await expect(ops.approve(proposal.id, ALICE)).rejects.toMatchObject({ refusal: { code: 'OWN_PROPOSAL' } });
    later(1000);
    const approved = await ops.approve(proposal.id, BOB);
    expect(approved.outcome).toMatchObject({ lifted: true, by: BOB_ID.principal });
    expect(approved.proposal).toMatchObject({ status: 'APPROVED', decidedBy: BOB_ID, outcome: { result: 'DONE' } });
    later(1000);
    await expect(
      ops.approve(proposal.id, { ...BOB, identity: { principal: 'carol', verifiedBy: 'LOCAL_USER' } }),
    ).rejects.toMatchObject({
      refusal: { code: 'DECIDED' },
    });
    const audit = (await listAudit(ports)).filter((r) => r.action === 'SUPPRESSION_LIFT').reverse();
    expect(audit.map((r) => [r.step, r.by.principal, r.outcome?.result, r.outcome?.details.code])).toEqual([
      ['CONFIRM', 'alice', 'REFUSED', 'APPROVAL_REQUIRED'],
      ['PROPOSE', 'alice', 'DONE', undefined],
      ['APPROVE', 'alice', 'REFUSED', 'OWN_PROPOSAL'],
      ['APPROVE', 'bob', 'DONE', undefined],
      ['APPROVE', 'carol', 'REFUSED', 'DECIDED'],
    ]);
    expect(audit[3]).toMatchObject({
      proposal: proposal.id,
      details: { proposedBy: ALICE_ID, proposalReason: ALICE.reason },
    });
  });

  it('one person is one identity across surfaces and sessions: alice proposing through the operator API cannot approve in the console, nor from a second session of her role', async () => {
    const { ports, ops } = world();
    const groups = parseGroupRoles(JSON.stringify({ support: ['support'], approver: ['approvers'] }));
    const inConsole = (username: string, email: string) => ({
      identity: identityOf(
        callerOf({ 'cognito:username': username, email, 'custom:groups': '["approvers"]' }, groups) as Caller,
      ),
      reason: 'checked with the customer',
    });
    const viaApi = (arn: string) => ({
      identity: iamIdentityOf({ userArn: arn }) as NonNullable<ReturnType<typeof iamIdentityOf>>,
      reason: 'customer asked',
    });
    // Identity Center sets the session name to the user's name; a transient NameID gives a new console user name.
    const aliceSso = viaApi(
      'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Operators_0a1b2c/Alice@Bank.example',
    );
    const lift = await suppress('fe-person@example.com');
    const p = await ops.propose('SUPPRESSION_LIFT', lift, aliceSso);
    await expect(ops.approve(p.id, inConsole('Bank_8f3e1d0c', 'alice@bank.example'))).rejects.toMatchObject({
      refusal: { code: 'OWN_PROPOSAL' },
    });
    // Any other role: its session name is the caller's to choose, so every session of it is one person.
    const shared = 'arn:aws:sts::123456789012:assumed-role/Operators';
    const q = await ops.propose('SUPPRESSION_LIFT', lift, viaApi(`${shared}/alice`));
    await expect(ops.approve(q.id, viaApi(`${shared}/alice-2`))).rejects.toMatchObject({
      refusal: { code: 'OWN_PROPOSAL' },
    });
    // Another session of the role is refused as the same; nobody else can be proven another person than a role (below).
    await expect(
      ops.approve(q.id, viaApi(`${aliceSso.identity.principal.replace('Alice', 'Noor')}`)),
    ).rejects.toMatchObject({ refusal: { code: 'OWN_PROPOSAL_UNKNOWN' } });
    const refused = (await listAudit(ports)).filter((r) => r.outcome?.details.code === 'OWN_PROPOSAL');
    expect(refused.map((r) => [r.by.verifiedBy, r.by.person]).sort()).toEqual([
      ['AWS_IAM', 'arn:aws:iam::123456789012:role/operators'],
      ['IDENTITY_PROVIDER', 'alice@bank.example'],
    ]);
  });

  it('an approval needs two people of one kind of name that differ: a console e-mail and an Identity Center user name (even e-mail-shaped) are refused (audited), and so is anything under a shared role', async () => {
    const { ports, ops } = world();
    const { inConsole, sso, federated, admin } = people();
    const unknown = { refusal: { code: 'OWN_PROPOSAL_UNKNOWN' } };
    const lift = await suppress('fe-kinds-1@example.com');
    // Console alice.smith@bank.example; Identity Center's user name for her is her UPN, asmith@bank.example.
    const fromConsole = await ops.propose('SUPPRESSION_LIFT', lift, inConsole('alice.smith@bank.example'));
    await expect(ops.approve(fromConsole.id, sso('asmith@bank.example'))).rejects.toMatchObject(unknown);
    await expect(ops.approve(fromConsole.id, sso('alice'))).rejects.toMatchObject(unknown);
    await expect(ops.approve(fromConsole.id, sso('Noor@Bank.example'))).rejects.toMatchObject(unknown);
    await expect(ops.approve(fromConsole.id, federated)).rejects.toMatchObject(unknown);
    // Identity Center alice proposes; a plain role in the account approves: one engineer with a permission set and an
    // admin role is two names, one person.
    const fromName = await ops.propose('SUPPRESSION_LIFT', lift, sso('alice'));
    await expect(ops.approve(fromName.id, admin)).rejects.toMatchObject({
      refusal: { code: 'OWN_PROPOSAL_UNKNOWN', message: expect.stringContaining('approve it as a person') },
    });
    await expect(ops.approve(fromName.id, inConsole('noor@bank.example'))).rejects.toMatchObject(unknown);
    // A role proposes: nobody can be proven another person than it, on any surface, under any other role either.
    const fromRole = await ops.propose('SUPPRESSION_LIFT', lift, federated);
    for (const approver of [inConsole('noor@bank.example'), sso('noor'), admin]) {
      await expect(ops.approve(fromRole.id, approver)).rejects.toMatchObject({
        refusal: { code: 'OWN_PROPOSAL_UNKNOWN', message: expect.stringContaining('propose it again as a person') },
      });
    }
    // Same kind, different: approved — two Identity Center users, two console people.
    expect((await ops.approve(fromName.id, sso('noor'))).proposal).toMatchObject({ status: 'APPROVED' });
    const other = await suppress('fe-kinds-2@example.com');
    const again = await ops.propose('SUPPRESSION_LIFT', other, inConsole('alice.smith@bank.example'));
    expect((await ops.approve(again.id, inConsole('noor@bank.example'))).proposal).toMatchObject({
      status: 'APPROVED',
    });
    // Rejecting (withdrawing, closing) is no approval: any surface may.
    expect(await ops.reject(fromRole.id, inConsole('noor@bank.example'))).toMatchObject({ status: 'REJECTED' });
    const refused = (await listAudit(ports)).filter((r) => r.outcome?.details.code === 'OWN_PROPOSAL_UNKNOWN');
    expect(refused.map((r) => [r.step, r.outcome?.result, r.by.verifiedBy])).toEqual(
      expect.arrayContaining([
        ['APPROVE', 'REFUSED', 'AWS_IAM'],
        ['APPROVE', 'REFUSED', 'IDENTITY_PROVIDER'],
      ]),
    );
    expect(refused.map((r) => r.by.person)).toEqual(
      expect.arrayContaining(['asmith@bank.example', 'arn:aws:iam::123456789012:role/admin', 'noor']),
    );
    expect(refused).toHaveLength(9);
  });

  it('when the bank states its Identity Center user name is the directory e-mail, a console person and an Identity Center user compare (case aside); a plain user name or a role still cannot', async () => {
    const { ops } = world(undefined, true);
    const { inConsole, sso, federated } = people();
    const lift = await suppress('fe-same-names@example.com');
    const fromConsole = await ops.propose('SUPPRESSION_LIFT', lift, inConsole('alice@bank.example'));
    await expect(ops.approve(fromConsole.id, sso('ALICE@bank.example'))).rejects.toMatchObject({
      refusal: { code: 'OWN_PROPOSAL' },
    });
    await expect(ops.approve(fromConsole.id, sso('alice'))).rejects.toMatchObject({
      refusal: { code: 'OWN_PROPOSAL_UNKNOWN' },
    });
    await expect(ops.approve(fromConsole.id, federated)).rejects.toMatchObject({
      refusal: { code: 'OWN_PROPOSAL_UNKNOWN' },
    });
    expect((await ops.approve(fromConsole.id, sso('Noor@Bank.example'))).proposal).toMatchObject({
      status: 'APPROVED',
    });
    const other = await suppress('fe-same-names-2@example.com');
    const fromName = await ops.propose('SUPPRESSION_LIFT', other, sso('Alice@Bank.example'));
    await expect(ops.approve(fromName.id, inConsole('alice@bank.example'))).rejects.toMatchObject({
      refusal: { code: 'OWN_PROPOSAL' },
    });
    expect((await ops.approve(fromName.id, inConsole('noor@bank.example'))).proposal).toMatchObject({
      status: 'APPROVED',
    });
  });

  it('a proposal edited in the table after it was proposed is refused TAMPERED (audited) and never applied: its PROPOSE audit record says what was proposed', async () => {
    const { ports, ops } = world();
    const honest = await suppress('fe-honest@example.com');
    const other = await suppress('fe-forged@example.com');
    const p = await ops.propose('SUPPRESSION_LIFT', honest, ALICE);
    // Someone with write access to the table swaps the request and what the approver will see.
    await editProposal(p.id, 'request', other);
    await expect(ops.approve(p.id, BOB)).rejects.toMatchObject({
      refusal: { code: 'TAMPERED', message: expect.stringContaining('another request or preview') },
    });
    expect(await ops.preview('SUPPRESSION_LIFT', other)).toMatchObject({ ok: true, shown: { state: 'ACTIVE' } });
    expect((await ops.proposals({ status: 'PENDING' })).map((q) => q.id)).toContain(p.id);
    // …or forges the proposer, to make it look like someone else's.
    const q = await ops.propose('SUPPRESSION_LIFT', honest, ALICE);
    await editProposal(q.id, 'proposedBy', { principal: 'carol', verifiedBy: 'LOCAL_USER', person: 'carol' });
    await expect(ops.approve(q.id, ALICE)).rejects.toMatchObject({ refusal: { code: 'TAMPERED' } });
    const audit = (await listAudit(ports)).filter(
      (r) => r.step === 'APPROVE' && [p.id, q.id].includes(r.proposal ?? ''),
    );
    expect(audit.map((r) => r.outcome?.details.code)).toEqual(['TAMPERED', 'TAMPERED']);
  });

  it('an approval is audited before its decision lands: when its record cannot be written, the proposal stays pending and nothing is done', async () => {
    const { ports, ops } = world();
    const lift = await suppress('fe-first@example.com');
    const p = await ops.propose('SUPPRESSION_LIFT', lift, ALICE);
    const auditDown: OperatorPorts = {
      ...ports,
      audit: {
        record: async (entry, now) =>
          entry.step === 'APPROVE' ? Promise.reject(new Error('SlowDown')) : ports.audit.record(entry, now),
        recordOutcome: (key, outcome, now) => ports.audit.recordOutcome(key, outcome, now),
        list: (since) => ports.audit.list(since),
        read: (key) => ports.audit.read(key),
        listAbout: (subjects, since) => ports.audit.listAbout(subjects, since),
      },
    };
    await expect(operations(auditDown, ops.policy).approve(p.id, BOB)).rejects.toThrow('SlowDown');
    expect((await ops.proposals({ status: 'PENDING' })).map((q) => q.id)).toContain(p.id);
    expect(await ops.preview('SUPPRESSION_LIFT', lift)).toMatchObject({ ok: true, shown: { state: 'ACTIVE' } });
    // A decision that then does not land (decided meanwhile) is that record's REFUSED outcome.
    await ops.reject(p.id, { ...ALICE, reason: 'withdrawn' });
    await expect(ops.approve(p.id, BOB)).rejects.toMatchObject({ refusal: { code: 'DECIDED' } });
    const approvals = (await listAudit(ports)).filter((r) => r.proposal === p.id && r.step === 'APPROVE');
    expect(approvals.map((r) => [r.by.principal, r.outcome?.result])).toEqual([['bob', 'REFUSED']]);
  });

  it('a proposal past its expiry is refused (audited), and so is one whose state changed since it was proposed', async () => {
    const { ops, later } = world('RESEND');
    await failed('fe-expire');
    const expiring = await ops.propose('RESEND', { notificationId: 'fe-expire#EMAIL' }, ALICE);
    later(24 * HOUR);
    expect((await ops.proposals({ status: 'EXPIRED' })).map((p) => p.id)).toContain(expiring.id);
    await expect(ops.approve(expiring.id, BOB)).rejects.toMatchObject({ refusal: { code: 'EXPIRED' } });
    expect((await table.eventItems('fe-expire'))[0]).toMatchObject({ status: 'FAILED' });

    await failed('fe-changed');
    const changing = await ops.propose('RESEND', { notificationId: 'fe-changed#EMAIL' }, ALICE);
    // Meanwhile the notification moved: another attempt failed (a sweeper re-drive), so it is not what alice saw.
    await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...(await table.eventItems('fe-changed'))[0], attempt: 3, lastError: 'REJECTED' },
      }),
    );
    await expect(ops.approve(changing.id, BOB)).rejects.toMatchObject({ refusal: { code: 'CHANGED' } });
    expect((await table.eventItems('fe-changed'))[0]).toMatchObject({ status: 'FAILED', attempt: 3 });
    expect((await ops.proposals({ status: 'APPROVED' })).find((p) => p.id === changing.id)).toMatchObject({
      outcome: { result: 'REFUSED', details: { code: 'CHANGED' } },
    });
  });

  it('a rejected proposal is never applied; the proposer may withdraw their own; proposals are listed by customer', async () => {
    const { ops } = world('RESEND');
    await failed('fe-reject');
    const rejected = await ops.propose('RESEND', { notificationId: 'fe-reject#EMAIL' }, ALICE);
    expect((await ops.proposals({ userId: 'fe-customer' })).map((p) => p.id)).toContain(rejected.id);
    expect(await ops.proposals({ userId: 'someone-else' })).toEqual([]);
    expect(await ops.reject(rejected.id, { ...BOB, reason: 'the customer has it by post' })).toMatchObject({
      status: 'REJECTED',
      decidedBy: BOB_ID,
      decisionReason: 'the customer has it by post',
    });
    await expect(ops.approve(rejected.id, BOB)).rejects.toMatchObject({ refusal: { code: 'DECIDED' } });
    const withdrawn = await ops.propose('RESEND', { notificationId: 'fe-reject#EMAIL' }, ALICE);
    expect((await ops.reject(withdrawn.id, ALICE)).status).toBe('REJECTED');
    expect((await table.eventItems('fe-reject'))[0]).toMatchObject({ status: 'FAILED' });
  });

  it('two approvers racing: the proposal is applied once', async () => {
    const { ops } = world('RESEND');
    await failed('fe-race');
    const p = await ops.propose('RESEND', { notificationId: 'fe-race#EMAIL' }, ALICE);
    const carol = { identity: { principal: 'carol', verifiedBy: 'LOCAL_USER' as const }, reason: 'ok' };
    const settled = await Promise.allSettled([ops.approve(p.id, BOB), ops.approve(p.id, carol)]);
    expect(settled.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((await table.eventItems('fe-race'))[0]).toMatchObject({
      status: 'PENDING',
      manualResends: [{ fromStatus: 'FAILED' }],
    });
  });

  it('a repair sends to contact points an operator supplied: proposed, shown with them, approved by another, audited as REPAIR', async () => {
    const { ports, ops } = world();
    const noCountryCode = transferEvent({ eventId: 'fe-repair', recipient: { phoneNumber: '090-1234-5678' } });
    await ingest(mskEvent([{ topic: 'fe.repair', partition: 0, offset: 1, value: noCountryCode }]));
    const corrected = JSON.stringify(
      transferEvent({ eventId: 'fe-repair', recipient: { phoneNumber: '+81 90-1234-5678' } }),
    );
    const request = { eventId: 'fe-repair', corrected };
    const preview = await ops.preview('REPAIR', request);
    expect(preview).toMatchObject({
      ok: true,
      kind: 'OPERATOR_CONTENT',
      approvalRequired: true,
      shown: { suppliedContactPoints: { SMS: '+819012345678' }, refused: [{ channel: 'SMS' }] },
    });
    await expect(ops.confirm('REPAIR', request, ALICE)).rejects.toMatchObject({
      refusal: { code: 'APPROVAL_REQUIRED' },
    });
    expect((await table.eventItems('fe-repair')).find((i) => i.sk === 'NOTIFICATION#SMS')).toMatchObject({
      status: 'REFUSED',
    });
    const p = await ops.propose('REPAIR', request, ALICE);
    expect((await ops.approve(p.id, BOB)).outcome).toMatchObject({ outcome: 'REPAIRED' });
    expect((await table.eventItems('fe-repair')).find((i) => i.sk === 'NOTIFICATION#SMS')).toMatchObject({
      status: 'PENDING',
    });
    expect((await listAudit(ports)).find((r) => r.action === 'REPAIR' && r.step === 'APPROVE')).toMatchObject({
      by: BOB_ID,
      outcome: { result: 'DONE', details: { outcome: 'REPAIRED' } },
    });
  });

  it('a resend (not in the default policy) is confirmed by one identity; a fingerprint shown earlier that no longer holds refuses it', async () => {
    const { ops } = world();
    await failed('fe-one');
    const shown = await ops.preview('RESEND', { notificationId: 'fe-one#EMAIL' });
    expect(shown).toMatchObject({ ok: true, approvalRequired: false, userId: 'fe-customer' });
    await expect(
      ops.confirm('RESEND', { notificationId: 'fe-one#EMAIL' }, ALICE, 'not-what-was-shown'),
    ).rejects.toMatchObject({
      refusal: { code: 'CHANGED' },
    });
    const fingerprint = shown.ok ? shown.fingerprint : '';
    expect(await ops.confirm('RESEND', { notificationId: 'fe-one#EMAIL' }, ALICE, fingerprint)).toMatchObject({
      fromStatus: 'FAILED',
    });
  });
});

describe('the operations over HTTP (functions/operator/routes.ts)', () => {
  it('answers each route with its status: a preview, a refused confirm (403), a proposal (201), an own approval (403), a bad request (400), no route (404)', async () => {
    const { ops } = world();
    const lift = await suppress('fe-http@example.com');
    const call = (identity: typeof ALICE_ID, method: string, path: string, body?: unknown, query = {}) =>
      answer(ops, identity, { method, path, body, query });
    expect(await call(ALICE_ID, 'POST', '/actions/SUPPRESSION_LIFT/preview', lift)).toMatchObject({
      status: 200,
      body: { ok: true, approvalRequired: true },
    });
    expect(
      await call(ALICE_ID, 'POST', '/actions/SUPPRESSION_LIFT/confirm', { request: lift, reason: 'fixed' }),
    ).toMatchObject({
      status: 403,
      body: { ok: false, refusal: { code: 'APPROVAL_REQUIRED' } },
    });
    const proposed = await call(ALICE_ID, 'POST', '/proposals', {
      action: 'SUPPRESSION_LIFT',
      request: lift,
      reason: 'fixed',
    });
    expect(proposed.status).toBe(201);
    const id = (proposed.body as { proposal: { id: string } }).proposal.id;
    expect(await call(ALICE_ID, 'POST', `/proposals/${id}/approve`, { reason: 'me' })).toMatchObject({ status: 403 });
    expect(await call(BOB_ID, 'GET', '/proposals', undefined, { status: 'PENDING' })).toMatchObject({
      status: 200,
      body: { ok: true, proposals: expect.arrayContaining([expect.objectContaining({ id })]) },
    });
    expect(
      await call(BOB_ID, 'POST', `/proposals/${id}/approve`, { reason: 'seen the bounce is fixed' }),
    ).toMatchObject({
      status: 200,
      body: { ok: true, outcome: { lifted: true } },
    });
    expect(await call(ALICE_ID, 'POST', '/actions/RESEND/preview', { notificationId: 42 })).toMatchObject({
      status: 400,
    });
    expect(await call(ALICE_ID, 'POST', '/actions/SUPPRESSION_LIFT/confirm', { request: lift })).toMatchObject({
      status: 400,
      body: { refusal: { message: expect.stringMatching(/reason/) } },
    });
    expect(await call(ALICE_ID, 'POST', '/actions/FROBNICATE/preview', {})).toMatchObject({ status: 400 });
    expect(await call(ALICE_ID, 'DELETE', '/proposals', {})).toMatchObject({ status: 404 });
  });
});
