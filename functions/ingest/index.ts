/**
 * MSK-triggered Lambda: each Kafka record becomes one DynamoDB transaction (inbox + one notification per channel).
 * Thin: flattens the MSK batch, runs the records with bounded concurrency, maps results to logs and metrics.
 * If any record meets a persistent infrastructure failure the handler throws after the others finished, and the
 * event source mapping redelivers the batch: records already written come back as duplicates.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, MSKEvent } from 'aws-lambda';
import pLimit from 'p-limit';
import { loadIngestConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { logger, metrics } from '../commons/powertools.ts';
import { DynamoInboxStore } from './inbox-store.ts';
import { ingestBatch } from './ingest-batch.ts';

const config = loadIngestConfig();
const store = new DynamoInboxStore(documentClient, config.tableName);
const limit = pLimit(config.concurrency);

export const handler = async (event: MSKEvent, context: Context): Promise<void> => {
  logger.addContext(context);
  try {
    await ingestBatch(event, {
      store,
      limit,
      now: Date.now,
      retentionDays: config.retentionDays,
      stuckAfterMs: config.stuckAfterMs,
      maxEventBytes: config.maxEventBytes,
      transactionAttempts: config.transactionAttempts,
      onRetry: (eventId, error) => {
        metrics.addMetric('TransactionRetries', MetricUnit.Count, 1);
        logger.warn('transaction retry', { eventId, error: (error as Error).message });
      },
    });
  } finally {
    metrics.publishStoredMetrics();
  }
};
