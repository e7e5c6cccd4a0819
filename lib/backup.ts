/**
 * AWS Backup of the table (settings `backup`): preferences and suppressions never expire, and point-in-time recovery
 * keeps 35 days in this account only. Every day the table is backed up into a vault of this stack — under its own
 * key and a compliance-mode Vault Lock whose minimum is the retention and maximum a day more, so nobody (root
 * included, once the grace period has passed) deletes a recovery point early or keeps one for long after — and each recovery point is
 * copied to a vault of another account. The vault also denies deleting recovery points and changing their lifecycle.
 *
 * The vault's key is guarded like the stack's others (lib/evidence-key.ts): the account administers it without using
 * it — only AWS Backup (and DynamoDB, for the table it backs up) use it for the account's principals —, grants only
 * for AWS services, and its deletion, disabling and policy are break glass's or a deploy's alone, each watched
 * (lib/protection-watch.ts, which adds those denies).
 *
 * Prerequisites in the account (docs/deploy.md "Backup"): AWS Backup's advanced features for DynamoDB (needed for
 * cross-account copies), and a destination vault whose access policy lets this account copy into it.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { BackupPlan, BackupPlanRule, BackupResource, BackupVault } from 'aws-cdk-lib/aws-backup';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { administrationWithoutUse, grantsOnlyForAwsServices } from './evidence-key.ts';
import type { BackupSettings } from './settings-protection.ts';

export interface TableBackupProps {
  readonly prefix: string;
  readonly table: ITable;
  readonly settings: BackupSettings;
}

export class TableBackup extends Construct {
  readonly vault: BackupVault;
  readonly plan: BackupPlan;
  /** The recovery points' key: guarded and watched like the evidence key (lib/protection-watch.ts). */
  readonly key: Key;

  constructor(scope: Construct, id: string, props: TableBackupProps) {
    super(scope, id);
    const s = props.settings;
    const retention = Duration.days(s.retentionDays);
    const region = Stack.of(this).region;
    const key = new Key(this, 'VaultKey', {
      description: `${props.prefix}: encrypts the table's recovery points in the backup vault`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      policy: new PolicyDocument({
        statements: [
          administrationWithoutUse(),
          // AWS Backup backs up, copies and restores with the key for the account's principals (its service role:
          // DescribeKey, a grant for itself); nobody decrypts a recovery point directly.
          new PolicyStatement({
            sid: 'UseThroughAwsBackupOnly',
            principals: [new AccountRootPrincipal()],
            actions: [
              'kms:Encrypt',
              'kms:Decrypt',
              'kms:ReEncrypt*',
              'kms:GenerateDataKey*',
              'kms:DescribeKey',
              'kms:CreateGrant',
            ],
            resources: ['*'],
            conditions: {
              StringEquals: {
                'kms:ViaService': [`backup.${region}.amazonaws.com`, `dynamodb.${region}.amazonaws.com`],
              },
            },
          }),
          new PolicyStatement({
            sid: 'BackupRoleGrantsForAwsBackup',
            principals: [new AccountRootPrincipal()],
            actions: ['kms:CreateGrant'],
            resources: ['*'],
            conditions: { Bool: { 'kms:GrantIsForAWSResource': 'true' } },
          }),
          grantsOnlyForAwsServices(),
        ],
      }),
    });
    this.key = key;
    this.vault = new BackupVault(this, 'Vault', {
      backupVaultName: `${props.prefix}-table`,
      encryptionKey: key,
      removalPolicy: RemovalPolicy.RETAIN,
      // Deny backup:DeleteRecoveryPoint and UpdateRecoveryPointLifecycle to every principal.
      blockRecoveryPointDeletion: true,
      lockConfiguration: {
        minRetention: retention,
        // AWS Backup wants the maximum above the minimum: a day's slack, never a recovery point kept for months.
        maxRetention: Duration.days(s.retentionDays + 1),
        changeableFor: Duration.days(s.lockChangeableDays),
      },
    });
    const copyTo = BackupVault.fromBackupVaultArn(this, 'CopyVault', s.copyToVaultArn);
    this.plan = new BackupPlan(this, 'Plan', {
      backupPlanName: `${props.prefix}-table`,
      backupPlanRules: [
        new BackupPlanRule({
          ruleName: 'daily',
          backupVault: this.vault,
          // 03:00 UTC: the table is on demand; a backup takes no capacity from sending.
          scheduleExpression: Schedule.cron({ hour: '3', minute: '0' }),
          deleteAfter: retention,
          copyActions: [
            { destinationBackupVault: copyTo, deleteAfter: Duration.days(s.copyRetentionDays ?? s.retentionDays) },
          ],
        }),
      ],
    });
    // Backup only: restores are deliberate operator actions with their own role (docs/operations.md).
    const selection = this.plan.addSelection('Table', {
      resources: [BackupResource.fromDynamoDbTable(props.table)],
      allowRestores: false,
    });
    Validations.of(selection).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
      reason:
        "AWS Backup's service-role policy, on a role only backup.amazonaws.com may assume, used by this plan's one selection (the table): AWS keeps it in step with what Backup does for each resource type, including cross-account copies.",
    });
  }
}
