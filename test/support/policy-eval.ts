/**
 * A small evaluator of resource policies as AWS reads them, for the infra tests: the synthesized template's
 * intrinsic functions resolved to strings, then each statement applied to a request (principal, action, resource,
 * request context). An explicit Deny wins; otherwise an Allow is needed. A statement naming the account's root
 * allows any principal of that account (the account's IAM policies decide, as in a key policy). Only the condition
 * operators the stack uses are known; any other throws, so a test never passes on an operator it cannot read.
 */
type Json = Record<string, unknown>;

export type Statement = {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Principal?: unknown;
  NotPrincipal?: unknown;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: unknown;
  NotResource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

/** Who asks: a service principal, or an IAM principal (its ARN and account). */
export interface Principal {
  readonly service?: string;
  readonly arn?: string;
  readonly account?: string;
}

export interface Request {
  readonly principal: Principal;
  readonly action: string;
  readonly resource: string;
  /** A multi-valued key (dynamodb:Attributes, dynamodb:LeadingKeys) is a list: ForAllValues / ForAnyValue judge it. */
  readonly context: Record<string, string | readonly string[] | undefined>;
}

/**
 * Resolves the intrinsic functions a policy uses to plain strings, the way CloudFormation would in this stack's
 * account and region: a Ref to a resource becomes `ref:<logical id>`, its Arn `arn:<logical id>`.
 */
export function resolver(account: string, region: string) {
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Json;
    if ('Ref' in o) {
      const ref = String(o.Ref);
      if (ref === 'AWS::AccountId') return account;
      if (ref === 'AWS::Region') return region;
      if (ref === 'AWS::Partition') return 'aws';
      if (ref === 'AWS::URLSuffix') return 'amazonaws.com';
      return `ref:${ref}`;
    }
    if ('Fn::GetAtt' in o) {
      const [id, attr] = o['Fn::GetAtt'] as [string, string];
      return attr === 'Arn' ? `arn:${id}` : `${attr.toLowerCase()}:${id}`;
    }
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map((p) => String(resolve(p))).join(sep);
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, resolve(x)]));
  };
  return resolve;
}

export const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
/** IAM wildcard match: `*` any run of characters, `?` one. */
export const like = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);

function principalMatches(s: Statement, p: Principal): boolean {
  if (s.Principal === '*') return true;
  const named = s.Principal as { Service?: unknown; AWS?: unknown } | undefined;
  if (named === undefined) return false;
  // {"AWS": "*"} is everyone, AWS services included (the TLS Deny CDK writes is in this form).
  if (list(named.AWS).includes('*')) return true;
  if (p.service !== undefined) return list(named.Service).includes(p.service);
  return list(named.AWS).some((a) => {
    const arn = String(a);
    if (arn === '*') return true;
    const root = /^arn:[^:]+:iam::(\d{12}):root$/.exec(arn);
    if (root !== null) return root[1] === p.account;
    return arn === p.arn;
  });
}

function conditionHolds(op: string, key: string, expected: unknown, context: Request['context']): boolean {
  const actual = context[key];
  if (op.startsWith('ForAllValues:') || op.startsWith('ForAnyValue:')) {
    const set = typeof actual === 'string' ? [actual] : (actual ?? []);
    const each = (v: string) => conditionHolds(op.replace(/^For\w+Values?:/, ''), key, expected, { [key]: v });
    // IAM: ForAllValues holds for a request without the key (an empty set); ForAnyValue does not.
    return op.startsWith('ForAllValues:') ? set.every(each) : set.some(each);
  }
  if (typeof actual !== 'string' && actual !== undefined) {
    throw new Error(`${key} is multi-valued: judge it with ForAllValues or ForAnyValue`);
  }
  const values = list(expected).map(String);
  const base = op.replace(/IfExists$/, '').replace(/^ForAnyValue:|^ForAllValues:/, '');
  if (base === 'Null') return values.includes(actual === undefined ? 'true' : 'false');
  if (actual === undefined) {
    // A missing key: IfExists holds; a negated operator holds (no value equals); any other does not.
    return op.endsWith('IfExists') || /^(String|Arn)Not/.test(base);
  }
  switch (base) {
    case 'StringEquals':
    case 'ArnEquals':
    case 'Bool':
      return values.includes(actual);
    case 'StringLike':
    case 'ArnLike':
      return values.some((v) => like(v, actual));
    case 'StringNotEquals':
    case 'ArnNotEquals':
      return !values.includes(actual);
    case 'StringNotLike':
    case 'ArnNotLike':
      return !values.some((v) => like(v, actual));
    case 'NumericGreaterThan':
      return values.every((v) => Number(actual) > Number(v));
    case 'NumericLessThan':
      return values.every((v) => Number(actual) < Number(v));
    default:
      throw new Error(`condition operator ${op} is not evaluated by this test: add it`);
  }
}

export function applies(s: Statement, r: Request): boolean {
  if (!principalMatches(s, r.principal)) return false;
  const actionMatches = (a: unknown) => like(String(a), r.action);
  if (s.Action !== undefined && !list(s.Action).some(actionMatches)) return false;
  if (s.NotAction !== undefined && list(s.NotAction).some(actionMatches)) return false;
  if (s.Resource !== undefined && !list(s.Resource).some((x) => like(String(x), r.resource))) return false;
  if (s.NotResource !== undefined && list(s.NotResource).some((x) => like(String(x), r.resource))) return false;
  return Object.entries(s.Condition ?? {}).every(([op, keys]) =>
    Object.entries(keys).every(([key, expected]) => conditionHolds(op, key, expected, r.context)),
  );
}

/** A resource policy's verdict: an explicit Deny wins, then an Allow is needed. */
export function allows(statements: readonly Statement[], r: Request): boolean {
  const relevant = statements.filter((s) => applies(s, r));
  return relevant.some((s) => s.Effect === 'Allow') && !relevant.some((s) => s.Effect === 'Deny');
}

/** Denied outright by the policy, whatever any IAM policy allows. */
export function denies(statements: readonly Statement[], r: Request): boolean {
  return statements.some((s) => s.Effect === 'Deny' && applies(s, r));
}
