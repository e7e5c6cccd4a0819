/** The CDK app synthesized from a settings file, offline and without bundling, as the infra tests read it. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { createNotifierStack } from '../../lib/notifier-app.ts';
import { resolver, type Statement } from './policy-eval.ts';

/** A real stage's settings (a brand of its own, push applications, the cluster's network, a past cutover). */
export const PRODUCTION_LIKE = 'test/infra/fixtures/settings.production.json';

export type TemplateResource = {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string[];
  DeletionPolicy?: string;
};
export type SynthesizedTemplate = { Resources: Record<string, TemplateResource> };

export function synthTemplate(settingsFile: string, overrides: Record<string, unknown> = {}) {
  const app = new App({ context: { settingsFile, ...overrides, 'aws:cdk:bundling-stacks': [] } });
  const stack = createNotifierStack(app);
  return { template: app.synth().getStackByName(stack.stackName).template as SynthesizedTemplate, stack };
}

/**
 * The synthesized template as the policy tests read it: its resources, one of a type by logical-id prefix, and a
 * policy document's statements with the intrinsic functions resolved (test/support/policy-eval.ts).
 */
export function readTemplate(settingsFile: string, overrides: Record<string, unknown> = {}) {
  const { template, stack } = synthTemplate(settingsFile, overrides);
  const resolve = resolver(stack.account, stack.region);
  const all = Object.entries(template.Resources) as [string, TemplateResource][];
  const one = (type: string, prefix: string) => {
    const found = all.filter(([id, r]) => r.Type === type && id.startsWith(prefix));
    if (found.length !== 1) throw new Error(`${found.length} ${type} named ${prefix}*`);
    return found[0] as [string, TemplateResource];
  };
  const statementsOf = (doc: unknown) => (resolve(doc) as { Statement: Statement[] }).Statement;
  return { template, stack, resolve, all, one, statementsOf };
}

/**
 * The example settings as a stage in one region (without `regions` and `recovery`): the template every one-region
 * test reads, and the snapshot's — a stage in one region builds exactly what it built before two regions existed.
 */
export const EXAMPLE_ONE_REGION = (() => {
  const {
    regions: _r,
    recovery: _v,
    regionCommandPrincipals: _c,
    ...one
  } = JSON.parse(readFileSync('examples/settings.example.json', 'utf8'));
  const path = join(mkdtempSync(join(tmpdir(), 'notifier-settings-')), 'settings.one-region.json');
  writeFileSync(path, JSON.stringify(one));
  return path;
})();

/**
 * A bank's production settings as a stage in two regions: the production fixture without what the recovery region
 * has no counterpart for yet (the registry, the VPC, the console: refused in two regions), with a recovery region,
 * its cluster, push applications and key, and the new global table said in words.
 */
export const PRODUCTION_TWO_REGIONS = (() => {
  const { schemaRegistry: _s, vpc: _v, console: _c, ...one } = JSON.parse(readFileSync(PRODUCTION_LIKE, 'utf8'));
  const two = {
    ...one,
    regions: { primary: 'ap-northeast-1', recovery: 'ap-northeast-3', active: 'ap-northeast-1' },
    recovery: {
      mskClusterArn:
        'arn:aws:kafka:ap-northeast-3:210987654321:cluster/core-events-dr/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d-2',
      pushPlatformApplicationArns: ['arn:aws:sns:ap-northeast-3:210987654321:app/APNS/harbor-mobile'],
      kmsKeyArn: 'arn:aws:kms:ap-northeast-3:210987654321:key/6b7c8d9e-0f1a-4b2c-8d3e-4f5a6b7c8d9e',
    },
    globalTable: 'create',
    regionCommandPrincipals: [
      'arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/*/AWSReservedSSO_DrOperators_*',
    ],
  };
  const path = join(mkdtempSync(join(tmpdir(), 'notifier-settings-')), 'settings.production-two-regions.json');
  writeFileSync(path, JSON.stringify(two));
  return path;
})();
