/**
 * Running the chaos world: the event source mappings' invoker (each invocation in a crash context), the sweeper,
 * convergence of a run, the run's items, and the state machine checked on every stream MODIFY.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { canMove, type NotificationStatus, TERMINAL_STATUSES } from '../../functions/domain/state-machine.ts';
import { scanAll } from '../local/dynamodb-local.ts';
import { type Invoker, lambdaContext, readTable, StreamMapping } from '../local/pipeline.ts';
import { clock, invocation } from './faults.ts';
import { LEASE_MS, PENDING_THRESHOLD_MS, type World } from './world.ts';

/**
 * The chaos suite's Invoker for the local event source mappings (tools/local/pipeline.ts): each invocation runs in a crash
 * context — a crash anywhere inside fails it whole, as a dying Lambda does — keyed by its label when it has one.
 */
export const chaosInvoke: Invoker = async (run, label) => {
  const ctx = { crashed: false, startedAt: clock.now(), ...(label === undefined ? {} : { id: label }) };
  try {
    const response = await invocation.run(ctx, run);
    return ctx.crashed ? { functionError: true } : { response, functionError: false };
  } catch (error) {
    return { functionError: true, error };
  }
};

/** One dispatch invocation outside a mapping (the model-based test's racing deliveries). */
export async function invokeDispatch(
  w: World,
  batch: DynamoDBRecord[],
): Promise<{ failedAt: number; functionError: boolean }> {
  return new StreamMapping(w.reader, w.handlers.dispatch, { invoke: chaosInvoke }).invoke(batch);
}

/** One sweeper invocation; `id` keys the fault decisions inside it (see `Invocation.id`). */
export async function runSweeper(w: World, id?: string): Promise<void> {
  const ctx = { crashed: false, ...(id === undefined ? {} : { id }) };
  await invocation.run(ctx, () => w.handlers.sweeper({}, lambdaContext('chaos-sweeper'))).catch(() => undefined);
}

/** Pumps, sweeps and advances the clock until every notification of the run is terminal (or gives up). */
export async function convergeRun(
  w: World,
  pump: () => Promise<number>,
  prefix: string,
  maxRounds = 60,
): Promise<void> {
  for (let round = 0; round < maxRounds; round++) {
    while ((await pump()) > 0) {
      // keep draining while the stream grows
    }
    const items = await runItems(w, prefix);
    const active = items.filter(
      (i) => i.kind === 'NOTIFICATION' && !TERMINAL_STATUSES.includes(i.status as NotificationStatus),
    );
    if (active.length === 0) return;
    // Past every lease and the PENDING threshold: the sweeper resolves or re-drives what is stuck.
    clock.advance(Math.max(LEASE_MS, PENDING_THRESHOLD_MS) + 1_000);
    await runSweeper(w);
  }
}

export async function runItems(w: World, prefix: string): Promise<Record<string, unknown>[]> {
  const all = await readTable(w.db.endpoint, w.tableName);
  const mine = (id: unknown) => typeof id === 'string' && id.startsWith(prefix);
  return [
    ...all.notifications.filter((n) => mine(n.eventId)),
    ...all.quarantine.filter((q) => String(q.pk).includes(`#${prefix}topic#`)),
    ...(await inboxItems(w, prefix)),
  ];
}

function inboxItems(w: World, prefix: string) {
  return scanAll(w.db.endpoint, w.tableName, {
    expression: 'sk = :inbox AND begins_with(eventId, :prefix)',
    values: { ':inbox': 'INBOX', ':prefix': prefix },
  });
}

/** Legal transitions only, nothing leaves a terminal state, attempt never decreases: checked on every stream MODIFY. */
export function transitionViolations(records: DynamoDBRecord[], prefix: string): string[] {
  const problems: string[] = [];
  for (const r of records) {
    if (r.eventName !== 'MODIFY') continue;
    const oldImage = r.dynamodb?.OldImage;
    const newImage = r.dynamodb?.NewImage;
    if (!oldImage || !newImage) continue;
    const before = unmarshall(oldImage as Record<string, AttributeValue>);
    const after = unmarshall(newImage as Record<string, AttributeValue>);
    if (before.kind !== 'NOTIFICATION' || !String(before.eventId).startsWith(prefix)) continue;
    const from = before.status as NotificationStatus;
    const to = after.status as NotificationStatus;
    // A terminal item may take attributes (a late acceptance's message id on UNKNOWN), never another status.
    const annotated = from === to && TERMINAL_STATUSES.includes(from);
    if (!annotated && !canMove(from, to)) problems.push(`${before.notificationId}: ${from} → ${to}`);
    if (Number(after.attempt) < Number(before.attempt))
      problems.push(`${before.notificationId}: attempt ${before.attempt} → ${after.attempt}`);
  }
  return problems;
}
