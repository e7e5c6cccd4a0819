/**
 * The caller of an operator API request, as AWS verified it (docs/operations.md "Who acts: verified identities"):
 * every route of the API requires IAM authorization, so API Gateway checked the request's SigV4 signature before the
 * function runs and names the caller in the request context — `userArn`, e.g.
 * `arn:aws:sts::<account>:assumed-role/<role>/<session>`. Nothing the caller writes in the request names them.
 */
import type { APIGatewayEventIdentity } from 'aws-lambda';
import type { VerifiedIdentity } from '../domain/identity.ts';

/** The verified caller, or undefined when the request reached the function without one (never with IAM auth on). */
export function iamIdentityOf(
  identity: Pick<APIGatewayEventIdentity, 'userArn'> | undefined,
): VerifiedIdentity | undefined {
  const arn = identity?.userArn;
  if (typeof arn !== 'string' || !arn.startsWith('arn:')) return undefined;
  return { principal: arn, verifiedBy: 'AWS_IAM' };
}
