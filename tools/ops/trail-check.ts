/**
 * Is there a trail the protection watch can read? Its EventBridge rules receive "AWS API Call via CloudTrail" events
 * only while a CloudTrail trail records management events in the stack's region; without one every rule is silent,
 * and silence reads as "nothing changed". This check (a step of `npm run smoke`, docs/operations.md "Smoke check")
 * passes when trails that cover this region and are logging record, between them, read and write management events
 * of every service the watch reads:
 * - DescribeTrails with includeShadowTrails: this region's trails, multi-region trails of other regions and an
 *   organization's trail in a member account (a single-region trail of another region does not cover this one);
 * - GetTrailStatus (by ARN: a shadow trail is found by its ARN only): IsLogging;
 * - GetEventSelectors: basic selectors (IncludeManagementEvents, ReadWriteType, ExcludeManagementEventSources — a
 *   trail that leaves out KMS hides every change to the keys) or advanced ones (eventCategory Management, readOnly,
 *   eventSource).
 * Anything it cannot read (AccessDenied) fails the check: a trail nobody could confirm is no trail.
 */
import {
  type AdvancedEventSelector,
  type AdvancedFieldSelector,
  type CloudTrailClient,
  DescribeTrailsCommand,
  type EventSelector,
  GetEventSelectorsCommand,
  GetTrailStatusCommand,
  type Trail,
} from '@aws-sdk/client-cloudtrail';
import { watchedEventSources } from '../../lib/watched-event-sources.ts';

export interface TrailVerdict {
  readonly ok: boolean;
  /** One line per trail looked at, and the conclusion. */
  readonly lines: readonly string[];
}

/** What must be recorded: every watched event source, read-only calls (AssumeRole is one) and writes. */
const needed = (region: string) =>
  watchedEventSources(region).flatMap((source) =>
    (['true', 'false'] as const).map((readOnly) => ({ source, readOnly })),
  );
type Need = ReturnType<typeof needed>[number];
const key = (n: Need) => `${n.source} ${n.readOnly === 'true' ? 'reads' : 'writes'}`;

/** Whether an advanced selector's field condition lets this value through (no condition on the field: it does). */
export function admits(field: AdvancedFieldSelector | undefined, value: string): boolean {
  if (field === undefined) return true;
  const any = (list: string[] | undefined, test: (s: string) => boolean) => list?.some(test) === true;
  if (field.Equals !== undefined && !field.Equals.includes(value)) return false;
  if (field.StartsWith !== undefined && !any(field.StartsWith, (p) => value.startsWith(p))) return false;
  if (field.EndsWith !== undefined && !any(field.EndsWith, (p) => value.endsWith(p))) return false;
  if (any(field.NotEquals, (v) => v === value)) return false;
  if (any(field.NotStartsWith, (p) => value.startsWith(p))) return false;
  return !any(field.NotEndsWith, (p) => value.endsWith(p));
}

function advancedCovers(selectors: readonly AdvancedEventSelector[], n: Need): boolean {
  return selectors.some((s) => {
    const field = (name: string) => s.FieldSelectors?.find((f) => f.Field === name);
    const category = field('eventCategory');
    return (
      category?.Equals?.includes('Management') === true &&
      admits(field('readOnly'), n.readOnly) &&
      admits(field('eventSource'), n.source)
    );
  });
}

function basicCovers(selectors: readonly EventSelector[], n: Need): boolean {
  return selectors.some(
    (s) =>
      s.IncludeManagementEvents !== false &&
      (s.ReadWriteType ?? 'All') !== (n.readOnly === 'true' ? 'WriteOnly' : 'ReadOnly') &&
      !(s.ExcludeManagementEventSources ?? []).includes(n.source),
  );
}

const reason = (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`;

/** The trails of `region` that are logging and what they record, judged against what the watch reads. */
export async function checkTrail(client: CloudTrailClient, region: string): Promise<TrailVerdict> {
  const lines: string[] = [];
  const NEEDED = needed(region);
  let trails: Trail[];
  try {
    trails = (await client.send(new DescribeTrailsCommand({ includeShadowTrails: true }))).trailList ?? [];
  } catch (error) {
    return { ok: false, lines: [`cannot list the trails (cloudtrail:DescribeTrails): ${reason(error)}`] };
  }
  const covered = new Set<string>();
  for (const trail of trails) {
    const name = trail.TrailARN ?? trail.Name ?? '?';
    if (trail.HomeRegion !== region && trail.IsMultiRegionTrail !== true) {
      lines.push(`trail ${name}: records ${trail.HomeRegion ?? 'another region'} only, not ${region}`);
      continue;
    }
    try {
      const status = await client.send(new GetTrailStatusCommand({ Name: name }));
      if (status.IsLogging !== true) {
        lines.push(`trail ${name}: not logging (stopped)`);
        continue;
      }
      const selectors = await client.send(new GetEventSelectorsCommand({ TrailName: name }));
      const covers = (n: Need) =>
        selectors.AdvancedEventSelectors !== undefined && selectors.AdvancedEventSelectors.length > 0
          ? advancedCovers(selectors.AdvancedEventSelectors, n)
          : basicCovers(selectors.EventSelectors ?? [], n);
      const recorded = NEEDED.filter(covers);
      for (const n of recorded) covered.add(key(n));
      const missing = NEEDED.filter((n) => !covers(n)).map(key);
      lines.push(
        missing.length === 0
          ? `trail ${name}: logging, records read and write management events of ${region}`
          : `trail ${name}: logging, but does not record ${missing.join(', ')}`,
      );
    } catch (error) {
      lines.push(`trail ${name}: cannot read its status or event selectors: ${reason(error)}`);
    }
  }
  const missing = NEEDED.map(key).filter((k) => !covered.has(k));
  if (missing.length === 0) return { ok: true, lines };
  return {
    ok: false,
    lines: [
      ...(trails.length === 0 ? [`no CloudTrail trail covers ${region}`] : lines),
      `no logging trail records ${missing.length === NEEDED.length ? `management events in ${region}` : missing.join(', ')}: the protection watch receives nothing and reports nothing (docs/deploy.md step 0, "CloudTrail")`,
    ],
  };
}
