/**
 * The key audit records are sealed with (functions/stores/audit-seal.ts): a KMS HMAC key of the stack. The operator
 * and console functions — the only writers of `audit/` (lib/evidence-store.ts) — generate a record's MAC and verify
 * one; the evidence reader (`ops audit` on a stage) only verifies. Its policy names each use and gives the account
 * administration without use, as the evidence key does; records cite it for as long as they are kept, so only break
 * glass disables or deletes it, and only break glass or a deploy changes its policy (watched: lib/protection-watch.ts).
 */
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { ArnPrincipal, PolicyDocument, PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import {
  administrationWithoutUse,
  deployRoleArn,
  grantsOnlyForAwsServices,
  onlyBreakGlassDisablesOrDeletes,
  onlyBreakGlassOrDeployChangesThePolicy,
} from './evidence-key.ts';

export function createAuditSealKey(scope: Construct, reader: Role, breakGlass: Role): Key {
  return new Key(scope, 'AuditSealKey', {
    keySpec: KeySpec.HMAC_256,
    keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
    description: 'notifier: the seal (HMAC) of every operator audit record',
    removalPolicy: RemovalPolicy.RETAIN,
    policy: new PolicyDocument({
      statements: [
        administrationWithoutUse(),
        new PolicyStatement({
          sid: 'EvidenceReaderVerifiesSeals',
          principals: [new ArnPrincipal(reader.roleArn)],
          actions: ['kms:VerifyMac'],
          resources: ['*'],
        }),
        onlyBreakGlassDisablesOrDeletes([breakGlass.roleArn]),
        // As the evidence key's: an administrator cannot give themselves kms:GenerateMac and seal a forged record.
        onlyBreakGlassOrDeployChangesThePolicy(
          ['kms:PutKeyPolicy'],
          [breakGlass.roleArn],
          deployRoleArn(Stack.of(scope)),
        ),
        grantsOnlyForAwsServices(),
      ],
    }),
  });
}

/** A writer of audit records: generates and verifies seals, named in the key policy and in its own. */
export function grantSealing(key: Key, role: Role, sid: string): void {
  const actions = ['kms:GenerateMac', 'kms:VerifyMac'];
  role.addToPrincipalPolicy(new PolicyStatement({ actions, resources: [key.keyArn] }));
  key.addToResourcePolicy(
    new PolicyStatement({ sid, principals: [new ArnPrincipal(role.roleArn)], actions, resources: ['*'] }),
  );
}
