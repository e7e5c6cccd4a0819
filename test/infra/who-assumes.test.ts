/**
 * Who may read seven years of evidence, and who may break glass: the roles a stage names, not "the account". The
 * trust policies of the evidence-reader and break-glass roles, read from the synthesized templates and evaluated as
 * STS evaluates them (test/support/policy-eval.ts): a named role may assume, an AdministratorAccess holder may not;
 * break glass needs a source identity naming the person; every assumption of either role is reported. And the
 * settings a real stage cannot leave out, or fill with a pattern that names the whole account.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import example from '../../examples/settings.example.json' with { type: 'json' };
import { parseSettings } from '../../lib/settings.ts';
import { cloudTrailEvent, matchesPattern } from '../support/event-pattern.ts';
import { allows, type Principal, type Request } from '../support/policy-eval.ts';
import { PRODUCTION_LIKE, readTemplate } from '../support/synth.ts';
import production from './fixtures/settings.production.json' with { type: 'json' };

const NOW = Date.parse('2026-12-02T00:00:00Z');

function read(file: string) {
  const { one, all, statementsOf, resolve } = readTemplate(file);
  const trust = (prefix: string) => statementsOf(one('AWS::IAM::Role', prefix)[1].Properties.AssumeRolePolicyDocument);
  const roleArn = (prefix: string) => `arn:${one('AWS::IAM::Role', prefix)[0]}`;
  const rules = all
    .filter(([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('ProtectionWatch'))
    .map(([, r]) => ({ name: String(r.Properties.Name), pattern: resolve(r.Properties.EventPattern) as never }));
  return {
    reader: { trust: trust('EvidenceReaderRole'), arn: roleArn('EvidenceReaderRole') },
    breakGlass: { trust: trust('EvidenceBreakGlassRole'), arn: roleArn('EvidenceBreakGlassRole') },
    reportedBy: (event: Record<string, unknown>) =>
      rules.filter((r) => matchesPattern(r.pattern, event)).map((r) => r.name),
  };
}

/** A session of `roleArn` asking STS to assume a role, with a source identity or none. */
const assume = (roleArn: string, action: string, sourceIdentity?: string): Request => {
  const account = /:iam::(\d{12}):/.exec(roleArn)?.[1];
  const principal: Principal = { arn: roleArn, ...(account === undefined ? {} : { account }) };
  return {
    principal,
    action,
    resource: '*',
    context: { 'aws:PrincipalArn': roleArn, 'sts:SourceIdentity': sourceIdentity },
  };
};

const SSO = 'arn:aws:iam::210987654321:role/aws-reserved/sso.amazonaws.com/ap-northeast-1';

describe("a bank's production settings", () => {
  const s = read(PRODUCTION_LIKE);
  const dispute = `${SSO}/AWSReservedSSO_NotifierDisputes_0123456789abcdef`;
  const admin = `${SSO}/AWSReservedSSO_AdministratorAccess_fedcba9876543210`;
  const responder = production.breakGlassPrincipals[0] as string;

  it('only the named readers assume the evidence-reader role: an AdministratorAccess holder of the account does not', () => {
    expect(allows(s.reader.trust, assume(dispute, 'sts:AssumeRole'))).toBe(true);
    expect(allows(s.reader.trust, assume(admin, 'sts:AssumeRole'))).toBe(false);
    expect(allows(s.reader.trust, assume('arn:aws:iam::210987654321:role/Admin', 'sts:AssumeRole'))).toBe(false);
    expect(allows(s.reader.trust, assume(responder, 'sts:AssumeRole'))).toBe(false);
    // A reader whose sign-in carries a source identity (SAML, Identity Center) keeps it through the assumption.
    expect(allows(s.reader.trust, assume(dispute, 'sts:SetSourceIdentity', 'k.tanaka'))).toBe(true);
  });

  it('only the named responders break glass, and only with a source identity naming the person behind the role', () => {
    expect(allows(s.breakGlass.trust, assume(responder, 'sts:AssumeRole', 'k.tanaka'))).toBe(true);
    expect(allows(s.breakGlass.trust, assume(responder, 'sts:SetSourceIdentity', 'k.tanaka'))).toBe(true);
    expect(allows(s.breakGlass.trust, assume(responder, 'sts:AssumeRole'))).toBe(false);
    expect(allows(s.breakGlass.trust, assume(admin, 'sts:AssumeRole', 'k.tanaka'))).toBe(false);
    expect(allows(s.breakGlass.trust, assume(dispute, 'sts:AssumeRole', 'k.tanaka'))).toBe(false);
    // The responders live in the security account: the trust names that account, and the role by its ARN.
    const roots = s.breakGlass.trust.flatMap((st) => [(st.Principal as { AWS: unknown }).AWS].flat());
    expect(roots).toEqual(['arn:aws:iam::410987654321:root']);
  });

  it('a role named by a pattern ends where the pattern does: the path and the account are literal', () => {
    for (const other of [
      'arn:aws:iam::210987654321:role/AWSReservedSSO_NotifierDisputes_0123456789abcdef',
      'arn:aws:iam::999999999999:role/aws-reserved/sso.amazonaws.com/ap-northeast-1/AWSReservedSSO_NotifierDisputes_x',
      `${SSO}/AWSReservedSSO_NotifierDisputesAdmins_0123`,
    ]) {
      expect(allows(s.reader.trust, assume(other, 'sts:AssumeRole')), other).toBe(false);
    }
  });

  it('every assumption of the reader and of break glass is reported, a refused one too', () => {
    const assumed = (roleArn: string, extra: Record<string, unknown> = {}) =>
      cloudTrailEvent('sts', 'AssumeRole', { roleArn, roleSessionName: 'dispute-4711', ...extra });
    expect(s.reportedBy(assumed(s.reader.arn))).toEqual(['notifier-prod-protection-readers']);
    expect(s.reportedBy(assumed(s.breakGlass.arn, { sourceIdentity: 'k.tanaka' }))).toEqual([
      'notifier-prod-protection-breakglass',
    ]);
    expect(s.reportedBy(assumed('arn:aws:iam::210987654321:role/other-team'))).toEqual([]);
  });
});

describe('the settings', () => {
  const parse = (overrides: Record<string, unknown>) =>
    parseSettings((k) => ({ ...production, ...overrides })[k as 'stage'], NOW);

  it('a real stage names its evidence readers and break-glass principals; the example stage may trust the account', () => {
    expect(() => parse({ evidenceReaders: undefined })).toThrow(
      /"evidenceReaders" is required outside the example stage: it names the IAM roles that may decrypt the evidence/,
    );
    expect(() => parse({ breakGlassPrincipals: undefined })).toThrow(
      /"breakGlassPrincipals" is required outside the example stage/,
    );
    const sandbox = parseSettings(
      (k) => ({ ...example, evidenceReaders: undefined, breakGlassPrincipals: undefined })[k as 'stage'],
      NOW,
    );
    expect(sandbox.evidenceReaders).toBeUndefined();
  });

  it('an example stage that names nobody trusts the account, as before, and the synth says so', () => {
    const { evidenceReaders: _r, breakGlassPrincipals: _b, ...unnamed } = example;
    const file = join(mkdtempSync(join(tmpdir(), 'notifier-')), 'sandbox.json');
    writeFileSync(file, JSON.stringify(unnamed));
    const { one, statementsOf, stack } = readTemplate(file);
    const trust = statementsOf(one('AWS::IAM::Role', 'EvidenceReaderRole')[1].Properties.AssumeRolePolicyDocument);
    expect(allows(trust, assume('arn:aws:iam::123456789012:role/Admin', 'sts:AssumeRole'))).toBe(true);
    const warning = Match.stringLikeRegexp(
      'No evidenceReaders or breakGlassPrincipals: the evidence-reader and break-glass roles trust the account',
    );
    expect(Annotations.fromStack(stack).findWarning('*', warning)).toHaveLength(1);
  });

  it('IAM role ARNs only, a * at the end of the name at most: never the account, a user, or a wildcard that names everyone', () => {
    for (const bad of [
      'arn:aws:iam::210987654321:root',
      'arn:aws:iam::210987654321:user/k.tanaka',
      'arn:aws:iam::210987654321:role/*',
      'arn:aws:iam::*:role/disputes',
      'arn:aws:iam::210987654321:role/*/disputes',
      'arn:aws:iam::210987654321:role/dis*putes',
      '*',
    ]) {
      expect(() => parse({ evidenceReaders: [bad] }), bad).toThrow(
        /"evidenceReaders.0" is invalid: must be IAM role ARNs/,
      );
    }
    expect(parse({ evidenceReaders: 'arn:aws:iam::210987654321:role/disputes' }).evidenceReaders).toEqual([
      'arn:aws:iam::210987654321:role/disputes',
    ]);
  });
});
