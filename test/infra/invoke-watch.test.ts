/**
 * The doors around the controls, watched: CloudTrail's `Invoke` data events of the operator, console and ingest
 * functions, in the shape CloudTrail records them (an AWS service through the resource policy: `type: AWSService`
 * with `invokedBy`; a role session: `type: AssumedRole` with its session issuer; the function's unqualified ARN in
 * `resources`), matched against the rules as EventBridge matches them.
 */
import { describe, expect, it } from 'vitest';
import { matchesPattern } from '../support/event-pattern.ts';
import { EXAMPLE_ONE_REGION, PRODUCTION_LIKE, readTemplate } from '../support/synth.ts';

type Json = Record<string, unknown>;

function read(file: string) {
  const { stack, resolve, all, one } = readTemplate(file);
  const rules = all
    .filter(([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('ProtectionWatch'))
    .map(([, r]) => ({ name: String(r.Properties.Name), properties: resolve(r.Properties) as Json }));
  return {
    stack,
    one,
    rules,
    reportedBy: (event: Json) =>
      rules
        .filter((r) => matchesPattern(r.properties.EventPattern as Json, event))
        .map((r) => r.name.replace(`${stack.stackName}-protection-`, '')),
  };
}

/** An `Invoke` data event of a function, as EventBridge receives it from the trail. */
const invoke = (functionArn: string, userIdentity: Json): Json => ({
  source: 'aws.lambda',
  'detail-type': 'AWS API Call via CloudTrail',
  detail: {
    eventSource: 'lambda.amazonaws.com',
    eventName: 'Invoke',
    eventCategory: 'Data',
    managementEvent: false,
    readOnly: false,
    userIdentity,
    requestParameters: null,
    resources: [{ accountId: '123456789012', type: 'AWS::Lambda::Function', ARN: functionArn }],
  },
});
const service = (invokedBy: string): Json => ({ type: 'AWSService', invokedBy });
const session = (roleArn: string): Json => ({
  type: 'AssumedRole',
  arn: `${roleArn.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/')}/someone`,
  sessionContext: { sessionIssuer: { type: 'Role', arn: roleArn } },
});

describe.each([
  ['the example settings', EXAMPLE_ONE_REGION],
  ["a bank's production settings", PRODUCTION_LIKE],
])('direct invokes of the operator, console and ingest functions, %s', (_name, file) => {
  const s = read(file);
  const arn = (type: string, prefix: string) => `arn:${s.one(type, prefix)[0]}`;
  const operator = arn('AWS::Lambda::Function', 'Operator');
  // The console is deployed where the settings describe it (the production-like settings; not the example's).
  const consoleFn = s.rules.some((r) => r.name.endsWith('-protection-consoleinvoke'))
    ? arn('AWS::Lambda::Function', 'SupportConsoleApiFunction')
    : undefined;
  const ingest = arn('AWS::Lambda::Function', 'Ingest');
  const operatorRole = arn('AWS::IAM::Role', 'OperatorRole');
  const ingestRole = arn('AWS::IAM::Role', 'IngestRole');
  const admin = session(`arn:aws:iam::${s.stack.account}:role/Admin`);

  it('the console API function is watched wherever the console is deployed', () => {
    expect(consoleFn !== undefined).toBe(file === PRODUCTION_LIKE);
  });

  it('API Gateway invoking the operator or console function is expected; anyone else invoking them is reported', () => {
    expect(s.reportedBy(invoke(operator, service('apigateway.amazonaws.com')))).toEqual([]);
    if (consoleFn !== undefined)
      expect(s.reportedBy(invoke(consoleFn, service('apigateway.amazonaws.com')))).toEqual([]);
    for (const who of [
      admin,
      session(operatorRole),
      { type: 'IAMUser', arn: `arn:aws:iam::${s.stack.account}:user/ops` },
      { type: 'Root', arn: `arn:aws:iam::${s.stack.account}:root` },
      service('events.amazonaws.com'),
    ]) {
      expect(s.reportedBy(invoke(operator, who)), JSON.stringify(who)).toEqual(['operatorinvoke']);
      expect(s.reportedBy(invoke(`${operator}:live`, who)), JSON.stringify(who)).toEqual(['operatorinvoke']);
      if (consoleFn !== undefined)
        expect(s.reportedBy(invoke(consoleFn, who)), JSON.stringify(who)).toEqual(['consoleinvoke']);
    }
  });

  it('the MSK mapping and an operator replay invoking ingest are expected; a person, break glass or another service is reported', () => {
    expect(s.reportedBy(invoke(ingest, service('lambda.amazonaws.com')))).toEqual([]);
    expect(s.reportedBy(invoke(ingest, session(ingestRole)))).toEqual([]);
    expect(s.reportedBy(invoke(ingest, session(operatorRole)))).toEqual([]);
    for (const who of [
      admin,
      session(arn('AWS::IAM::Role', 'EvidenceBreakGlassRole')),
      service('apigateway.amazonaws.com'),
      { type: 'IAMUser', arn: `arn:aws:iam::${s.stack.account}:user/ops` },
    ]) {
      expect(s.reportedBy(invoke(ingest, who)), JSON.stringify(who)).toEqual(['ingestinvoke']);
    }
  });

  it('a function URL call, a streamed or an async invoke of the operator function by a person is reported like an Invoke', () => {
    for (const eventName of ['InvokeFunctionUrl', 'InvokeWithResponseStream', 'InvokeAsync']) {
      const call = invoke(operator, admin);
      (call.detail as Json).eventName = eventName;
      expect(s.reportedBy(call), eventName).toEqual(['operatorinvoke']);
      const byApi = invoke(operator, service('apigateway.amazonaws.com'));
      (byApi.detail as Json).eventName = eventName;
      expect(s.reportedBy(byApi), eventName).toEqual([]);
    }
  });

  it("the operator function's code, configuration, permissions and function URL, the anchor of these rules, are watched like the senders'", () => {
    const name = `ref:${s.one('AWS::Lambda::Function', 'Operator')[0]}`;
    for (const eventName of [
      'AddPermission20150331v2',
      'UpdateFunctionCode20150331v2',
      'UpdateFunctionConfiguration20150331v2',
      'CreateFunctionUrlConfig20211031',
    ]) {
      const change = invoke(operator, admin);
      Object.assign(change.detail as Json, {
        eventName,
        eventCategory: 'Management',
        managementEvent: true,
        requestParameters: { functionName: name },
        resources: undefined,
      });
      expect(s.reportedBy(JSON.parse(JSON.stringify(change))), eventName).toEqual(['functions']);
    }
    // A stream or queue mapping pointed at it: Lambda's invoke is not API Gateway's, so it is reported when it runs.
    expect(s.reportedBy(invoke(operator, service('lambda.amazonaws.com')))).toEqual(['operatorinvoke']);
  });

  it("another team's function invoked by anyone, and a management call on ours, reach none of these rules", () => {
    const other = `arn:aws:lambda:${s.stack.region}:${s.stack.account}:function:payments-nightly`;
    expect(s.reportedBy(invoke(other, admin))).toEqual([]);
    const get = invoke(operator, admin);
    (get.detail as Json).eventName = 'GetFunction20150331v2';
    expect(s.reportedBy(get).filter((r) => r.endsWith('invoke'))).toEqual([]);
  });

  it('each report goes to the alarm topic as one line naming the function and the caller, with the dead-letter queue behind it', () => {
    const [topicId] = s.one('AWS::SNS::Topic', 'ObservabilityAlarmTopic');
    const [queueId] = s.one('AWS::SQS::Queue', 'ProtectionWatchDeadLetters');
    for (const name of ['operatorinvoke', 'ingestinvoke', ...(consoleFn === undefined ? [] : ['consoleinvoke'])]) {
      const rule = s.rules.find((r) => r.name.endsWith(`-protection-${name}`));
      const [target] = (rule?.properties.Targets ?? []) as Json[];
      expect(target?.Arn, name).toBe(`ref:${topicId}`);
      expect(target?.DeadLetterConfig).toEqual({ Arn: `arn:${queueId}` });
      const transformer = target?.InputTransformer as { InputPathsMap: Json; InputTemplate: string };
      expect(transformer.InputPathsMap).toMatchObject({
        'detail-userIdentity-arn': '$.detail.userIdentity.arn',
        'detail-userIdentity-invokedBy': '$.detail.userIdentity.invokedBy',
      });
      expect(transformer.InputTemplate).toMatch(/invoked directly by <detail-userIdentity-arn>/);
    }
  });
});
