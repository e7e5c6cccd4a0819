/**
 * The caller of an operator API request, as AWS verified it (docs/operations.md "Who acts: verified identities"):
 * every route of the API requires IAM authorization, so API Gateway checked the request's SigV4 signature before the
 * function runs and names the caller in the request context — `userArn`, e.g.
 * `arn:aws:sts::<account>:assumed-role/<role>/<session>`. Nothing the caller writes in the request names them. The
 * person four eyes compares is the Identity Center user for its roles, else the role itself (personOfIamArn).
 */
import type { APIGatewayEventIdentity } from 'aws-lambda';
import { personOfIamArn, type VerifiedIdentity } from '../domain/identity.ts';

/** The verified caller, or undefined when the request reached the function without one (never with IAM auth on). */
export function iamIdentityOf(
  identity: Pick<APIGatewayEventIdentity, 'userArn'> | undefined,
): VerifiedIdentity | undefined {
  const arn = identity?.userArn;
  if (typeof arn !== 'string') return undefined;
  const person = personOfIamArn(arn);
  return person === undefined ? undefined : { principal: arn, verifiedBy: 'AWS_IAM', person };
}
