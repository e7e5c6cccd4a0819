/** Scheduled Lambda: re-drives stuck PENDING notifications and resolves expired SENDING leases. */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { loadSweeperConfig } from '../commons/config.ts';
import { documentClient } from '../commons/dynamodb-client.ts';
import { DynamoNotificationStore } from '../commons/notification-store.ts';
import { countBy, logger, metrics } from '../commons/powertools.ts';
import { sweep } from './sweep.ts';

const config = loadSweeperConfig();
const store = new DynamoNotificationStore(documentClient, config.tableName);

export const handler = async (_event: unknown, context: Context) => {
  logger.addContext(context);
  try {
    const r = await sweep({ store, now: Date.now, ...config });
    metrics.addMetric('SweeperRedriven', MetricUnit.Count, r.redriven.length + r.resolvedRetry.length);
    metrics.addMetric('SweeperResolvedUnknown', MetricUnit.Count, r.resolvedUnknown.length);
    for (const e of r.resolvedUnknown) countBy('UnknownOutcomes', { channel: e.channel });
    for (const e of r.redriven)
      logger.warn('stuck PENDING notification re-driven', { notificationId: e.notificationId });
    for (const e of r.resolvedRetry)
      logger.warn('expired lease; released for resend', { notificationId: e.notificationId });
    for (const e of r.resolvedUnknown)
      logger.error('expired lease; outcome UNKNOWN', { notificationId: e.notificationId });
    return {
      redriven: r.redriven.length,
      resolvedUnknown: r.resolvedUnknown.length,
      resolvedRetry: r.resolvedRetry.length,
      lostRaces: r.lostRaces,
    };
  } finally {
    metrics.publishStoredMetrics();
  }
};
