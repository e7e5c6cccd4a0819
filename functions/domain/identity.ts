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
  /** What people read beside it (an e-mail address from the token); never compared, never trusted for a decision. */
  readonly display?: string;
}

/**
 * What an audit record says of who acted: a verified identity, or — for a record written before identities were
 * verified — the name the caller gave, marked as such, never mistaken for a verified one.
 */
export type RecordedIdentity =
  | VerifiedIdentity
  | { readonly principal: string; readonly verifiedBy: 'UNVERIFIED'; readonly display?: string };

/** Whether two identities are the same caller: the same principal established the same way. */
export const sameIdentity = (a: RecordedIdentity, b: RecordedIdentity): boolean =>
  a.principal === b.principal && a.verifiedBy === b.verifiedBy;

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
