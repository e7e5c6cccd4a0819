/**
 * The ingest function's part of the stack: MSK → one transaction per event. The function with its environment, what
 * it may do with the table, the schema registry and the MSK mapping with its failed-batch bucket (lib/ingest-source.ts).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { ArnPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { INGEST_ENVIRONMENT, type IngestEnvironment } from '../functions/contracts/environment.ts';
import { SWEEP_SHARD_MARK_KEY } from '../functions/domain/keys.ts';
import { administrationWithoutUse, grantsOnlyForAwsServices, onlyBreakGlassDisablesOrDeletes } from './evidence-key.ts';
import type { FunctionPartProps } from './function-parts.ts';
import { createIngestSource, type IngestSource } from './ingest-source.ts';
import { NotifierFunction } from './notifier-function.ts';
import { schemaRegistryEnvironment, useSchemaRegistry } from './schema-registry.ts';

export interface Ingest {
  readonly fn: NotifierFunction;
  readonly source: IngestSource;
}

export function createIngest(p: FunctionPartProps): Ingest {
  const { stack, settings: s, table } = p;
  // The HMAC key of secret fields (one-time codes): their MAC, never the code, is hashed and kept as evidence
  // (functions/stores/secret-mac.ts). Its material never leaves KMS; retained with the evidence that cites it.
  // Whoever may compute a MAC with it can test candidate codes against the evidence's, so its policy names each use
  // (ingest generates, the evidence reader verifies, below) and gives the account administration without use, as the
  // evidence key does; it proves codes for as long as the evidence lives, so only break glass disables or deletes it.
  const secretMacKey = new Key(stack, 'SecretMacKey', {
    keySpec: KeySpec.HMAC_256,
    keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
    description: 'notifier: the keyed MAC of secret fields (one-time codes) in the payloadHash and the evidence',
    removalPolicy: RemovalPolicy.RETAIN,
    policy: new PolicyDocument({
      statements: [
        administrationWithoutUse(),
        new PolicyStatement({
          sid: 'EvidenceReaderVerifiesMacs',
          principals: [new ArnPrincipal(p.evidence.readerRole.roleArn)],
          actions: ['kms:VerifyMac'],
          resources: ['*'],
        }),
        onlyBreakGlassDisablesOrDeletes([p.evidence.breakGlassRole.roleArn]),
        grantsOnlyForAwsServices(),
      ],
    }),
  });
  const environment: IngestEnvironment = {
    SECRET_MAC_KEY_ID: secretMacKey.keyArn,
    TABLE_NAME: table.tableName,
    INBOX_RETENTION_DAYS: String(s.inboxRetentionDays),
    INGEST_CONCURRENCY: String(INGEST_ENVIRONMENT.INGEST_CONCURRENCY.default),
    MAX_EVENT_AGE_SECONDS: String(s.maxEventAgeSeconds),
    ...p.placementEnv,
    // Avro and Protobuf records: ingest reads their writer schemas from the bank's registry.
    ...schemaRegistryEnvironment(s.schemaRegistry),
  };
  const fn = new NotifierFunction(stack, 'Ingest', {
    entry: 'ingest/index.ts',
    description: 'notifier: each MSK record becomes one DynamoDB transaction (inbox + one notification per channel)',
    metricNamespace: p.metricNamespace,
    timeout: Duration.minutes(2),
    environment,
  });
  useSchemaRegistry(fn, s.schemaRegistry);
  secretMacKey.grant(fn, 'kms:GenerateMac');
  // Named in the key policy too: the account's own statement administers the key and does not delegate its use to IAM.
  secretMacKey.addToResourcePolicy(
    new PolicyStatement({
      sid: 'IngestGeneratesMacs',
      principals: [new ArnPrincipal(fn.role?.roleArn ?? '')],
      actions: ['kms:GenerateMac'],
      resources: ['*'],
    }),
  );
  // TransactWriteItems is authorized per item action: the transaction only puts. BatchGetItem: the look-up of a
  // batch's inbox items before its transactions (a known event costs no write).
  fn.useTable(table, ['dynamodb:PutItem', 'dynamodb:BatchGetItem']);
  // UpdateItem on the sweep shard mark only (functions/stores/sweep-shard-mark.ts), never on an event's items.
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SWEEP_SHARD_MARK_KEY.pk] } },
    }),
  );
  // The MSK mapping, its failed-batch bucket and what it may do with ingest's role (lib/ingest-source.ts).
  const source = createIngestSource(stack, fn, s, p.key, p.evidence.accessLogs);
  return { fn, source };
}
