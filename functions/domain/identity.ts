/**
 * Who acts on the system, as something other than the actor vouched for it (docs/operations.md "Who acts: verified
 * identities"). An operator's action is recorded with the identity its transport verified — never a name the caller
 * typed: an AWS-signed request (API Gateway's IAM authorization gives the caller's ARN), the bank's identity provider
 * (a token the console's authorizer checked), or, on a developer's machine, the login of the local run's user. Pure.
 */

/** How an identity was established. */
export const IDENTITY_SOURCES = [
  /** A SigV4-signed request AWS authenticated: the principal is the caller's ARN as API Gateway reports it. */
  'AWS_IAM',
  /** A token of the bank's identity provider, checked by the authorizer in front of the console. */
  'IDENTITY_PROVIDER',
  /** The local run's own user (the operating system's login): a developer's machine, where nothing else vouches. */
  'LOCAL_USER',
] as const;
export type IdentitySource = (typeof IDENTITY_SOURCES)[number];

/** A caller as its transport verified it: who, and how that is known. */
export interface VerifiedIdentity {
  /**
   * Who, as the verifier names it: an IAM ARN (`arn:aws:sts::<account>:assumed-role/<role>/<session>`), the identity
   * provider's subject, the local login. Four eyes compares this (with the source), never a display name.
   */
  readonly principal: string;
  readonly verifiedBy: IdentitySource;
  /**
   * The person behind the credential, lower-cased: what four eyes compares, across surfaces and sessions (personOf*
   * below). Absent only on identities recorded before people were compared; those compare by principal and source.
   */
  readonly person?: string;
  /** What people read beside it (an e-mail address from the token); never compared, never trusted for a decision. */
  readonly display?: string;
}

/**
 * What an audit record says of who acted: a verified identity, or — for a record written before identities were
 * verified — the name the caller gave, marked as such, never mistaken for a verified one.
 */
export type RecordedIdentity =
  | VerifiedIdentity
  | {
      readonly principal: string;
      readonly verifiedBy: 'UNVERIFIED';
      readonly person?: undefined;
      readonly display?: string;
    };

/**
 * Whether two identities are the same person: the same person key, whichever surface or session verified each — so
 * one person cannot propose through the operator API and approve in the console, or approve from a second session —
 * or, for an identity recorded without one, the same principal established the same way.
 */
export const sameIdentity = (a: RecordedIdentity, b: RecordedIdentity): boolean =>
  (a.person !== undefined && a.person === b.person) || (a.principal === b.principal && a.verifiedBy === b.verifiedBy);

/** A person key: trimmed and lower-cased (an e-mail address or a directory user name, as each surface gives it). */
export const personKey = (name: string): string => name.trim().toLowerCase();

/** The role name prefix AWS gives the roles IAM Identity Center creates for a permission set. */
export const IDENTITY_CENTER_ROLE_PREFIX = 'AWSReservedSSO_';

/**
 * The person behind an IAM caller's ARN, or undefined for an ARN that is not a caller's. A role session's name is
 * chosen by whoever assumes the role — except for IAM Identity Center's roles, whose session name AWS sets to the
 * user's Identity Center user name (the stack's API refuses an impostor role of that name outside AWS's reserved
 * path: lib/operator-api.ts). So an Identity Center session is its user; any other role session is its role (every
 * session of one role is one person: it can never approve what another session of it proposed); an IAM user is itself.
 */
export function personOfIamArn(arn: string): string | undefined {
  const assumed = /^arn:aws[a-z-]*:sts::(\d{12}):assumed-role\/([^/]+)\/(.+)$/.exec(arn);
  if (assumed !== null) {
    const [, account, role, session] = assumed as unknown as [string, string, string, string];
    if (role.startsWith(IDENTITY_CENTER_ROLE_PREFIX)) return personKey(session);
    return personKey(`arn:aws:iam::${account}:role/${role}`);
  }
  return /^arn:aws[a-z-]*:iam::\d{12}:(user\/.+|root)$/.test(arn) ? personKey(arn) : undefined;
}

/** One line for people: the principal, how it was verified, and its display name when it has one. */
export const identityText = (i: RecordedIdentity): string =>
  `${i.display === undefined ? '' : `${i.display} `}${i.principal} (${i.verifiedBy})`;

/** A record's `by` as written: an identity, or a bare name from before identities were verified. */
export function recordedIdentityOf(by: unknown): RecordedIdentity {
  if (typeof by === 'object' && by !== null && typeof (by as { principal?: unknown }).principal === 'string') {
    return by as RecordedIdentity;
  }
  return { principal: String(by ?? ''), verifiedBy: 'UNVERIFIED' };
}
