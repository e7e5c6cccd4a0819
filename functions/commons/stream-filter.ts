/**
 * The dispatch trigger's filter, as plain data: the CDK stack puts it on the DynamoDB event source mapping and the
 * local run applies the very same pattern to DynamoDB Local's stream. Only a notification that is PENDING after the
 * write reaches dispatch: a new one (INSERT), or one put back to PENDING for a retry or a sweeper redrive (MODIFY).
 * Our own SENDING/SENT/FAILED/UNKNOWN updates, inbox and quarantine items, and TTL removals never do.
 */
export const DISPATCH_FILTER_PATTERN = {
  eventName: ['INSERT', 'MODIFY'],
  dynamodb: { NewImage: { kind: { S: ['NOTIFICATION'] }, status: { S: ['PENDING'] } } },
} as const;

/**
 * Matches the subset of the Lambda event-filtering grammar the pattern above uses: nested objects whose leaves are
 * arrays of allowed values. Used by the local run; Lambda applies its own matcher in AWS.
 */
export function matchesFilter(pattern: unknown, value: unknown): boolean {
  if (Array.isArray(pattern)) return pattern.includes(value as never);
  if (typeof pattern !== 'object' || pattern === null) return false;
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(pattern).every(([k, p]) => matchesFilter(p, (value as Record<string, unknown>)[k]));
}
