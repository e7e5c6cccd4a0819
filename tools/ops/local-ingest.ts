/**
 * The ingest function of the local run, for `npm run ops -- --endpoint …` replays: the real handler in this process,
 * configured as `npm start` configures it, its logs kept off the operator's terminal (standard error only).
 */
import type { MSKEvent } from 'aws-lambda';
import type { IngestInvoker } from '../../functions/operator/index.ts';
import { captureOutput } from '../local/emf.ts';
import { lambdaContext, loadHandlers } from '../local/pipeline.ts';

export async function localIngest(endpoint: string, tableName: string): Promise<IngestInvoker> {
  const handlers = await loadHandlers({
    dynamoEndpoint: endpoint,
    // Ingest sends nothing: these are never called.
    sesEndpoint: 'http://127.0.0.1:9',
    snsEndpoint: 'http://127.0.0.1:9',
    tableName,
    extra: { POWERTOOLS_LOG_LEVEL: 'ERROR', POWERTOOLS_METRICS_DISABLED: 'true', MAX_EVENT_AGE_SECONDS: '0' },
  });
  return async (event: MSKEvent) => {
    const output = captureOutput();
    try {
      await handlers.ingest(event, lambdaContext('notifier-ingest'));
    } finally {
      output.restore();
    }
  };
}
