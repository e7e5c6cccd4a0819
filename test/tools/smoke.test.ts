/**
 * `npm run smoke` against mocked CloudFormation, Lambda and DynamoDB clients: through MSK it asks the smoke producer
 * for one record and follows it by the producer's answer; --direct sends what the MSK mapping would deliver and what
 * ingest accepts; each way the pipeline can end — down to the providers' delivery feedback — maps to its exit code.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { STACK_OUTPUT_NAMES } from '../../lib/stack-outputs.ts';
import {
  EXIT,
  parseSmokeArgs,
  runSmoke,
  SES_SIMULATOR_SUCCESS,
  SMOKE_TOPIC,
  type SmokeOptions,
  UsageError,
} from '../../tools/ops/smoke.ts';
import { readStackOutputs, StackOutputsError } from '../../tools/ops/stack-outputs.ts';

const cloudFormation = new CloudFormationClient({});
const lambda = new LambdaClient({});
const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const cfnMock = mockClient(cloudFormation);
const lambdaMock = mockClient(lambda);
const ddbMock = mockClient(documentClient);

const outputs = Object.fromEntries(STACK_OUTPUT_NAMES.map((n) => [n, `value-of-${n}`]));
outputs.Stage = 'prod';
outputs.TableName = 'notifier-prod-table';
outputs.IngestFunctionName = 'notifier-prod-ingest';
outputs.MskClusterArn = 'arn:aws:kafka:ap-northeast-1:123456789012:cluster/bank-events/11111111-2222-3333-4444-5';
outputs.SmokeProducerFunctionName = 'notifier-prod-smoke';

const OPTIONS: SmokeOptions = {
  stackName: 'notifier-prod',
  email: SES_SIMULATOR_SUCCESS,
  timeoutMs: 30_000,
  pollMs: 1000,
};
/** The fallback: ingest invoked with the event as the mapping would deliver it. */
const DIRECT: SmokeOptions = { ...OPTIONS, direct: true };
/** What the smoke producer answers: the event it wrote and where Kafka put it. */
const PRODUCED = { eventId: 'smoke-20261130T091500Z-ab12cd34', topic: 'banking.transfers', partition: 3, offset: 1207 };

/** What the trail step answers (tools/ops/trail-check.ts has tests of its own): a trail, or none. */
const TRAIL = { ok: true, lines: ['trail arn:aws:cloudtrail:us-east-1:123456789012:trail/org: logging'] };
const NO_TRAIL = { ok: false, lines: ['no CloudTrail trail covers ap-northeast-1', 'no logging trail records …'] };

/** A clock that only the smoke check's own sleeps advance: no real waiting, no timing in the test. */
function harness(trail: { ok: boolean; lines: string[] } = TRAIL) {
  let now = Date.parse('2026-11-30T09:15:00Z');
  const lines: string[] = [];
  return {
    lines,
    deps: {
      cloudFormation,
      lambda,
      documentClient,
      now: () => now,
      sleep: async (ms: number) => {
        now += ms;
      },
      print: (line: string) => lines.push(line),
      checkTrail: async () => trail,
    },
  };
}

const inbox = { pk: 'EVENT#x', sk: 'INBOX' };
const email = (status: string, extra: Record<string, unknown> = {}) => ({
  pk: 'EVENT#x',
  sk: 'NOTIFICATION#EMAIL',
  channel: 'EMAIL',
  status,
  attempt: 1,
  ...extra,
});

beforeEach(() => {
  cfnMock.reset();
  lambdaMock.reset();
  ddbMock.reset();
  cfnMock.on(DescribeStacksCommand).resolves({
    Stacks: [
      {
        StackName: 'notifier-prod',
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: new Date(),
        Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      },
    ],
  });
  lambdaMock.on(InvokeCommand).resolves({ StatusCode: 200, Payload: new Uint8Array() as never });
  lambdaMock
    .on(InvokeCommand, { FunctionName: 'notifier-prod-smoke' })
    .resolves({ StatusCode: 200, Payload: Buffer.from(JSON.stringify(PRODUCED)) as never });
  ddbMock.on(GetCommand).resolves({});
});

const delivered = { deliveryStatus: 'DELIVERED' };

describe('npm run smoke, through MSK', () => {
  it('asks the smoke producer for one record with the contacts, and follows the event it names', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [inbox, email('SENT', { providerMessageId: 'ses-1', ...delivered })] });
    const { deps, lines } = harness();
    expect(await runSmoke({ ...OPTIONS, phone: '+819012345678' }, deps)).toBe(EXIT.SENT);
    const calls = lambdaMock.commandCalls(InvokeCommand).map((c) => c.args[0].input);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ FunctionName: 'notifier-prod-smoke', InvocationType: 'RequestResponse' });
    expect(JSON.parse(Buffer.from(calls[0]?.Payload as Uint8Array).toString('utf8'))).toEqual({
      email: SES_SIMULATOR_SUCCESS,
      phone: '+819012345678',
    });
    expect(ddbMock.commandCalls(QueryCommand)[0]?.args[0].input.ExpressionAttributeValues).toEqual({
      ':pk': `EVENT#${PRODUCED.eventId}`,
    });
    expect(lines.join('\n')).toMatch(
      /produced smoke-20261130T091500Z-ab12cd34 to banking.transfers partition 3 offset 1207/,
    );
  });

  it('looks for a quarantine item at the position Kafka gave the record', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    ddbMock.on(GetCommand).resolves({ Item: { reason: 'SCHEMA_VIOLATION', detail: 'recipient.userId' } });
    const { deps } = harness();
    expect(await runSmoke(OPTIONS, deps)).toBe(EXIT.NOT_RECORDED);
    const key = ddbMock.commandCalls(GetCommand)[0]?.args[0].input.Key as { pk: string };
    expect(key.pk).toBe('QUARANTINE#banking.transfers#3#1207');
  });

  it('exits 3 when the producer cannot write to the topic (brokers unreachable, IAM), showing its error', async () => {
    lambdaMock.on(InvokeCommand, { FunctionName: 'notifier-prod-smoke' }).resolves({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: Buffer.from('{"errorType":"KafkaJSConnectionError","errorMessage":"Connection timeout"}') as never,
    });
    const { deps, lines } = harness();
    expect(await runSmoke(OPTIONS, deps)).toBe(EXIT.NOT_RECORDED);
    expect(lines.join('\n')).toMatch(/could not write to the topic \(Unhandled\): .*Connection timeout/);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('exits 4 with the refusal when the producer will not send to a contact point (not the simulator, not in smokeContacts)', async () => {
    const refusal = 'phone +819099999999: not a smoke contact. The smoke check sends a bank notice, unreviewed';
    lambdaMock.on(InvokeCommand, { FunctionName: 'notifier-prod-smoke' }).resolves({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: Buffer.from(JSON.stringify({ errorType: 'SmokeRequestError', errorMessage: refusal })) as never,
    });
    const { deps, lines } = harness();
    expect(await runSmoke({ ...OPTIONS, phone: '+819099999999' }, deps)).toBe(EXIT.SETUP);
    expect(lines.join('\n')).toMatch(
      /cannot start: the smoke producer refused: phone \+819099999999: not a smoke contact/,
    );
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('exits 4, pointing at --direct, when the stack has no smoke producer', async () => {
    cfnMock.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'notifier-prod',
          StackStatus: 'UPDATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: Object.entries(outputs)
            .filter(([k]) => k !== 'SmokeProducerFunctionName')
            .map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
        },
      ],
    });
    const { deps, lines } = harness();
    expect(await runSmoke(OPTIONS, deps)).toBe(EXIT.SETUP);
    expect(lines.join('\n')).toMatch(/no smoke producer .*Use --direct/);
    expect(lambdaMock.commandCalls(InvokeCommand)).toHaveLength(0);
  });

  it('waits past SENT for the delivery feedback: DELAYED is not an answer, DELIVERED is', async () => {
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [inbox, email('SENT')] })
      .resolvesOnce({ Items: [inbox, email('SENT', { deliveryStatus: 'DELAYED' })] })
      .resolves({ Items: [inbox, email('SENT', delivered)] });
    const { deps, lines } = harness();
    expect(await runSmoke(OPTIONS, deps)).toBe(EXIT.SENT);
    const story = lines.join('\n');
    expect(story).toMatch(/waiting for the providers' delivery feedback/);
    expect(story).toMatch(/EMAIL delivery: DELAYED[\s\S]*EMAIL delivery: DELIVERED[\s\S]*delivered .*exit 0/);
  });

  it('exits 1 when the provider reports a SENT message not delivered, with its words', async () => {
    const sms = { pk: 'EVENT#x', sk: 'NOTIFICATION#SMS', channel: 'SMS', attempt: 1, status: 'SENT' };
    ddbMock.on(QueryCommand).resolves({
      Items: [
        inbox,
        email('SENT', delivered),
        { ...sms, deliveryStatus: 'FAILED', deliveryResponse: 'Phone number is opted out' },
      ],
    });
    const { deps, lines } = harness();
    expect(await runSmoke({ ...OPTIONS, phone: '+819012345678' }, deps)).toBe(EXIT.NOT_SENT);
    expect(lines.join('\n')).toMatch(
      /SMS delivery: FAILED .*Phone number is opted out[\s\S]*SMS FAILED after SENT \(exit 1\)/,
    );
  });

  it('exits 5 when everything was SENT but no delivery feedback came in time', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [inbox, email('SENT')] });
    const { deps, lines } = harness();
    expect(await runSmoke({ ...OPTIONS, timeoutMs: 5000 }, deps)).toBe(EXIT.NO_FEEDBACK);
    expect(lines.join('\n')).toMatch(/SENT, but no delivery feedback for EMAIL after 5\.0 s \(exit 5\)/);
  });
});

describe('npm run smoke, the trail the protection watch reads', () => {
  it('exits 6 when everything was sent and delivered but no trail feeds the protection watch: a blind watch does not pass', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [inbox, email('SENT', { providerMessageId: 'ses-1', ...delivered })] });
    const { deps, lines } = harness(NO_TRAIL);
    expect(await runSmoke(OPTIONS, deps)).toBe(EXIT.NO_TRAIL);
    expect(lines.join('\n')).toMatch(/trail: no CloudTrail trail covers ap-northeast-1[\s\S]*exit 6/);
    expect(await runSmoke(OPTIONS, harness(TRAIL).deps)).toBe(EXIT.SENT);
  });

  it("a failure of the pipeline keeps its own exit code, and the trail's verdict is printed after it", async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [inbox, email('FAILED', { lastError: 'MessageRejected' })] });
    const { deps, lines } = harness(NO_TRAIL);
    expect(await runSmoke(OPTIONS, deps)).toBe(EXIT.NOT_SENT);
    expect(lines.at(-2)).toBe('trail: no CloudTrail trail covers ap-northeast-1');
  });
});

describe('npm run smoke --direct (the fallback)', () => {
  it('invokes ingest with one real-shaped MSK event that the event contract accepts', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [inbox, email('SENT', { providerMessageId: 'ses-1', ...delivered })] });
    const { deps } = harness();
    await runSmoke(DIRECT, deps);

    const call = lambdaMock.commandCalls(InvokeCommand)[0]?.args[0].input;
    expect(call).toMatchObject({ FunctionName: 'notifier-prod-ingest', InvocationType: 'RequestResponse' });
    const event = JSON.parse(Buffer.from(call?.Payload as Uint8Array).toString('utf8')) as MSKEvent;
    expect(event).toMatchObject({ eventSource: 'aws:kafka', eventSourceArn: outputs.MskClusterArn });
    const records = event.records[`${SMOKE_TOPIC}-0`];
    expect(records).toHaveLength(1);
    const decoded = decodeRecordValue(records?.[0]?.value, 65_536);
    expect(decoded.ok).toBe(true);
    if (!isTransfer(decoded)) return;
    expect(decoded.event.eventId).toMatch(/^smoke-20261130T091500Z-[a-z0-9]+$/);
    expect(decoded.event.channels).toEqual(['EMAIL']);
    expect(decoded.event.recipient.email).toBe(SES_SIMULATOR_SUCCESS);

    const query = ddbMock.commandCalls(QueryCommand)[0]?.args[0].input;
    expect(query).toMatchObject({
      TableName: 'notifier-prod-table',
      ExpressionAttributeValues: { ':pk': `EVENT#${decoded.event.eventId}` },
      ConsistentRead: true,
    });
  });

  it('follows the notification to SENT and exits 0, printing each state it saw', async () => {
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [] })
      .resolvesOnce({ Items: [inbox, email('PENDING', { attempt: 0 })] })
      .resolvesOnce({ Items: [inbox, email('SENDING')] })
      .resolves({ Items: [inbox, email('SENT', { providerMessageId: 'ses-1', ...delivered })] });
    const { deps, lines } = harness();
    expect(await runSmoke(DIRECT, deps)).toBe(EXIT.SENT);
    const story = lines.join('\n');
    expect(story).toMatch(/inbox recorded/);
    expect(story).toMatch(/EMAIL PENDING/);
    expect(story).toMatch(/EMAIL SENDING/);
    expect(story).toMatch(/EMAIL SENT .*providerMessageId ses-1/);
    expect(story).toMatch(/every notification SENT and delivered.*exit 0/);
  });

  it('adds SMS and PUSH for a number and an endpoint of the operator, and waits for every channel', async () => {
    const sms = { pk: 'EVENT#x', sk: 'NOTIFICATION#SMS', channel: 'SMS', attempt: 1 };
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [inbox, email('SENT', delivered), { ...sms, status: 'SENDING' }] })
      .resolves({ Items: [inbox, email('SENT', delivered), { ...sms, status: 'SENT', ...delivered }] });
    const { deps, lines } = harness();
    const options = { ...DIRECT, phone: '+819012345678', pushEndpointArn: undefined };
    expect(await runSmoke(options, deps)).toBe(EXIT.SENT);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(2);
    expect(lines.join('\n')).toMatch(/EMAIL, SMS/);

    const payload = lambdaMock.commandCalls(InvokeCommand)[0]?.args[0].input.Payload as Uint8Array;
    const record = (JSON.parse(Buffer.from(payload).toString('utf8')) as MSKEvent).records[`${SMOKE_TOPIC}-0`]?.[0];
    const decoded = decodeRecordValue(record?.value, 65_536);
    expect(isTransfer(decoded) && decoded.event.channels).toEqual(['EMAIL', 'SMS']);
    expect(isTransfer(decoded) && decoded.event.recipient.phoneNumber).toBe('+819012345678');
  });

  it('exits 1 when the notification ends FAILED, and says why', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [inbox, email('FAILED', { lastError: 'MessageRejected' })] });
    const { deps, lines } = harness();
    expect(await runSmoke(DIRECT, deps)).toBe(EXIT.NOT_SENT);
    expect(lines.join('\n')).toMatch(/lastError MessageRejected[\s\S]*EMAIL FAILED \(exit 1\)/);
  });

  it('exits 2 when the notification is still PENDING at the timeout', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [inbox, email('PENDING', { attempt: 0 })] });
    const { deps, lines } = harness();
    expect(await runSmoke({ ...DIRECT, timeoutMs: 5000 }, deps)).toBe(EXIT.TIMEOUT);
    expect(lines.join('\n')).toMatch(/timed out after 5\.0 s with EMAIL PENDING \(exit 2\)/);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(6);
  });

  it('exits 3 when ingest fails, showing the function error', async () => {
    lambdaMock.on(InvokeCommand).resolves({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: Buffer.from('{"errorType":"TransientStoreError"}') as never,
    });
    const { deps, lines } = harness();
    expect(await runSmoke(DIRECT, deps)).toBe(EXIT.NOT_RECORDED);
    expect(lines.join('\n')).toMatch(/failed \(Unhandled\): \{"errorType":"TransientStoreError"\}/);
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('exits 3 when the event was quarantined, naming the reason', async () => {
    ddbMock.on(QueryCommand).resolves({ Items: [] });
    ddbMock.on(GetCommand).resolves({ Item: { reason: 'INVALID_CONTACT', detail: 'recipient.email' } });
    const { deps, lines } = harness();
    expect(await runSmoke(DIRECT, deps)).toBe(EXIT.NOT_RECORDED);
    expect(lines.join('\n')).toMatch(/quarantined: INVALID_CONTACT \(recipient.email\)/);
    const key = ddbMock.commandCalls(GetCommand)[0]?.args[0].input.Key as { pk: string };
    expect(key.pk).toMatch(new RegExp(`^QUARANTINE#${SMOKE_TOPIC.replace('.', '\\.')}#0#\\d+$`));
  });

  it('exits 4 when the stack does not exist, before invoking anything', async () => {
    cfnMock
      .on(DescribeStacksCommand)
      .rejects(Object.assign(new Error('Stack with id notifier-prod does not exist'), { name: 'ValidationError' }));
    const { deps, lines } = harness();
    expect(await runSmoke(OPTIONS, deps)).toBe(EXIT.SETUP);
    expect(lines.join('\n')).toMatch(/stack "notifier-prod" not found/);
    expect(lambdaMock.commandCalls(InvokeCommand)).toHaveLength(0);
  });
});

describe('stack outputs', () => {
  it('reads every output by name', async () => {
    const read = await readStackOutputs(cloudFormation, 'notifier-prod');
    expect(read.TableName).toBe('notifier-prod-table');
    expect(Object.keys(read).sort()).toEqual([...STACK_OUTPUT_NAMES, 'SmokeProducerFunctionName'].sort());
  });

  it('names the outputs an older stack lacks', async () => {
    cfnMock.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'notifier-prod',
          StackStatus: 'UPDATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: [{ OutputKey: 'TableName', OutputValue: 't' }],
        },
      ],
    });
    await expect(readStackOutputs(cloudFormation, 'notifier-prod')).rejects.toThrow(StackOutputsError);
    await expect(readStackOutputs(cloudFormation, 'notifier-prod')).rejects.toThrow(
      /lacks the outputs Stage, IngestFunctionName/,
    );
  });
});

describe('arguments', () => {
  it('takes a stage or a stack, defaults to the SES mailbox simulator and three minutes', () => {
    expect(parseSmokeArgs(['--stage', 'prod'])).toEqual({
      stackName: 'notifier-prod',
      email: SES_SIMULATOR_SUCCESS,
      timeoutMs: 180_000,
      pollMs: 1000,
    });
    expect(parseSmokeArgs(['--stack', 'custom', '--email', 'me@bank.example', '--timeout', '60'])).toMatchObject({
      stackName: 'custom',
      email: 'me@bank.example',
      timeoutMs: 60_000,
    });
  });

  it('refuses what it cannot use', () => {
    expect(() => parseSmokeArgs([])).toThrow(UsageError);
    expect(() => parseSmokeArgs(['--stage', 'a', '--stack', 'b'])).toThrow(/either --stage or --stack/);
    expect(() => parseSmokeArgs(['--stage', 'a', '--timeout', 'soon'])).toThrow(/--timeout/);
    expect(() => parseSmokeArgs(['--stage', 'a', '--email', 'nobody'])).toThrow(/--email/);
    expect(() => parseSmokeArgs(['--stage', 'a', '--verbose'])).toThrow(UsageError);
    expect(parseSmokeArgs(['--stage', 'a', '--direct'])).toMatchObject({ direct: true });
    expect(() => parseSmokeArgs(['--stage', 'a', '--phone', '090-1234-5678'])).toThrow(/--phone/);
    expect(() => parseSmokeArgs(['--stage', 'a', '--push', 'arn:aws:sns:ap-northeast-1:123456789012:topic'])).toThrow(
      /--push/,
    );
    expect(
      parseSmokeArgs([
        '--stage',
        'a',
        '--phone',
        '+819012345678',
        '--push',
        'arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/0f9c',
      ]),
    ).toMatchObject({ phone: '+819012345678', pushEndpointArn: expect.stringContaining(':endpoint/APNS/') });
  });
});
