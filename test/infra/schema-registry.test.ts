/**
 * The stack takes the schema registry from settings: Glue or Confluent (with basic auth), validated at synth, wired
 * into ingest's environment with read-only IAM, and cdk-nag passes with each kind. The MSK mapping stays as it is:
 * records are decoded in the function.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { SettingsError } from '../../lib/settings.ts';
import { EXAMPLE_ONE_REGION, synthTemplate } from '../support/synth.ts';

const SETTINGS = EXAMPLE_ONE_REGION;
const GLUE = { kind: 'glue', registryArn: 'arn:aws:glue:ap-northeast-1:123456789012:registry/bank-events' };
const CONFLUENT = {
  kind: 'confluent',
  url: 'https://psrc-abc12.ap-northeast-1.aws.confluent.cloud',
  basicAuthSecretArn: 'arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:notifier/schema-registry-AbCdEf',
  basicAuthKmsKeyArn: 'arn:aws:kms:ap-northeast-1:123456789012:key/aaaaaaaa-1111-2222-3333-bbbbbbbbbbbb',
};
const synth = (schemaRegistry?: object) =>
  synthTemplate(SETTINGS, schemaRegistry === undefined ? {} : { schemaRegistry: JSON.stringify(schemaRegistry) });

type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
function ingestOf(s: ReturnType<typeof synth>) {
  const resources = Object.entries(s.template.Resources);
  const fn = resources.find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('Ingest'))?.[1];
  const statements = resources
    .filter(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('IngestRole'))
    .flatMap(([, r]) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const env = (fn?.Properties.Environment as { Variables: Record<string, unknown> } | undefined)?.Variables ?? {};
  const mapping = resources.find(
    ([, r]) => r.Type === 'AWS::Lambda::EventSourceMapping' && 'AmazonManagedKafkaEventSourceConfig' in r.Properties,
  );
  return { env, statements, mapping: mapping?.[1].Properties };
}
const withAction = (statements: Statement[], prefix: string) =>
  statements.filter((st) => [st.Action].flat().some((a) => a.startsWith(prefix)));

describe('the schema registry from settings', () => {
  it('none: no registry variables and no registry permissions', () => {
    const { env, statements } = ingestOf(synth());
    expect(Object.keys(env).filter((k) => k.startsWith('SCHEMA_REGISTRY'))).toEqual([]);
    expect(withAction(statements, 'glue:')).toEqual([]);
  });

  it('Glue: ingest may read schema versions of that registry only', () => {
    const { env, statements, mapping } = ingestOf(synth(GLUE));
    expect(env.SCHEMA_REGISTRY_KIND).toBe('glue');
    expect(withAction(statements, 'glue:')).toEqual([
      {
        Effect: 'Allow',
        Action: 'glue:GetSchemaVersion',
        Resource: [GLUE.registryArn, 'arn:aws:glue:ap-northeast-1:123456789012:schema/bank-events/*'],
      },
    ]);
    // Decoded in the function: the mapping hands ingest the record's own bytes.
    expect(JSON.stringify(mapping)).not.toContain('SchemaRegistryConfig');
  });

  it('Confluent: the URL, the basic-auth secret (read only) and its key (only through Secrets Manager)', () => {
    const { env, statements } = ingestOf(synth(CONFLUENT));
    expect(env).toMatchObject({
      SCHEMA_REGISTRY_KIND: 'confluent',
      SCHEMA_REGISTRY_URL: CONFLUENT.url,
      SCHEMA_REGISTRY_SECRET_ARN: CONFLUENT.basicAuthSecretArn,
    });
    expect(withAction(statements, 'secretsmanager:')).toEqual([
      { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: CONFLUENT.basicAuthSecretArn },
    ]);
    // Besides the secret fields' HMAC key (GenerateMac: test/infra/stack.test.ts).
    expect(withAction(statements, 'kms:').filter((s) => s.Action !== 'kms:GenerateMac')).toEqual([
      {
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: CONFLUENT.basicAuthKmsKeyArn,
        Condition: { StringEquals: { 'kms:ViaService': 'secretsmanager.ap-northeast-1.amazonaws.com' } },
      },
    ]);
  });

  it.each([
    [{ kind: 'confluent', url: 'http://registry.bank.internal' }, /schemaRegistry.url/],
    [
      { kind: 'glue', registryArn: 'arn:aws:glue:us-east-1:123456789012:registry/x' },
      /schemaRegistry.registryArn" must be in the cluster's account and region/,
    ],
    [{ kind: 'glue', registryArn: 'bank-events' }, /schemaRegistry.registryArn/],
    [{ kind: 'kafka-rest', url: 'https://r' }, /schemaRegistry/],
    [{ ...CONFLUENT, basicAuthSecretArn: undefined }, /basicAuthKmsKeyArn" is only used with/],
  ])('refuses %j at synth', (registry, message) => {
    expect(() => synth(registry)).toThrow(SettingsError);
    expect(() => synth(registry)).toThrow(message);
  });

  it.each([
    ['Glue', GLUE],
    ['Confluent', CONFLUENT],
  ])('%s: cdk-nag AwsSolutions and Serverless find nothing unacknowledged', (_, registry) => {
    const { stack } = synth(registry);
    Template.fromStack(stack);
    for (const pack of [new AwsSolutionsChecks(), new ServerlessChecks()]) {
      const report = pack.validateScope(stack);
      expect(report.violations.map((v) => `${v.ruleName}: ${JSON.stringify(v.violatingResources)}`)).toEqual([]);
    }
  });
});
