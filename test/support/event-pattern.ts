/**
 * A small evaluator of EventBridge event patterns as EventBridge matches them, for the infra tests: a field's list of
 * values matches when the event's value (or any element of an array of values) equals one of them or satisfies one
 * of its matchers (`prefix`, `wildcard` with `*`, `anything-but` a value or list, `exists`); a field the event lacks
 * matches `{ exists: false }` alone (EventBridge reads a pattern as paths, so a missing parent is a missing field); a
 * nested object matches the event's object there (or any element of an array of objects); `$or` matches when any
 * of its patterns does. Only the matchers the stack uses are known; any other throws, so a test never passes on a
 * matcher it cannot read.
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const wildcard = (pattern: string, v: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(v);

function matcherHolds(m: unknown, v: unknown): boolean {
  if (!isObject(m)) return v !== undefined && m === v;
  if (typeof m.prefix === 'string') return typeof v === 'string' && v.startsWith(m.prefix);
  if (typeof m.wildcard === 'string') return typeof v === 'string' && wildcard(m.wildcard, v);
  if ('anything-but' in m) {
    const but = m['anything-but'];
    if (isObject(but)) throw new Error(`anything-but ${JSON.stringify(but)} is not evaluated by this test: add it`);
    return v !== undefined && !(Array.isArray(but) ? but : [but]).includes(v);
  }
  if (typeof m.exists === 'boolean') return m.exists === (v !== undefined);
  throw new Error(`event pattern matcher ${JSON.stringify(m)} is not evaluated by this test: add it`);
}

function leafMatches(matchers: unknown[], value: unknown): boolean {
  const values = Array.isArray(value) ? value : [value];
  return values.some((v) => matchers.some((m) => matcherHolds(m, v)));
}

/** Whether a pattern asks only that its fields be absent (what a missing parent object still satisfies). */
function asksAbsence(pattern: Json): boolean {
  return Object.entries(pattern).every(([key, expected]) => {
    if (key === '$or') return (expected as Json[]).some(asksAbsence);
    if (Array.isArray(expected)) return expected.some((m) => isObject(m) && m.exists === false);
    return isObject(expected) && asksAbsence(expected);
  });
}

/** Whether the event (an EventBridge event, `detail` and all) matches the pattern. */
export function matchesPattern(pattern: Json, event: Json): boolean {
  return Object.entries(pattern).every(([key, expected]) => {
    if (key === '$or') return (expected as Json[]).some((p) => matchesPattern(p, event));
    const value = event[key];
    if (Array.isArray(expected)) return leafMatches(expected, value);
    if (!isObject(expected)) throw new Error(`event pattern field ${key} is neither a list nor an object`);
    const objects = Array.isArray(value) ? value.filter(isObject) : isObject(value) ? [value] : [];
    if (objects.length === 0) return asksAbsence(expected);
    return objects.some((o) => matchesPattern(expected, o));
  });
}

/** A CloudTrail management event as EventBridge receives it. */
export function cloudTrailEvent(
  service: string,
  eventName: string,
  requestParameters: Json,
  resources: Json[] = [],
  more: { userIdentity?: Json; responseElements?: Json } = {},
): Json {
  return {
    source: `aws.${service}`,
    'detail-type': 'AWS API Call via CloudTrail',
    detail: {
      eventSource: `${service}.amazonaws.com`,
      eventName,
      userIdentity: more.userIdentity ?? SOMEONE,
      requestParameters,
      ...(more.responseElements === undefined ? {} : { responseElements: more.responseElements }),
      resources,
    },
  };
}

/** An administrator's session, as CloudTrail records it. */
export const SOMEONE: Json = {
  type: 'AssumedRole',
  arn: 'arn:aws:sts::123456789012:assumed-role/Admin/someone',
  sessionContext: { sessionIssuer: { type: 'Role', arn: 'arn:aws:iam::123456789012:role/Admin' } },
};

/** A call CloudFormation makes with the role it was given (the CDK's deploy role, or anyone's own). */
export const byCloudFormationAs = (roleArn: string): Json => ({
  type: 'AssumedRole',
  arn: `${roleArn.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/')}/AWSCloudFormation`,
  invokedBy: 'cloudformation.amazonaws.com',
  sessionContext: { sessionIssuer: { type: 'Role', arn: roleArn } },
});
