/**
 * The environment of a run of the product the bench starts (`npm start` for the cost and pipeline figures): the bench's
 * own process is silenced (tools/bench/env.ts: no metrics, no logs, no traces, a function name for the Idempotency
 * baseline), and a child must not inherit that — its metrics and log lines are what the cost run counts.
 */
const BENCH_ONLY = [
  'POWERTOOLS_METRICS_DISABLED',
  'POWERTOOLS_LOG_LEVEL',
  'POWERTOOLS_TRACE_ENABLED',
  'AWS_LAMBDA_FUNCTION_NAME',
] as const;

export function productEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of BENCH_ONLY) delete env[name];
  return env;
}
