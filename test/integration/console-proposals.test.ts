/**
 * A resend's proposal through the support console, on DynamoDB Local with the real stores and operations: its answer
 * names the notice and its masked contact (never "to (unknown)"); its proposer withdraws it (audited as their REJECT),
 * nobody else does (refused, audited); a request refused for its body or reason is audited like any refusal; a SENT
 * text whose delivery failed is refused for what is true (the provider accepted it, its delivery failed).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { answerApi } from '../../functions/console/api.ts';
import type { Caller } from '../../functions/console/caller.ts';
import type { ApiRouteName } from '../../functions/contracts/console-routes.ts';
import type { ProposalRow } from '../../functions/contracts/console-views.ts';
import { listAudit, type OperatorPorts } from '../../functions/operator/index.ts';
import { iamIdentityOf } from '../../functions/operator-api/iam-identity.ts';
import { apiRoute, consoleOn, consolePerson } from '../support/console.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { operatorOn, putEmailSuppression } from '../support/operator.ts';

let table: LocalTable;
let ports: OperatorPorts;
let consoleApi: ReturnType<typeof consoleOn>;
const SAM = consolePerson('sam', 's');
const KIM = consolePerson('kim', 's');
const NOOR = consolePerson('noor', 'a');
const ask = (name: ApiRouteName, body: unknown, caller: Caller = SAM) => consoleApi.ask(name, body, caller);
const proposalOf = (answer: { body: unknown }) => (answer.body as { proposal: ProposalRow }).proposal;

const notice = (eventId: string, fields: Record<string, unknown>) =>
  table.doc.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: `EVENT#${eventId}`,
        sk: 'NOTIFICATION#EMAIL',
        kind: 'NOTIFICATION',
        notificationId: `${eventId}#EMAIL`,
        eventId,
        channel: 'EMAIL',
        userId: 'cp-u1',
        recipient: 'dana.customer@example.com',
        attempt: 3,
        template: 'TransferCompleted',
        createdAt: new Date().toISOString(),
        occurredAt: new Date().toISOString(),
        ...fields,
      },
    }),
  );

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ports = operatorOn(table);
  consoleApi = consoleOn(ports);
  await notice('cp-failed', { status: 'FAILED', lastError: 'RETRIES_EXHAUSTED' });
  await notice('cp-withdrawn', { status: 'FAILED', lastError: 'RETRIES_EXHAUSTED' });
  await notice('cp-bounced', {
    status: 'SENT',
    providerMessageId: 'm-bounced-1',
    deliveryStatus: 'FAILED',
    deliveryResponse: 'Mailbox does not exist',
  });
});

describe('a resend proposed and decided in the console', () => {
  it('answers with the notice and its masked contact, on propose and on decide', async () => {
    const proposed = await ask('propose', { notificationId: 'cp-failed#EMAIL', reason: 'customer called, case 7731' });
    expect(proposed.status).toBe(201);
    const row = proposalOf(proposed);
    expect(row.what).toBe('Send again: Transfer completed · Email');
    expect(row.shown).toMatch(/^Another try of an email that ended FAILED \(RETRIES_EXHAUSTED\), to d.*@example\.com$/);
    expect(row.shown).not.toContain('(unknown)');
    expect(row.shown).not.toContain('dana.customer');
    expect(row.now).toMatch(/^Not sent: /);
    const decided = await ask(
      'decide',
      { proposalId: row.id, decision: 'APPROVE', reason: 'checked the case notes' },
      NOOR,
    );
    expect(decided.status).toBe(200);
    expect(proposalOf(decided)).toMatchObject({
      status: 'APPROVED',
      shown: row.shown,
      now: expect.stringMatching(/^Being sent/),
    });
  });
});

describe('withdrawing a proposal', () => {
  it('is its proposer’s: audited as their REJECT; another person’s is refused, audited, and stays open', async () => {
    const row = proposalOf(
      await ask('propose', { notificationId: 'cp-withdrawn#EMAIL', reason: 'customer asked again, case 7740' }),
    );
    const refused = await ask('withdraw', { proposalId: row.id, reason: 'looks like a duplicate' }, KIM);
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'NOT_YOURS' } } });
    expect((await ports.proposals.get(row.id))?.state).toBe('PENDING');
    const withdrawn = await ask('withdraw', { proposalId: row.id, reason: 'the customer got it after all' });
    expect(withdrawn.status).toBe(200);
    expect(proposalOf(withdrawn)).toMatchObject({ status: 'REJECTED', mine: true });
    expect((await ports.proposals.get(row.id))?.state).toBe('REJECTED');
    const trail = (await listAudit(ports)).filter((r) => r.proposal === row.id && r.step === 'REJECT').reverse();
    expect(trail.map((r) => [r.by.person, r.outcome?.result, r.outcome?.details.code])).toEqual([
      ['kim@bank.example', 'REFUSED', 'NOT_YOURS'],
      ['sam@bank.example', 'DONE', undefined],
    ]);
    // The notice's audit trail on the page says withdrawn for the proposer's own; Kim's attempt stays a refused reject.
    const page = (await ask('notice', { notificationId: 'cp-withdrawn#EMAIL' })).body as {
      audit: { step: string; by: string; outcome: string }[];
    };
    expect(page.audit.filter((r) => r.step !== 'PROPOSE').map((r) => [r.step, r.by, r.outcome])).toEqual([
      ['WITHDRAW', 'sam', 'DONE'],
      ['REJECT', 'kim', 'REFUSED'],
    ]);
    // Withdrawn once: a second time is refused (decided already).
    const again = await ask('withdraw', { proposalId: row.id, reason: 'the customer got it after all' });
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'DECIDED' } } });
  });

  it('is refused, audited, to a role that may not propose', async () => {
    const answer = await ask(
      'withdraw',
      { proposalId: 'p-20261205T000000Z-nobody', reason: 'not needed any more' },
      NOOR,
    );
    expect(answer).toMatchObject({
      status: 403,
      body: { error: { code: 'FORBIDDEN', message: expect.stringContaining('an approver rejects it instead') } },
    });
    const audited = (await listAudit(ports)).filter((r) => r.proposal === 'p-20261205T000000Z-nobody');
    expect(audited.map((r) => [r.step, r.outcome?.result])).toEqual([['REJECT', 'REFUSED']]);
  });
});

describe('a refusal for the request itself', () => {
  it('is audited (INVALID) on every acting route, with what was tried: a one-word reason, no reason, not JSON', async () => {
    const tries: [ApiRouteName, unknown, Caller][] = [
      ['propose', { notificationId: 'cp-invalid-1#EMAIL', reason: 'ok' }, SAM],
      ['reveal', { notificationId: 'cp-invalid-2#EMAIL' }, SAM],
      ['decide', { proposalId: 'p-20261205T000000Z-invald', decision: 'APPROVE', reason: 'x' }, NOOR],
      ['withdraw', { proposalId: 'p-20261205T000000Z-invalw', reason: 'no' }, SAM],
    ];
    for (const [name, body, caller] of tries) {
      expect(await ask(name, body, caller)).toMatchObject({ status: 400, body: { error: { code: 'INVALID' } } });
    }
    const notJson = await answerApi(
      apiRoute('propose'),
      SAM,
      '{"notificationId": "cp-invalid-3#EMAIL", ',
      consoleApi.deps,
    );
    expect(notJson.status).toBe(400);
    const audit = await listAudit(ports);
    const refused = (target: string) => audit.find((r) => r.target === target);
    for (const [target, action, step, reason] of [
      ['cp-invalid-1#EMAIL', 'RESEND', 'PROPOSE', 'ok'],
      ['cp-invalid-2#EMAIL', 'REVEAL', 'CONFIRM', ''],
      ['p-20261205T000000Z-invald', 'RESEND', 'APPROVE', 'x'],
      ['p-20261205T000000Z-invalw', 'RESEND', 'REJECT', 'no'],
    ]) {
      expect(refused(target as string)).toMatchObject({
        action,
        step,
        reason,
        outcome: { result: 'REFUSED', details: { code: 'INVALID' } },
      });
    }
    // Not JSON names nothing: audited as what the route does, about nothing.
    expect(audit.filter((r) => r.outcome?.details.message === 'The request is not JSON.')).toHaveLength(1);
    // A read refused for its body is no attempt to act: not audited.
    const before = (await listAudit(ports)).length;
    expect((await ask('customer', { userId: '' })).status).toBe(400);
    expect(await listAudit(ports)).toHaveLength(before);
  });
});

describe('a resend of an email the provider accepted but could not deliver', () => {
  it('is refused for what is true — accepted, its delivery failed — never “the customer has it”, in the console and its audit', async () => {
    const answer = await ask('propose', { notificationId: 'cp-bounced#EMAIL', reason: 'customer says nothing came' });
    expect(answer).toMatchObject({ status: 409, body: { error: { code: 'ACCEPTED' } } });
    const { message } = (answer.body as { error: { message: string } }).error;
    expect(message).toContain('The provider accepted it');
    expect(message).not.toMatch(/--[a-z]|the customer has it/);
    const audited = (await listAudit(ports)).find((r) => r.target === 'cp-bounced#EMAIL' && r.step === 'PROPOSE');
    expect(audited?.outcome?.details.message).toContain(
      'the provider accepted it as message m-bounced-1 (delivery: FAILED “Mailbox does not exist”)',
    );
    expect(audited?.outcome?.details.message).not.toContain('the customer has it');
  });
});

/** What the desk must never read: the command line's flags, a credential's kind, ARNs, sign-in user names, a false "has it". */
const ENGINEERS_WORDS = /--[a-z]|the customer has it|lift-suppression|AWS_IAM|IDENTITY_PROVIDER|arn:|bank_/;

describe('a decision the console refuses', () => {
  it('naming no proposal is refused NOT_FOUND and audited with the verified caller, on decide and on withdraw', async () => {
    const ghost = 'p-20261206T000000Z-ghost';
    const decided = await ask('decide', { proposalId: ghost, decision: 'APPROVE', reason: 'probing for ids' }, NOOR);
    expect(decided).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    const withdrawn = await ask('withdraw', { proposalId: ghost, reason: 'probing for ids' });
    expect(withdrawn).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    const audited = (await listAudit(ports)).filter((r) => r.proposal === ghost).reverse();
    expect(audited.map((r) => [r.step, r.by.person, r.outcome?.result, r.outcome?.details.code])).toEqual([
      ['APPROVE', 'noor@bank.example', 'REFUSED', 'NOT_FOUND'],
      ['REJECT', 'sam@bank.example', 'REFUSED', 'NOT_FOUND'],
    ]);
  });

  it('says why in the desk’s words when the notice moved on before the approval: suppressed, or accepted by the provider', async () => {
    await notice('cp-late-stop', { status: 'FAILED', recipient: 'late.stop@example.com' });
    await notice('cp-late-sent', { status: 'FAILED', recipient: 'late.sent@example.com' });
    const stop = proposalOf(
      await ask('propose', { notificationId: 'cp-late-stop#EMAIL', reason: 'customer called, case 7801' }),
    );
    const sent = proposalOf(
      await ask('propose', { notificationId: 'cp-late-sent#EMAIL', reason: 'customer called, case 7802' }),
    );
    await putEmailSuppression(table.doc, table.tableName, 'late.stop@example.com', 'cp-late-stop#EMAIL');
    await notice('cp-late-sent', { status: 'SENT', recipient: 'late.sent@example.com', providerMessageId: 'm-late' });
    const approve = (id: string) =>
      ask('decide', { proposalId: id, decision: 'APPROVE', reason: 'checked the case notes' }, NOOR);
    const answers = [await approve(stop.id), await approve(sent.id)];
    expect(answers.map((a) => [a.status, (a.body as { error: { code: string } }).error.code])).toEqual([
      [409, 'SUPPRESSED'],
      [409, 'ACCEPTED'],
    ]);
    const messages = answers.map((a) => (a.body as { error: { message: string } }).error.message);
    for (const message of messages) expect(message).not.toMatch(ENGINEERS_WORDS);
    expect(messages[1]).toMatch(/no delivery report yet/);
    // Withdrawing one approved but not sent says so, not only "decided already" (which reads as sent).
    const withdrawn = await ask('withdraw', { proposalId: stop.id, reason: 'customer will call back' });
    expect(withdrawn).toMatchObject({ status: 409, body: { error: { code: 'DECIDED' } } });
    const words = (withdrawn.body as { error: { message: string } }).error.message;
    expect(words).toMatch(/^It was approved, but it was not sent: /);
    expect(words).not.toMatch(ENGINEERS_WORDS);
  });

  it('does not offer Approve on an engineer’s proposal: says who approves it (an engineer with the operator tool), refuses it in plain words, audited', async () => {
    await notice('cp-engineer', { status: 'FAILED', recipient: 'eng.one@example.com' });
    await notice('cp-role', { status: 'FAILED', recipient: 'eng.two@example.com' });
    const engineer = (arn: string) => ({
      identity: iamIdentityOf({ userArn: arn }) as NonNullable<ReturnType<typeof iamIdentityOf>>,
      reason: 'customer asked on the phone',
    });
    const ops = consoleApi.deps.ops;
    const bob = engineer('arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Operators_0a1b2c/bob');
    const role = engineer('arn:aws:sts::123456789012:assumed-role/operators/whoever');
    const byBob = await ops.propose('RESEND', { notificationId: 'cp-engineer#EMAIL' }, bob);
    const byRole = await ops.propose('RESEND', { notificationId: 'cp-role#EMAIL' }, role);
    const listed = ((await ask('proposals', {}, NOOR)).body as { proposals: ProposalRow[] }).proposals;
    const rowOf = (id: string) => listed.find((r) => r.id === id) as ProposalRow;
    expect(rowOf(byBob.id)).toMatchObject({
      proposedBy: 'bob',
      cannotApprove: expect.stringMatching(/engineer in the operator tools \(bob\).*operator tool/),
    });
    expect(rowOf(byRole.id)).toMatchObject({
      proposedBy: 'the shared role operators',
      cannotApprove: expect.stringMatching(/nobody can approve it/),
    });
    for (const row of listed) expect(`${row.proposedBy} ${row.cannotApprove ?? ''}`).not.toMatch(ENGINEERS_WORDS);
    const refused = await ask(
      'decide',
      { proposalId: byBob.id, decision: 'APPROVE', reason: 'checked the case notes' },
      NOOR,
    );
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'OWN_PROPOSAL_UNKNOWN' } } });
    const message = (refused.body as { error: { message: string } }).error.message;
    expect(message).toMatch(/engineer with the operator tool approves it/);
    expect(message).not.toMatch(ENGINEERS_WORDS);
    const audited = (await listAudit(ports)).find((r) => r.proposal === byBob.id && r.step === 'APPROVE');
    expect(audited).toMatchObject({ by: { person: 'noor@bank.example' }, outcome: { result: 'REFUSED' } });
  });
});
