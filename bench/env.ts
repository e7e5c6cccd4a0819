/**
 * Imported first by bench/run.ts: ESM evaluates imports before the importing module's body, so the Powertools
 * settings must be in place before the functions' modules create their logger and metrics.
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_TRACE_ENABLED = 'false';
process.env.AWS_LAMBDA_FUNCTION_NAME = 'bench';
