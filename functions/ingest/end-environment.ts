import { logger, publishMetrics } from '../commons/powertools.ts';
import type { RulesLoadFailed } from '../domain/rules-not-loaded.ts';

/**
 * Rules a record needs did not load, and this environment will never load them (rules-not-loaded.ts): the batch's
 * report and counts are out, so the process ends — the invocation fails, Lambda starts a new environment, and the
 * event source mapping redelivers the batch to it. A throw alone would keep this environment, failing every batch
 * that holds such a value until Lambda retired it.
 */
export function endEnvironment(failure: RulesLoadFailed, exit: (code: number) => void = process.exit): void {
  logger.error('rules did not load: this environment ends, the batch is redelivered to a new one', {
    error: failure.message,
  });
  publishMetrics();
  exit(1);
}
