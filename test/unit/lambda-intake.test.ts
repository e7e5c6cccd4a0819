/**
 * A region's ingest mapping as promote and demote switch it on a deployed stage: one UpdateEventSourceMapping on the
 * mapping the stack named, Enabled as asked, with the state Lambda answered; a failure is reported with the command
 * that does it by hand, never thrown — the fence has moved by then, and the operator must read both.
 */
import { LambdaClient, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { lambdaIntake } from '../../functions/operator-api/lambda-intake.ts';

const lambda = mockClient(LambdaClient);
const MAPPING = '0b8f6c2e-1a2b-4c3d-8e9f-001122334455';
const intake = () => lambdaIntake(() => new LambdaClient({ region: 'ap-northeast-3' }), 'ap-northeast-3', MAPPING);

beforeEach(() => lambda.reset());

describe('the ingest mapping switch', () => {
  it('promote enables exactly the mapping the stack named, and reports the state Lambda answered', async () => {
    lambda.on(UpdateEventSourceMappingCommand).resolves({ UUID: MAPPING, State: 'Enabling' });
    expect(await intake().enable()).toEqual({ mapping: MAPPING, enabled: true, state: 'Enabling' });
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand).map((c) => c.args[0].input)).toEqual([
      { UUID: MAPPING, Enabled: true },
    ]);
  });

  it('demote disables it', async () => {
    lambda.on(UpdateEventSourceMappingCommand).resolves({ UUID: MAPPING, State: 'Disabling' });
    expect(await intake().disable()).toEqual({ mapping: MAPPING, enabled: false, state: 'Disabling' });
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand)[0]?.args[0].input).toEqual({
      UUID: MAPPING,
      Enabled: false,
    });
  });

  it('a switch Lambda refuses is reported with its cause and the command that does it by hand, not thrown', async () => {
    const denied = Object.assign(new Error('not authorized to perform: lambda:UpdateEventSourceMapping'), {
      name: 'AccessDeniedException',
    });
    lambda.on(UpdateEventSourceMappingCommand).rejects(denied);
    const report = await intake().enable();
    expect(report).toMatchObject({ mapping: MAPPING, enabled: true });
    expect(report.state).toBeUndefined();
    expect(report.failed?.error).toBe(
      'AccessDeniedException: not authorized to perform: lambda:UpdateEventSourceMapping',
    );
    expect(report.failed?.doByHand).toMatch(
      `aws lambda update-event-source-mapping --region ap-northeast-3 --uuid ${MAPPING} --enabled`,
    );
    expect(report.failed?.doByHand).toMatch(/shows Enabled$/);
  });
});
