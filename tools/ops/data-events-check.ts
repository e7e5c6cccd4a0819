/**
 * Does a trail record the doors around the controls? Every operator action goes through the operator API (or the
 * console's), previewed, approved where set and audited; three doors skip all of it — invoking the operator, console
 * or ingest function directly (a forged request, a crafted MSK event), and writing the table's items (which its
 * resource policy refuses to all but the stack's functions and break glass). The stack does not own a trail: the
 * bank's trail records management events (trail-check.ts), and only it can record these **data events** too — Lambda
 * `Invoke` of those functions and item writes on the table. This check (a step of `npm run smoke`, docs/operations.md
 * "Smoke check") passes when logging trails covering the region record, between them, each of them: an advanced
 * selector of eventCategory `Data` whose `resources.type`, `resources.ARN`, `eventName` and `readOnly` admit it, or
 * a basic selector whose data resources name it (or every function / every table) without `ReadOnly`.
 */
import {
  type AdvancedEventSelector,
  type CloudTrailClient,
  DescribeTrailsCommand,
  type EventSelector,
  GetEventSelectorsCommand,
  GetTrailStatusCommand,
} from '@aws-sdk/client-cloudtrail';
import { admits, type TrailVerdict } from './trail-check.ts';

/** A resource whose data events must be recorded: a function's Invoke, or a table's item writes. */
export interface Watched {
  readonly type: 'AWS::Lambda::Function' | 'AWS::DynamoDB::Table';
  readonly arn: string;
}

/** What the stack's outputs name: its functions' and table's ARNs in this account and region. */
export function watchedOf(
  where: { readonly partition: string; readonly region: string; readonly account: string },
  functions: readonly string[],
  table: string,
): Watched[] {
  const base = `${where.region}:${where.account}`;
  return [
    ...functions.map((name) => ({
      type: 'AWS::Lambda::Function' as const,
      arn: `arn:${where.partition}:lambda:${base}:function:${name}`,
    })),
    { type: 'AWS::DynamoDB::Table', arn: `arn:${where.partition}:dynamodb:${base}:table/${table}` },
  ];
}

/** A function URL's calls are recorded as InvokeFunctionUrl, not Invoke: a selector must admit both. */
const eventsOf = (w: Watched) => (w.type === 'AWS::Lambda::Function' ? ['Invoke', 'InvokeFunctionUrl'] : ['PutItem']);

function advancedRecords(selectors: readonly AdvancedEventSelector[], w: Watched): boolean {
  const admitted = (eventName: string) =>
    selectors.some((s) => {
      const field = (name: string) => s.FieldSelectors?.find((f) => f.Field === name);
      return (
        field('eventCategory')?.Equals?.includes('Data') === true &&
        field('resources.type')?.Equals?.includes(w.type) === true &&
        admits(field('resources.ARN'), w.arn) &&
        admits(field('eventName'), eventName) &&
        admits(field('readOnly'), 'false')
      );
    });
  return eventsOf(w).every(admitted);
}

function basicRecords(selectors: readonly EventSelector[], w: Watched): boolean {
  const every = w.type === 'AWS::Lambda::Function' ? ':lambda' : ':dynamodb';
  return selectors.some(
    (s) =>
      (s.ReadWriteType ?? 'All') !== 'ReadOnly' &&
      (s.DataResources ?? []).some(
        (d) =>
          d.Type === w.type &&
          (d.Values ?? []).some((v) => v === w.arn || (/^arn:[^:]+(:lambda|:dynamodb)$/.test(v) && v.endsWith(every))),
      ),
  );
}

/** Which of `watched` no logging trail of `region` records, with a line per trail. */
export async function checkDataEvents(
  client: CloudTrailClient,
  region: string,
  watched: readonly Watched[],
): Promise<TrailVerdict> {
  const lines: string[] = [];
  const recorded = new Set<string>();
  try {
    const trails = (await client.send(new DescribeTrailsCommand({ includeShadowTrails: true }))).trailList ?? [];
    for (const trail of trails) {
      const name = trail.TrailARN ?? trail.Name ?? '?';
      if (trail.HomeRegion !== region && trail.IsMultiRegionTrail !== true) continue;
      if ((await client.send(new GetTrailStatusCommand({ Name: name }))).IsLogging !== true) continue;
      const selectors = await client.send(new GetEventSelectorsCommand({ TrailName: name }));
      const advanced = selectors.AdvancedEventSelectors ?? [];
      const records = (w: Watched) =>
        advanced.length > 0 ? advancedRecords(advanced, w) : basicRecords(selectors.EventSelectors ?? [], w);
      const these = watched.filter(records);
      for (const w of these) recorded.add(w.arn);
      if (these.length > 0) lines.push(`trail ${name}: records data events of ${these.map((w) => w.arn).join(', ')}`);
    }
  } catch (error) {
    const { name, message } = error as Error;
    return { ok: false, lines: [...lines, `cannot read the trails' data event selectors: ${name}: ${message}`] };
  }
  const missing = watched.filter((w) => !recorded.has(w.arn));
  if (missing.length === 0) return { ok: true, lines };
  return {
    ok: false,
    lines: [
      ...lines,
      `no logging trail records ${missing.map((w) => `${w.type === 'AWS::Lambda::Function' ? 'Invoke of' : 'item writes on'} ${w.arn}`).join(', ')}: a direct invoke or a hand-written item would leave no record (docs/deploy.md step 0, "CloudTrail")`,
    ],
  };
}
