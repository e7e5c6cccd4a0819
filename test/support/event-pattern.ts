/**
 * A small evaluator of EventBridge event patterns as EventBridge matches them, for the infra tests: a field's list of
 * values matches when the event's value (or any element of an array of values) equals one of them or has one of the
 * `{ prefix }` matchers as its start; a nested object matches the event's object there (or any element of an array
 * of objects); `$or` matches when any of its patterns does. Only the matchers the stack uses are known; any other
 * throws, so a test never passes on a matcher it cannot read.
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function leafMatches(matchers: unknown[], value: unknown): boolean {
  const values = Array.isArray(value) ? value : [value];
  return values.some((v) =>
    matchers.some((m) => {
      if (isObject(m)) {
        if (typeof m.prefix === 'string') return typeof v === 'string' && v.startsWith(m.prefix);
        throw new Error(`event pattern matcher ${JSON.stringify(m)} is not evaluated by this test: add it`);
      }
      return v !== undefined && m === v;
    }),
  );
}

/** Whether the event (an EventBridge event, `detail` and all) matches the pattern. */
export function matchesPattern(pattern: Json, event: Json): boolean {
  return Object.entries(pattern).every(([key, expected]) => {
    if (key === '$or') return (expected as Json[]).some((p) => matchesPattern(p, event));
    const value = event[key];
    if (Array.isArray(expected)) return leafMatches(expected, value);
    if (!isObject(expected)) throw new Error(`event pattern field ${key} is neither a list nor an object`);
    const objects = Array.isArray(value) ? value.filter(isObject) : isObject(value) ? [value] : [];
    return objects.some((o) => matchesPattern(expected, o));
  });
}

/** A CloudTrail management event as EventBridge receives it. */
export function cloudTrailEvent(
  service: string,
  eventName: string,
  requestParameters: Json,
  resources: Json[] = [],
): Json {
  return {
    source: `aws.${service}`,
    'detail-type': 'AWS API Call via CloudTrail',
    detail: {
      eventSource: `${service}.amazonaws.com`,
      eventName,
      userIdentity: { arn: 'arn:aws:sts::123456789012:assumed-role/Admin/someone' },
      requestParameters,
      resources,
    },
  };
}
