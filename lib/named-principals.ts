/**
 * Who may assume the evidence-reader and the break-glass role: the IAM roles a stage's settings name
 * (`evidenceReaders`, `breakGlassPrincipals`), not "the account", under which any principal whose IAM policy allows
 * sts:AssumeRole (an AdministratorAccess holder does) could decrypt seven years of evidence or break glass.
 *
 * The trust policy names each account as its principal and the roles by `aws:PrincipalArn` (ArnLike), not the role
 * ARNs as principals:
 * - a role ARN as principal must exist when the policy is written (IAM refuses the deploy otherwise: a stage could
 *   not name a responder role its security account creates later), and IAM pins it to the role's unique id (a role
 *   re-created under its name is silently untrusted) — a pin that protects little, since whoever may change a named
 *   role's trust can become it either way;
 * - a pattern (an IAM Identity Center role's name ends in a suffix AWS chooses) is allowed in a condition, never in a
 *   principal.
 * The cost of naming the account: a named role's own IAM policy must also allow sts:AssumeRole on the role.
 * A source identity is what the caller (or its identity provider) says: it names the person, it does not prove them.
 *
 * Break glass also requires a source identity (`sts:SourceIdentity`, which the trust policy must allow the caller to
 * set: `sts:SetSourceIdentity`), so the person behind a shared role is in CloudTrail on the assumption and on every
 * call of the session. The reader may set one (a session that already carries one, from a SAML or Identity Center
 * sign-in, could not assume a role that does not allow it) but need not: `npm run ops` assumes it from a profile.
 */
import {
  AccountPrincipal,
  AccountRootPrincipal,
  type Conditions,
  type IPrincipal,
  type PolicyDocument,
  PolicyStatement,
  PrincipalBase,
  PrincipalPolicyFragment,
} from 'aws-cdk-lib/aws-iam';
import { ROLE_PATTERN } from './settings-protection.ts';

/** The actions a named role's assumption needs: the assumption, and setting the person's source identity on it. */
export const ASSUME_ACTIONS = ['sts:AssumeRole', 'sts:SetSourceIdentity'] as const;

/** The roles the patterns name, in the accounts they are in: a trust policy's principal with its conditions. */
class NamedRoles extends PrincipalBase {
  private readonly accounts: string[];
  private readonly conditions: Conditions;

  constructor(
    private readonly patterns: readonly string[],
    requireSourceIdentity: boolean,
  ) {
    super();
    this.accounts = [...new Set(patterns.map((p) => ROLE_PATTERN.exec(p)?.[1] ?? ''))].filter((a) => a !== '');
    this.conditions = {
      ArnLike: { 'aws:PrincipalArn': [...patterns] },
      // A missing key never matches StringLike: an assumption without a source identity is refused.
      ...(requireSourceIdentity ? { StringLike: { 'sts:SourceIdentity': '*' } } : {}),
    };
  }

  get policyFragment(): PrincipalPolicyFragment {
    const roots = this.accounts.flatMap((a) => new AccountPrincipal(a).policyFragment.principalJson.AWS ?? []);
    return new PrincipalPolicyFragment({ AWS: roots }, this.conditions);
  }

  override addToAssumeRolePolicy(document: PolicyDocument): void {
    document.addStatements(
      new PolicyStatement({
        actions: [...ASSUME_ACTIONS],
        principals: this.accounts.map((a) => new AccountPrincipal(a)),
        conditions: this.conditions,
      }),
    );
  }

  dedupeString(): string | undefined {
    return JSON.stringify([this.patterns, this.conditions]);
  }
}

/**
 * The principal a role trusts: the named roles, or, where a stage names none (the example stage alone may), the
 * account as before.
 */
export function assumableBy(patterns: readonly string[] | undefined, requireSourceIdentity: boolean): IPrincipal {
  return patterns === undefined ? new AccountRootPrincipal() : new NamedRoles(patterns, requireSourceIdentity);
}
