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
 * Records per invocation of the urgent mapping: small, so one invocation's sends take well under a second and a
 * critical notice never waits for a large batch to fill or to finish.
 */
export const URGENT_BATCH_SIZE = 10;
/**
 * The urgent mapping is a fast lane beside the routine one, never the only one: it retries a failing batch this often
 * and gives up on a record this old; what it gives up the routine mapping still delivers.
 */
export const URGENT_RETRIES = 2;
export const URGENT_MAX_RECORD_AGE_SECONDS = 60;

/**
 * A trigger's pattern in a stage with two regions: only this region's own writes (`owner`, docs/regions.md
 * "Replicated stream records"). Each replica's stream carries the other region's writes too, replicated; AWS marks
 * none of them, so the trigger recognises ours by our own attribute and lets no replicated record through.
 */
export function ownedBy<P extends { dynamodb: { NewImage: object } }>(pattern: P, owner: string | undefined): P {
  if (owner === undefined) return pattern;
  return {
    ...pattern,
    dynamodb: { ...pattern.dynamodb, NewImage: { ...pattern.dynamodb.NewImage, owner: { S: [owner] } } },
  };
}

/** The longest filter pattern Lambda takes. */
export const FILTER_PATTERN_MAX_CHARS = 4096;

/**
 * The urgent trigger's filter: the same records, of the critical types only. A second event source mapping on the
 * stream carries it, so a critical notice reaches dispatch at once instead of behind the records ahead of it in its
 * shard — a backlog of normal ones that dispatch paces at the provider's quota moves the shard's position only that
 * fast (docs/dispatch.md "Critical notices first"). The routine mapping keeps the plain filter and so sees the critical
 * records too, later: by then each is claimed or finished, and its claim, conditional on PENDING, finds that out.
 * Matched on the notification's type, which every item carries (those written before this mapping existed too); the
 * critical types come from the catalogue when the stack is synthesized.
 */
export function urgentFilterPattern(criticalTypes: readonly string[]) {
  const pattern = {
    eventName: DISPATCH_FILTER_PATTERN.eventName,
    dynamodb: { NewImage: { ...DISPATCH_FILTER_PATTERN.dynamodb.NewImage, template: { S: [...criticalTypes] } } },
  } as const;
  // Lambda refuses a longer pattern at deploy (https://docs.aws.amazon.com/lambda/latest/api/API_Filter.html): say so
  // at synth, naming the cause. About 150 critical types of 25 characters fit.
  const length = JSON.stringify(pattern).length;
  if (length > FILTER_PATTERN_MAX_CHARS) {
    throw new RangeError(
      `the urgent trigger's filter would be ${length} characters for ${criticalTypes.length} critical types; Lambda takes at most ${FILTER_PATTERN_MAX_CHARS}: shorten the critical types' names or make fewer types critical`,
    );
  }
  return pattern;
}

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

/**
 * SES events reach the feedback function through a queue, in batches: up to this many, or what arrived in this window
 * — so a batch's reports on one send batch are one evidence object (docs/evidence-and-privacy.md), and a suppression
 * still applies within seconds. The stack's mapping and the local run's deliver the same batches.
 */
export const SES_EVENTS_BATCH_SIZE = 500;
export const SES_EVENTS_BATCH_WINDOW_SECONDS = 10;
