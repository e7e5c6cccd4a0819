/**
 * `ops promote`, `demote` and `reconcile` on a deployed stage act through the operator API of the region they act in:
 * the stack named (`--stack`, `--stage`) tells both regions, the request is signed with the operator's credentials
 * (SigV4, execute-api), and that region's operator function acts and audits it. Here the operator APIs are stood in
 * by the operator function's own routes on DynamoDB Local (test/support/two-region-operators.ts), reached through the
 * command line's fetch; CloudFormation and Lambda are mocked. The tests run in order, as the runbook does: a failover
 * through the recovery stack alone, a reconcile refused before the demotion, the demotion of the primary through its
 * own API (run again until quiet), the reconcile; and what is said when a mapping cannot be switched or API Gateway
 * stops waiting.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { LambdaClient, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { answerRegions } from '../../functions/operator/region-routes.ts';
import { regionsMain } from '../../tools/ops/regions.ts';
import { CALLER, MAPPING, PRIMARY, RECOVERY, type TwoRegions, twoRegions } from '../support/two-region-operators.ts';

const cfn = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
let stage: TwoRegions;

const API: Record<string, string> = {
  [PRIMARY]: `https://pri0api1.execute-api.${PRIMARY}.amazonaws.com/ops/`,
  [RECOVERY]: `https://rec0api3.execute-api.${RECOVERY}.amazonaws.com/ops/`,
};
/** A stack of stage "x" as CloudFormation describes it. */
const stackOf = (kind: 'primary' | 'recovery') => {
  const [own, peer] = kind === 'primary' ? [PRIMARY, RECOVERY] : [RECOVERY, PRIMARY];
  const outputs = {
    TableName: 'notifier-x-notifications',
    RegionName: own,
    RegionKind: kind,
    FenceTableName: `notifier-x${kind === 'primary' ? '' : '-recovery'}-fence`,
    FenceShards: '4',
    SweepShards: '8',
    PeerRegionName: peer,
    PeerStackName: kind === 'primary' ? 'notifier-x-recovery' : 'notifier-x',
    PeerFenceTableName: `notifier-x${kind === 'primary' ? '-recovery' : ''}-fence`,
    OperatorApiUrl: API[own],
  };
  const Outputs = Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
  return {
    Stacks: [
      {
        StackName: String(outputs.PeerStackName),
        StackStatus: 'UPDATE_COMPLETE' as const,
        Outputs,
        CreationTime: new Date(),
      },
    ],
  };
};

/** What reached the operator APIs: each request's region, route and signature. */
let asked: { region: string; path: string; authorization: string }[] = [];
/** Which step API Gateway stops waiting on (29 s), if any. */
let gatewayTimesOut: 'preview' | 'confirm' | false = false;
let primaryLost = false;

/** The operator APIs of both regions: API Gateway's part (a signed request, the stage path) and the function's routes. */
const operatorApis: typeof fetch = async (input, init) => {
  const url = new URL(String(input));
  const region = url.hostname.split('.')[2] as string;
  const headers = init?.headers as Record<string, string>;
  asked.push({ region, path: url.pathname, authorization: headers.authorization ?? '' });
  if (gatewayTimesOut !== false && url.pathname.endsWith(`/${gatewayTimesOut}`))
    return new Response(JSON.stringify({ message: 'Endpoint request timed out' }), { status: 504 });
  const operator = stage.operator(region, { otherLost: region === RECOVERY && primaryLost });
  const body = JSON.parse(String(init?.body));
  const path = url.pathname.replace(/^\/ops/, '');
  const answer = await answerRegions(operator, CALLER, { method: String(init?.method), path, query: {}, body });
  return new Response(JSON.stringify(answer?.body), { status: answer?.status ?? 404 });
};

// biome-ignore lint/suspicious/noExplicitAny: the command prints each command's own report
async function ops(argv: string[]): Promise<{ code: number; out: Record<string, any> }> {
  let out = '';
  const code = await regionsMain(argv, (t) => (out += t), stage.clock, { fetch: operatorApis });
  return { code, out: JSON.parse(out) };
}
const failover = ['promote', '--to', RECOVERY, '--old-region-unreachable', '--from-epoch', '1'];
const recoveryStack = ['--stack', 'notifier-x-recovery'];
const confirm = (reason: string) => ['--reason', reason, '--confirm'];
const stacksRead = () => cfn.commandCalls(DescribeStacksCommand).map((c) => c.args[0].input.StackName);

beforeAll(async () => {
  stage = await twoRegions(inject('dynamoEndpoint'));
});
beforeEach(() => {
  asked = [];
  gatewayTimesOut = false;
  cfn.reset();
  cfn.on(DescribeStacksCommand, { StackName: 'notifier-x' }).resolves(stackOf('primary'));
  cfn.on(DescribeStacksCommand, { StackName: 'notifier-x-recovery' }).resolves(stackOf('recovery'));
  lambda.reset();
  lambda.on(UpdateEventSourceMappingCommand).resolves({ State: 'Enabling' });
});

describe('a failover on a deployed stage, through the recovery region’s stack alone', () => {
  it('without --confirm: asks the recovery region’s operator API, signed, shows its plan and moves nothing (exit 3)', async () => {
    primaryLost = true;
    const { code, out } = await ops([...failover, ...recoveryStack]);
    expect(code).toBe(3);
    expect(out.stage).toEqual({ stack: 'notifier-x-recovery', primary: PRIMARY, recovery: RECOVERY, actsIn: RECOVERY });
    expect(out).toMatchObject({
      wouldDo: { fences: { [RECOVERY]: { state: 'FENCED', epoch: 0 } } },
      toAct: expect.any(String),
    });
    expect((out.wouldDo as { fences: Record<string, object> }).fences[PRIMARY]).toHaveProperty('unreachable');
    expect(asked).toEqual([
      {
        region: RECOVERY,
        path: '/ops/regions/promote/preview',
        authorization: expect.stringMatching(
          /^AWS4-HMAC-SHA256 Credential=test\/\d{8}\/ap-northeast-3\/execute-api\/aws4_request/,
        ),
      },
    ]);
    expect(await stage.fence(RECOVERY).control(true)).toMatchObject({ state: 'FENCED', epoch: 0 });
  });

  it('confirmed: promoted by that region’s operator function, its mapping switched on; the primary’s stack never read (exit 0)', async () => {
    const { code, out } = await ops([...failover, ...recoveryStack, ...confirm('INC-9 primary lost')]);
    expect(code).toBe(0);
    expect(out.outcome).toMatchObject({
      epoch: 2,
      held: 1,
      unknown: 1,
      intake: { mapping: MAPPING[RECOVERY], enabled: true },
    });
    expect(stacksRead()).toEqual(['notifier-x-recovery']);
    expect(new Set(asked.map((a) => a.region))).toEqual(new Set([RECOVERY]));
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand)[0]?.args[0].input).toEqual({
      UUID: MAPPING[RECOVERY],
      Enabled: true,
    });
    const records = await stage.audit.list();
    expect(records.find((r) => r.reason === 'INC-9 primary lost')).toMatchObject({
      by: CALLER,
      outcome: { result: 'DONE' },
    });
    primaryLost = false;
  });
});

describe('when the old region is back', () => {
  it('reconcile before the demotion is refused by the active region’s operator, as its preview says (exit 3)', async () => {
    const { code, out } = await ops(['reconcile', '--from', PRIMARY, ...recoveryStack, ...confirm('too soon')]);
    expect(code).toBe(3);
    expect(out.refused).toMatchObject({ code: 'NOT_DEMOTED' });
    expect(new Set(asked.map((a) => a.region))).toEqual(new Set([RECOVERY]));
  });

  it('demote of the primary, named through the recovery stack, goes to the primary’s own API and runs again until quiet (exit 0)', async () => {
    lambda.on(UpdateEventSourceMappingCommand).resolves({ State: 'Disabling' });
    const { code, out } = await ops([
      'demote',
      '--region',
      PRIMARY,
      ...recoveryStack,
      ...confirm('INC-9 primary back'),
    ]);
    expect(code).toBe(0);
    expect(stacksRead()).toEqual(['notifier-x-recovery', 'notifier-x']);
    expect(new Set(asked.map((a) => a.region))).toEqual(new Set([PRIMARY]));
    expect(out.runs).toBeGreaterThan(1);
    expect(out.outcome).toMatchObject({ region: PRIMARY, quiescentAt: expect.any(Number), intake: { enabled: false } });
    expect(await stage.fence(PRIMARY).control(true)).toMatchObject({
      state: 'FENCED',
      quiescentAt: out.outcome.quiescentAt,
    });
  });

  it('reconcile then settles in the active region: what the old region never took is released (exit 0)', async () => {
    const { code, out } = await ops(['reconcile', '--from', PRIMARY, ...recoveryStack, ...confirm('INC-9 reconcile')]);
    expect(code).toBe(0);
    expect(out.outcome).toMatchObject({ from: PRIMARY, to: RECOVERY, released: 2, waiting: 0 });
    expect(out.runs).toBe(2);
  });

  it('a mapping that could not be switched is said first, with what to do by hand, and exits 1', async () => {
    lambda
      .on(UpdateEventSourceMappingCommand)
      .rejects(Object.assign(new Error('throttled'), { name: 'TooManyRequestsException' }));
    const { code, out } = await ops(['demote', '--region', PRIMARY, '--stage', 'x', ...confirm('INC-9 check')]);
    expect(code).toBe(1);
    expect(out.attention).toMatch(
      `the ingest mapping ${MAPPING[PRIMARY]} was not switched off (TooManyRequestsException: throttled): aws lambda update-event-source-mapping --region ${PRIMARY} --uuid ${MAPPING[PRIMARY]} --no-enabled`,
    );
  });

  it('API Gateway that stops waiting is said as such: the command may still run, and is run again (exit 1)', async () => {
    gatewayTimesOut = 'confirm';
    const { code, out } = await ops(['reconcile', '--from', PRIMARY, ...recoveryStack, ...confirm('INC-9 again')]);
    expect(code).toBe(1);
    expect(out.unknown).toMatch(/answered 504.*may still be acting.*run the same command again/);
  });

  it('a preview API Gateway stopped waiting for says that nothing was done, not that something may still be acting', async () => {
    gatewayTimesOut = 'preview';
    const { code, out } = await ops(['reconcile', '--from', PRIMARY, ...recoveryStack, ...confirm('INC-9 slow')]);
    expect(code).toBe(1);
    expect(out.unknown).toMatch(/answered 504.*the preview, which reads only: nothing was done/);
    expect(out.unknown).not.toMatch(/may still be acting/);
  });

  it('--confirm without --reason says the reason is missing (exit 2), and nothing is asked of the operator API', async () => {
    await expect(ops(['demote', '--region', PRIMARY, '--stage', 'x', '--confirm'])).rejects.toThrow(
      /demote --confirm needs --reason/,
    );
    expect(asked).toEqual([]);
  });
});
