/**
 * The region commands on a deployed stage, as each region's operator function answers them (POST
 * /regions/{promote|demote|reconcile}/{preview|confirm}), on DynamoDB Local with two tables standing for the two
 * replicas, and Lambda's UpdateEventSourceMapping mocked. In the order of the runbook: a failover promoted by the
 * recovery region's operator while the primary does not answer at all — its ingest mapping switched on —, the old
 * region demoted by its own operator once it is back — its mapping switched off, quiet after the timeouts, answered in
 * runs that each fit API Gateway's 29 s —, then reconciled by the active region's operator. Each confirm is audited,
 * before and after, with the verified caller; each refusal is the preview's and is audited REFUSED.
 */
import { LambdaClient, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { AuditRecord } from '../../functions/domain/audit.ts';
import { answerRegions } from '../../functions/operator/region-routes.ts';
import { CALLER, MAPPING, PRIMARY, RECOVERY, type TwoRegions, twoRegions } from '../support/two-region-operators.ts';

const lambda = mockClient(LambdaClient);
let stage: TwoRegions;

beforeAll(async () => {
  stage = await twoRegions(inject('dynamoEndpoint'));
});
beforeEach(() => {
  lambda.reset();
  lambda
    .on(UpdateEventSourceMappingCommand)
    .callsFake((input) => ({ State: input.Enabled ? 'Enabling' : 'Disabling' }));
});

type Operator = ReturnType<TwoRegions['operator']>;
// biome-ignore lint/suspicious/noExplicitAny: each route answers its own JSON shape
const post = async (operator: Operator, path: string, body: unknown): Promise<{ status: number; body: any }> => {
  const answer = await answerRegions(operator, CALLER, { method: 'POST', path, query: {}, body });
  if (answer === undefined) throw new Error(`${path} is a region route`);
  return answer;
};

/** The audit record of this action given this reason (the latest, when it ran more than once). */
async function audited(action: string, reason: string): Promise<AuditRecord | undefined> {
  const records = (await stage.audit.list()).filter((r) => r.action === action && r.reason === reason);
  return records.sort((a, b) => (a.outcome?.at ?? '').localeCompare(b.outcome?.at ?? '')).at(-1);
}

const switched = () => lambda.commandCalls(UpdateEventSourceMappingCommand).map((c) => c.args[0].input);
const failover = { to: RECOVERY, oldRegionUnreachable: true, fromEpoch: 1 };

describe('promote, by the recovery region’s operator, while the primary region does not answer', () => {
  it('the active region’s own operator refuses to promote it, in the preview and on confirm (ALREADY_ACTIVE), audited REFUSED', async () => {
    const primary = stage.operator(PRIMARY);
    const request = { to: PRIMARY, oldRegionUnreachable: true, fromEpoch: 0 };
    const preview = await post(primary, '/regions/promote/preview', request);
    expect(preview.body.wouldRefuse).toMatchObject({ code: 'ALREADY_ACTIVE' });
    const confirmed = await post(primary, '/regions/promote/confirm', { request, reason: 'wrong region' });
    expect(confirmed).toMatchObject({ status: 409, body: { ok: false, refusal: { code: 'ALREADY_ACTIVE' } } });
    expect(await audited('PROMOTE', 'wrong region')).toMatchObject({ by: CALLER, outcome: { result: 'REFUSED' } });
    expect(switched()).toEqual([]);
  });

  it('a command for the other region is refused before anything is read, naming where to ask; a refused confirm is audited', async () => {
    const recovery = stage.operator(RECOVERY);
    const answer = await post(recovery, '/regions/demote/confirm', { request: { region: PRIMARY }, reason: 'x' });
    expect(answer.status).toBe(400);
    expect(answer.body.refusal.message).toMatch(
      /demote acts in ap-northeast-1: ask the operator API of ap-northeast-1/,
    );
    const noReason = await post(recovery, '/regions/promote/confirm', { request: failover, reason: ' ' });
    expect(noReason).toMatchObject({ status: 400, body: { refusal: { code: 'INVALID', message: /say why/ } } });
    // Refused before it ran, a confirm is still someone's attempt to move a region: each audited with its caller.
    const refusedAs = (code: string, message: RegExp) => ({
      by: CALLER,
      target: RECOVERY,
      outcome: { result: 'REFUSED', details: { code, message: expect.stringMatching(message) } },
    });
    expect(await audited('DEMOTE', 'x')).toMatchObject(refusedAs('INVALID', /ask the operator API of/));
    expect(await audited('PROMOTE', ' ')).toMatchObject(refusedAs('INVALID', /say why/));
    const notFailover = await post(recovery, '/regions/promote/preview', { ...failover, oldRegionUnreachable: false });
    expect(notFailover.body.refusal.message).toMatch(/only a failover is built/);
    expect(await stage.fence(RECOVERY).control(true)).toMatchObject({ state: 'FENCED', epoch: 0 });
  });

  it('previews from the recovery region alone: its fence, the primary’s unreachable, what is unfinished; nothing moves', async () => {
    const recovery = stage.operator(RECOVERY, { otherLost: true });
    const answer = await post(recovery, '/regions/promote/preview', failover);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, acting: RECOVERY, plan: { unfinished: { [RECOVERY]: 2 } } });
    expect(answer.body.plan.fences[PRIMARY]).toHaveProperty('unreachable');
    expect(answer.body.plan.fences[RECOVERY]).toMatchObject({ state: 'FENCED', epoch: 0 });
    expect(answer.body.wouldRefuse).toBeUndefined();
    expect(await stage.fence(RECOVERY).control(true)).toMatchObject({ state: 'FENCED', epoch: 0 });
  });

  it('confirmed: active at epoch 2, the pending notice held, the one in flight unknown, its ingest mapping switched on; audited before and after', async () => {
    const recovery = stage.operator(RECOVERY, { otherLost: true });
    const answer = await post(recovery, '/regions/promote/confirm', {
      request: failover,
      reason: 'INC-7 primary lost',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.outcome).toMatchObject({
      region: RECOVERY,
      epoch: 2,
      held: 1,
      unknown: 1,
      // Which notices, not only how many: the pending EMAIL held, the SMS in flight unknown (an audit record holds them).
      ids: { held: [expect.stringMatching(/#EMAIL$/)], unknown: [expect.stringMatching(/#SMS$/)], alreadyThere: [] },
      intake: { mapping: MAPPING[RECOVERY], enabled: true, state: 'Enabling' },
    });
    expect(answer.body.runAgainAt).toBeUndefined();
    expect(switched()).toEqual([{ UUID: MAPPING[RECOVERY], Enabled: true }]);
    expect(await stage.fence(RECOVERY).control(true)).toMatchObject({ state: 'ACTIVE', epoch: 2, mode: 'FORCED' });
    expect(await audited('PROMOTE', 'INC-7 primary lost')).toMatchObject({
      by: CALLER,
      reason: 'INC-7 primary lost',
      target: RECOVERY,
      details: { fences: { [RECOVERY]: { state: 'FENCED' } } },
      outcome: {
        result: 'DONE',
        details: { epoch: 2, held: 1, ids: { held: [expect.any(String)] }, intake: { enabled: true } },
      },
    });
  });

  it('reconcile before the old region is demoted is refused (NOT_DEMOTED), audited REFUSED', async () => {
    const recovery = stage.operator(RECOVERY);
    const preview = await post(recovery, '/regions/reconcile/preview', { from: PRIMARY });
    expect(preview.body.wouldRefuse).toMatchObject({ code: 'NOT_DEMOTED' });
    const answer = await post(recovery, '/regions/reconcile/confirm', {
      request: { from: PRIMARY },
      reason: 'too soon',
    });
    expect(answer).toMatchObject({ status: 409, body: { refusal: { code: 'NOT_DEMOTED' } } });
    expect(await audited('RECONCILE', 'too soon')).toMatchObject({ by: CALLER, outcome: { result: 'REFUSED' } });
  });
});

describe('demote, by the old region’s own operator once it answers', () => {
  it('fences it and switches its mapping off at once, answers when to run again, and records quiescence on the run after', async () => {
    const primary = stage.operator(PRIMARY);
    const request = { request: { region: PRIMARY }, reason: 'INC-7 primary back' };
    const first = await post(primary, '/regions/demote/confirm', request);
    expect(first.status).toBe(200);
    expect(first.body.outcome).toMatchObject({
      region: PRIMARY,
      intake: { mapping: MAPPING[PRIMARY], enabled: false },
    });
    expect(first.body.outcome.quiescentAt).toBeUndefined();
    expect(first.body.runAgainAt).toBe(first.body.outcome.quietFrom);
    expect(switched()).toEqual([{ UUID: MAPPING[PRIMARY], Enabled: false }]);
    expect(await stage.fence(PRIMARY).control(true)).toMatchObject({ state: 'FENCED', epoch: 1 });
    // Too soon: still not quiet, nothing recorded.
    expect((await post(primary, '/regions/demote/confirm', request)).body.runAgainAt).toBe(first.body.runAgainAt);
    await stage.clock.sleep(first.body.runAgainAt - stage.clock.now());
    const second = await post(primary, '/regions/demote/confirm', request);
    expect(second.body.runAgainAt).toBeUndefined();
    expect(second.body.outcome).toMatchObject({ fencedAt: first.body.outcome.fencedAt, wasFenced: true });
    expect(second.body.outcome.quiescentAt).toBeGreaterThanOrEqual(first.body.outcome.quietFrom);
    expect(await stage.fence(PRIMARY).control(true)).toMatchObject({ quiescentAt: second.body.outcome.quiescentAt });
    expect(await audited('DEMOTE', 'INC-7 primary back')).toMatchObject({ by: CALLER, outcome: { result: 'DONE' } });
  });
});

describe('reconcile, by the active region’s operator', () => {
  it('marks the predecessor, answers when the holds have settled, then settles what the old region never took', async () => {
    const recovery = stage.operator(RECOVERY);
    const request = { request: { from: PRIMARY }, reason: 'INC-7 reconcile' };
    const first = await post(recovery, '/regions/reconcile/confirm', request);
    expect(first.status).toBe(200);
    expect(first.body.runAgainAt).toBe(first.body.outcome.settlesAt);
    expect(first.body.outcome).toMatchObject({ released: 0, handedOver: 0, unknown: 0 });
    expect((await stage.fence(RECOVERY).control(true))?.predecessor?.reconciledAt).toBeDefined();
    await stage.clock.sleep(first.body.runAgainAt - stage.clock.now());
    const second = await post(recovery, '/regions/reconcile/confirm', request);
    expect(second.body.runAgainAt).toBeUndefined();
    // The primary's replica has neither notice nor their event: it never took them. Both released, sent late.
    expect(second.body.outcome).toMatchObject({ from: PRIMARY, to: RECOVERY, released: 2, waiting: 0 });
    expect(await audited('RECONCILE', 'INC-7 reconcile')).toMatchObject({
      by: CALLER,
      outcome: { result: 'DONE', details: { released: 2 } },
    });
    expect(switched()).toEqual([]);
  });
});

describe('a stage in one region', () => {
  it('has no region commands: the routes say so', async () => {
    const answer = await answerRegions(undefined, CALLER, {
      method: 'POST',
      path: '/regions/demote/preview',
      query: {},
      body: {},
    });
    expect(answer).toMatchObject({ status: 404, body: { refusal: { message: /runs in one region/ } } });
    expect(
      await answerRegions(undefined, CALLER, { method: 'GET', path: '/proposals', query: {}, body: undefined }),
    ).toBe(undefined);
  });
});
