/**
 * MSK-triggered Lambda: each Kafka record becomes one DynamoDB transaction (inbox + one notification per channel).
 * Thin: runs the batch through the use case (ingest-batch.ts), then reports it (report.ts: logs and metrics).
 * If any record meets a persistent infrastructure failure the handler throws after the others finished, and the
 * event source mapping redelivers the batch: records already written come back as duplicates. A record's bytes never
 * make it throw.
 */
import { readFileSync } from 'node:fs';
import type { GlueClient } from '@aws-sdk/client-glue';
import type { Context, MSKEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import { loadIngestConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { count, logger, publishMetrics } from '../commons/powertools.ts';
import { loadRegionFence } from '../commons/region-fence-loader.ts';
import { RulesLoadFailed } from '../domain/rules-not-loaded.ts';
import type { SecretMac } from '../stores/secret-mac.ts';
import { DynamoSweepShardMark, onceRaised } from '../stores/sweep-shard-mark.ts';
import { endEnvironment } from './end-environment.ts';
import { DynamoInboxStore } from './inbox-store.ts';
import { ingestBatch } from './ingest-batch.ts';
import { RegionFencedError } from './peer-errors.ts';
import { reportBatch } from './report.ts';
import { schemasOnFirstUse } from './wire-records.ts';

const config = loadIngestConfig();
const inbox = new DynamoInboxStore(documentClient, config.tableName);
// Two regions (FENCE_TABLE_NAME set): the owned store, its fence and the look-up in the other region, loaded only then
// (regional-store.ts); a stage in one region writes through the inbox store alone.
const fence = await loadRegionFence();
const store =
  fence === undefined
    ? inbox
    : (await import('./regional-store.ts')).regionalStore(inbox, fence, {
        pendingThresholdMs: config.pendingThresholdMs,
        sweepShards: config.sweepShards,
      });
const limit = pLimit(config.concurrency);
// Writer schemas of Avro/Protobuf records, fetched from the configured registry once per container. The cache, its
// registry adapters and the SDK clients are loaded and made when a batch first holds such a record: a JSON producer's
// container never loads them.
let glue: GlueClient | undefined;
const schemas = schemasOnFirstUse(async () => {
  const { SchemaCache, schemaRegistryFor } = await import('./schema-registry.ts');
  return new SchemaCache(
    schemaRegistryFor(config.schemaRegistry, {
      getSchemaVersion: async (schemaVersionId, abortSignal) => {
        const { GetSchemaVersionCommand, GlueClient } = await import('@aws-sdk/client-glue');
        glue ??= new GlueClient({});
        return glue.send(new GetSchemaVersionCommand({ SchemaVersionId: schemaVersionId }), { abortSignal });
      },
      secret: async (arn) => {
        const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
        const answer = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: arn }));
        if (answer.SecretString === undefined) throw new Error('the secret has no SecretString');
        return answer.SecretString;
      },
    }),
  );
});
const macKey = config.secretMacKey;
/**
 * The MAC of secret fields, loaded with its client (KMS's) on the first record that has a secret: most records have
 * none, and a cold start that never sees a one-time code never loads it. A load that fails is tried again next time.
 */
function loadedOnFirstUse(keyId: string, load: () => Promise<SecretMac>): SecretMac {
  let loading: Promise<SecretMac> | undefined;
  return {
    keyId,
    macs: async (messages) => {
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return (await loading).macs(messages);
    },
  };
}
const secretMac: SecretMac | undefined =
  macKey?.kind === 'kms'
    ? loadedOnFirstUse(macKey.keyId, async () => {
        const [{ KmsSecretMac }, { KMSClient }] = await Promise.all([
          import('../stores/secret-mac.ts'),
          import('@aws-sdk/client-kms'),
        ]);
        return new KmsSecretMac(new KMSClient({}), macKey.keyId);
      })
    : macKey?.kind === 'file'
      ? loadedOnFirstUse(`file:${macKey.path}`, async () => {
          const { LocalSecretMac } = await import('../stores/secret-mac.ts');
          return new LocalSecretMac(
            Buffer.from(readFileSync(macKey.path, 'utf8').trim(), 'hex'),
            `file:${macKey.path}`,
          );
        })
      : undefined;

const raiseShardMark = onceRaised(
  new DynamoSweepShardMark(documentClient, config.tableName),
  config.sweepShards,
  Date.now,
);

export const handler = async (event: MSKEvent, context: Context): Promise<void> => {
  logger.addContext(context);
  try {
    const summary = await ingestBatch(event, {
      // Before this environment writes a sweep key: the sweeper must visit every shard a key may be in.
      beforeWrites: raiseShardMark,
      schemas,
      store,
      placement: { pendingThresholdMs: config.pendingThresholdMs, sweepShards: config.sweepShards },
      limit,
      now: Date.now,
      retentionDays: config.retentionDays,
      maxEventBytes: config.maxEventBytes,
      maxEventAgeSeconds: config.maxEventAgeSeconds,
      transactionAttempts: config.transactionAttempts,
      ...(secretMac === undefined ? {} : { secretMac }),
      onRetry: (eventId, error) => {
        count('TransactionRetries');
        logger.warn('transaction retry', { eventId, error: (error as Error).message });
      },
    });
    reportBatch(summary);
    // The batch's counts before a fenced wait or a rethrow (the finally flushes whatever came after).
    publishMetrics();
    // An infrastructure failure: throwing makes the event source mapping redeliver the whole batch, which is safe
    // (records already written come back as duplicates, bad ones find their quarantine item).
    if (summary.failure instanceof RegionFencedError) {
      // Fenced: never success (it would commit the offsets), and not at once either (ten quick retries would park
      // the batch): wait out the invocation, so the retries outlast the mapping's disabling (docs/regions.md).
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, context.getRemainingTimeInMillis() - 5_000)));
    }
    if (summary.failure instanceof RulesLoadFailed) endEnvironment(summary.failure);
    if (summary.failure !== undefined) throw summary.failure;
  } finally {
    publishMetrics();
  }
};
