/**
 * Lambda active tracing on every function of a stage (settings `tracing`; docs/operations.md "What X-Ray records").
 *
 * Off by default. With the stack's defaults (no `traceAwsCalls`) a trace holds only Lambda's own segments — init,
 * invocation, overhead — which each invocation's REPORT log line and the function's CloudWatch metrics already hold;
 * no trace crosses the pipeline (X-Ray does not trace ingest behind its MSK mapping, and a DynamoDB stream record
 * carries no trace header to dispatch). At a low rate every invocation is within Lambda's one-a-second sampling
 * reservoir, so those traces cost about as much as the evidence's own S3 requests (docs/measurements.md). An
 * investigation turns tracing on with a deploy, and off again with another.
 *
 * The choice is made once per stack, before its functions are created (CDK adds the X-Ray permissions to a function's
 * role when it is created with tracing): `useTracing` in the stack, `tracingOf` in the house function.
 */
import type { IConstruct } from 'constructs';

export const TRACING_MODES = ['active', 'off'] as const;
export type TracingMode = (typeof TRACING_MODES)[number];
/** The settings' default, and what the cost bench prices into its totals (tools/bench/cost-at-rate.ts). */
export const DEFAULT_TRACING: TracingMode = 'off';

const chosen = new WeakMap<IConstruct, TracingMode>();

/** The stack's functions are traced as `mode` says (call before any function is created). */
export function useTracing(stack: IConstruct, mode: TracingMode): void {
  chosen.set(stack, mode);
}

/** How the functions under `scope` are traced: the nearest enclosing choice, else the default. */
export function tracingOf(scope: IConstruct): TracingMode {
  for (const s of [...scope.node.scopes].reverse()) {
    const mode = chosen.get(s);
    if (mode !== undefined) return mode;
  }
  return DEFAULT_TRACING;
}
