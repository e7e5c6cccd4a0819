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
import { count, logger, metrics } from '../commons/powertools.ts';
import { regionFenceOf } from '../commons/region-fence.ts';
import type { SecretMac } from '../stores/secret-mac.ts';
import { DynamoSweepShardMark, onceRaised } from '../stores/sweep-shard-mark.ts';
import { DynamoInboxStore } from './inbox-store.ts';
import { ingestBatch } from './ingest-batch.ts';
import { OwnedInboxStore, RegionFencedError } from './owned-inbox-store.ts';
import { peerInboxes } from './peer-lookup.ts';
import { reportBatch } from './report.ts';
import { SchemaCache, schemaRegistryFor } from './schema-registry.ts';

const config = loadIngestConfig();
const inbox = new DynamoInboxStore(documentClient, config.tableName);
// Two regions: every item carries this region as its owner and its epoch; a fenced region takes no event, and events
// read again after a failover are held or looked up (owned-inbox-store.ts).
const fence = regionFenceOf();
// Once the old region is reconciled, an event read again is asked of its replica (peer-lookup.ts): one attempt, a
// short timeout; unanswered, the event is held, counted and logged — never sent on silence.
const peer =
  fence?.other?.tableName === undefined
    ? undefined
    : peerInboxes({ ...fence.other, tableName: fence.other.tableName, timeoutMs: fence.lookupTimeoutMs });
const store =
  fence === undefined
    ? inbox
    : new OwnedInboxStore(inbox, fence.store, fence.region, {
        secondCopy: [],
        clockMarginMs: fence.clockMarginMs,
        placement: { pendingThresholdMs: config.pendingThresholdMs, sweepShards: config.sweepShards },
        now: Date.now,
        ...(peer === undefined ? {} : { predecessorInboxes: (ids: readonly string[]) => peer.taken(ids) }),
        onLookupUnanswered: (eventId, error) => {
          count('PeerLookupsUnanswered');
          logger.warn('look-up in the other region unanswered: event held', {
            eventId,
            otherRegion: fence.other?.region,
            error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
          });
        },
      });
const limit = pLimit(config.concurrency);
// Writer schemas of Avro/Protobuf records, fetched from the configured registry once per container. The SDK clients
// are loaded and created when first needed: a JSON producer's container never loads them.
let glue: GlueClient | undefined;
const schemas = new SchemaCache(
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
    // An infrastructure failure: throwing makes the event source mapping redeliver the whole batch, which is safe
    // (records already written come back as duplicates, bad ones find their quarantine item).
    if (summary.failure instanceof RegionFencedError) {
      // Fenced: never success (it would commit the offsets), and not at once either (ten quick retries would park
      // the batch): wait out the invocation, so the retries outlast the mapping's disabling (docs/regions.md).
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, context.getRemainingTimeInMillis() - 5_000)));
    }
    if (summary.failure !== undefined) throw summary.failure;
  } finally {
    metrics.publishStoredMetrics();
  }
};
