/**
 * The support console in the stack, on a bank's production settings: private (only the bank's VPC endpoints may
 * call it), every data route behind the Cognito authorizer and only the page's static files open, the page's app
 * client without a secret or the scope that lets a person change their own groups, and least privilege — the page
 * function reads nothing, the API function reaches evidence only as the evidence-reader role. Without the `console`
 * setting, none of it is deployed.
 */
import { describe, expect, it } from 'vitest';
import { API_ROUTES, PAGE_ROUTES } from '../../functions/contracts/console-routes.ts';
import { allows, denies, type Statement } from '../support/policy-eval.ts';
import { EXAMPLE_ONE_REGION, PRODUCTION_LIKE, readTemplate, type TemplateResource } from '../support/synth.ts';
import production from './fixtures/settings.production.json' with { type: 'json' };

const t = readTemplate(PRODUCTION_LIKE);
const of = (type: string) => t.all.filter(([, r]) => r.Type === type);
const pathOf = (resourceId: string): string => {
  const r = t.template.Resources[resourceId] as TemplateResource;
  const parent = r.Properties.ParentId as { Ref?: string } | unknown;
  const part = String(r.Properties.PathPart);
  const up = typeof parent === 'object' && parent !== null && 'Ref' in parent ? String(parent.Ref) : undefined;
  return up === undefined ? `/${part}` : `${pathOf(up)}/${part}`;
};
// The console's own API's methods (the stack has the operator API too).
const methods = of('AWS::ApiGateway::Method')
  .filter(([, m]) => JSON.stringify(m.Properties.RestApiId).includes('SupportConsoleApi'))
  .map(([, m]) => ({
    route: `${m.Properties.HttpMethod} ${pathOf((m.Properties.ResourceId as { Ref: string }).Ref)}`,
    auth: m.Properties.AuthorizationType,
  }));
const statementsOfRole = (roleId: string): Statement[] =>
  of('AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
    .flatMap(([, p]) => t.statementsOf(p.Properties.PolicyDocument));
const roleOf = (fnPrefix: string) => {
  const [, fn] = t.one('AWS::Lambda::Function', fnPrefix);
  return (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] as string;
};
const actionsOf = (statements: Statement[]) => statements.flatMap((s) => [s.Action].flat() as string[]).sort();

describe('the support console', () => {
  it('is private: an endpoint of type PRIVATE whose resource policy refuses any source but the bank VPC endpoints', () => {
    const [, api] = t.one('AWS::ApiGateway::RestApi', 'SupportConsoleApi');
    expect(api.Properties.EndpointConfiguration).toEqual({ Types: ['PRIVATE'] });
    const policy = t.statementsOf(api.Properties.Policy);
    const invoke = (vpce: string | undefined) => ({
      principal: { arn: 'arn:aws:iam::999999999999:role/anyone', account: '999999999999' },
      action: 'execute-api:Invoke',
      resource: 'execute-api:/console/POST/console/api/customer',
      context: { 'aws:SourceVpce': vpce },
    });
    const [bankEndpoint] = production.console.vpcEndpointIds;
    expect(allows(policy, invoke(bankEndpoint))).toBe(true);
    expect(denies(policy, invoke('vpce-0fffffffffffffff0'))).toBe(true);
    expect(denies(policy, invoke(undefined))).toBe(true);
  });

  it('every API route needs the Cognito authorizer; only the page files are served before sign-in', () => {
    const open = methods.filter((m) => m.auth === 'NONE').map((m) => m.route);
    const cognito = methods.filter((m) => m.auth === 'COGNITO_USER_POOLS').map((m) => m.route);
    expect(open.sort()).toEqual(PAGE_ROUTES.map((r) => `${r.method} ${r.resource}`).sort());
    expect(cognito.sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.resource}`).sort());
    expect(methods).toHaveLength(PAGE_ROUTES.length + API_ROUTES.length);
  });

  it("signs in with the bank's SAML provider only: no secret, the code flow, no scope that edits one's own groups", () => {
    const [, client] = t.one('AWS::Cognito::UserPoolClient', 'SupportConsolePageClient');
    expect(client.Properties.GenerateSecret).toBe(false);
    expect(client.Properties.AllowedOAuthFlows).toEqual(['code']);
    expect(client.Properties.AllowedOAuthScopes).not.toContain('aws.cognito.signin.user.admin');
    expect(client.Properties.SupportedIdentityProviders).toEqual([
      { Ref: expect.stringMatching(/SupportConsoleBank/) },
    ]);
    const [, pool] = t.one('AWS::Cognito::UserPool', 'SupportConsoleUsers');
    expect(pool.Properties.AdminCreateUserConfig).toEqual({ AllowAdminCreateUserOnly: true });
    const [, saml] = t.one('AWS::Cognito::UserPoolIdentityProvider', 'SupportConsoleBank');
    expect(saml.Properties.ProviderType).toBe('SAML');
    expect(saml.Properties.AttributeMapping).toMatchObject({
      'custom:groups': production.console.saml.groupsAttribute,
    });
  });

  it('least privilege: the page function reads nothing; the API function reads evidence only as the evidence reader and writes audit records only, as itself', () => {
    const page = actionsOf(statementsOfRole(roleOf('SupportConsolePageFunction')));
    expect(page.filter((a) => !a.startsWith('xray:') && !a.startsWith('logs:'))).toEqual([]);
    const api = statementsOfRole(roleOf('SupportConsoleApiFunction'));
    expect(actionsOf(api).filter((a) => !a.startsWith('xray:') && !a.startsWith('logs:'))).toEqual(
      [
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:Query',
        // The evidence index's own table, read only (test/infra/evidence-index.test.ts).
        'dynamodb:Query',
        // The evidence spool's own table, read only: a minute's records before the sweeper rolls them.
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        // The table's key (the bank's own): the evidence key lets only the evidence reader decrypt.
        'kms:Decrypt',
        'kms:GenerateDataKey',
        // The evidence key: its audit records, written (encrypted) once as its own role, under audit/ only.
        'kms:GenerateDataKey',
        's3:PutObject',
        's3:PutObjectRetention',
        // The audit seal's key: it seals the records it writes.
        'kms:GenerateMac',
        'kms:VerifyMac',
        'sts:AssumeRole',
      ].sort(),
    );
    expect(JSON.stringify(api.filter((st) => JSON.stringify(st.Action).includes('kms:Decrypt')))).toContain(
      production.kmsKeyArn,
    );
    const [sealKey] = t.one('AWS::KMS::Key', 'EvidenceAuditSealKey');
    expect(api.find((st) => JSON.stringify(st.Action).includes('kms:GenerateMac'))?.Resource).toBe(`arn:${sealKey}`);
    const [bucketId] = t.one('AWS::S3::Bucket', 'EvidenceBucket');
    expect(api.find((st) => JSON.stringify(st.Action).includes('s3:PutObject'))?.Resource).toBe(
      `arn:${bucketId}/audit/*`,
    );
    const assume = api.find((s) => s.Action === 'sts:AssumeRole');
    const [readerId] = t.one('AWS::IAM::Role', 'EvidenceReaderRole');
    expect(assume?.Resource).toBe(`arn:${readerId}`);
    // …and the reader role trusts it.
    const [, reader] = t.one('AWS::IAM::Role', 'EvidenceReaderRole');
    expect(JSON.stringify(t.resolve(reader.Properties.AssumeRolePolicyDocument))).toContain(
      `arn:${roleOf('SupportConsoleApiFunction')}`,
    );
  });

  it('is not deployed without the console setting', () => {
    const example = readTemplate(EXAMPLE_ONE_REGION);
    expect(
      example.all.filter(([id, r]) => id.startsWith('SupportConsole') || r.Type.startsWith('AWS::Cognito::')),
    ).toEqual([]);
  });
});
