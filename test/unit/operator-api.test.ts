/**
 * The operator API's function: who acts is what API Gateway's IAM authorization verified (the request context's
 * userArn), never anything the request says; a request without a verified caller reaches nothing.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { iamIdentityOf } from '../../functions/operator-api/iam-identity.ts';

const ARN = 'arn:aws:sts::123456789012:assumed-role/Operators/alice';

describe('the verified caller of an operator API request', () => {
  it('is the ARN API Gateway names after checking the signature; nothing else is a caller', () => {
    expect(iamIdentityOf({ userArn: ARN })).toEqual({
      principal: ARN,
      verifiedBy: 'AWS_IAM',
      person: 'arn:aws:iam::123456789012:role/operators',
    });
    expect(iamIdentityOf({ userArn: null } as never)).toBeUndefined();
    expect(iamIdentityOf({ userArn: 'alice' })).toBeUndefined();
    expect(iamIdentityOf(undefined)).toBeUndefined();
  });

  it('names the person: the Identity Center user its role session carries, else the role (a session name is the caller’s choice)', () => {
    const sso = 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Ops_0a1b/Alice@Bank.example';
    expect(iamIdentityOf({ userArn: sso })?.person).toBe('alice@bank.example');
    expect(iamIdentityOf({ userArn: `${ARN}-2` })?.person).toBe(iamIdentityOf({ userArn: ARN })?.person);
    expect(iamIdentityOf({ userArn: 'arn:aws:iam::123456789012:user/bob' })?.person).toBe(
      'arn:aws:iam::123456789012:user/bob',
    );
    // A federated user's name is whatever its IAM user asked for: no person, no caller.
    expect(iamIdentityOf({ userArn: 'arn:aws:sts::123456789012:federated-user/carol' })).toBeUndefined();
  });
});

describe('the operator function', () => {
  let handler: (e: APIGatewayProxyEvent, c: Context) => Promise<{ statusCode: number; body: string }>;
  const dynamo = mockClient(DynamoDBDocumentClient);
  beforeAll(async () => {
    vi.stubEnv('TABLE_NAME', 'notifier-test');
    vi.stubEnv('EVIDENCE_INDEX_TABLE_NAME', 'notifier-test-evidence-index');
    vi.stubEnv('EVIDENCE_BUCKET', 'notifier-test-evidence');
    vi.stubEnv('EVIDENCE_LOCK_MODE', 'GOVERNANCE');
    vi.stubEnv('EVIDENCE_RETENTION_DAYS', '2557');
    vi.stubEnv('INBOX_RETENTION_DAYS', '35');
    vi.stubEnv('INGEST_FUNCTION_NAME', 'notifier-test-ingest');
    vi.stubEnv('FAILED_BATCHES_BUCKET', 'notifier-test-batches');
    vi.stubEnv('APPROVAL_REQUIRED_FOR', 'OPERATOR_CONTENT,SUPPRESSION_LIFT,ERASE');
    vi.stubEnv('PROPOSAL_HOURS', '24');
    vi.stubEnv('AWS_REGION', 'us-east-1');
    ({ handler } = await import('../../functions/operator-api/index.ts'));
  });
  const context = { functionName: 'operator', awsRequestId: 'r-1' } as Context;
  const request = (identity: Record<string, unknown> | undefined, body?: unknown): APIGatewayProxyEvent =>
    ({
      httpMethod: body === undefined ? 'GET' : 'POST',
      path: '/proposals',
      queryStringParameters: null,
      body: body === undefined ? null : JSON.stringify(body),
      requestContext: { identity },
    }) as unknown as APIGatewayProxyEvent;

  it('refuses a request API Gateway did not attribute to a verified caller, before reading anything', async () => {
    dynamo.reset();
    const answer = await handler(request(undefined), context);
    expect(answer.statusCode).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ ok: false, refusal: { code: 'INVALID' } });
    const forged = await handler(request({ userArn: 'alice', caller: ARN }), context);
    expect(forged.statusCode).toBe(403);
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('answers a verified caller through the operations (the proposals, read from the table)', async () => {
    dynamo.reset();
    dynamo.onAnyCommand().resolves({ Items: [] });
    const answer = await handler(request({ userArn: ARN }), context);
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true, proposals: [] });
    expect(dynamo.calls().length).toBeGreaterThan(0);
  });

  it('on a stage in one region, answers the region commands’ routes that there are none, reading nothing', async () => {
    dynamo.reset();
    const event = { ...request({ userArn: ARN }, { region: 'us-east-1' }), path: '/regions/demote/preview' };
    const answer = await handler(event, context);
    expect(answer.statusCode).toBe(404);
    expect(JSON.parse(answer.body).refusal.message).toMatch(/runs in one region: it has no region commands/);
    expect(dynamo.calls()).toHaveLength(0);
  });
});
