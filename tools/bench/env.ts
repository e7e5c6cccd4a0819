/**
 * Imported first by tools/bench/run.ts, for the Powertools Idempotency baseline: its persistence layer prefixes every key
 * with the function's name from AWS_LAMBDA_FUNCTION_NAME, and it must not emit metrics or traces on the bench's
 * terminal. (notifier's own use cases log and count nothing: their handlers do, and the bench never loads them.)
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_TRACE_ENABLED = 'false';
process.env.AWS_LAMBDA_FUNCTION_NAME = 'bench';
