/**
 * The dispatch handler at a spooling invocation (fewer records than EVIDENCE_SPOOL_BELOW): a send's slot is free once
 * its record is in the spool, and its SENT write follows outside the slot. What that must not cost: the handler
 * returns, closes its evidence and reports only after every SENT write has landed; and a table refusing SENT writes
 * still holds the invocation back — no more sends wait for their SENT than twice the invocation's slots.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublishCommand } from '@aws-sdk/client-sns';
import { BatchWriteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DISPATCH_TIMING } from '../../functions/contracts/dispatch-timing.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { documentClientMock, providerMocks } from '../support/aws-mocks.ts';
import { claimedNotification, pendingNotification } from '../support/dispatch-deps.ts';
import { streamEvent, streamRecord } from '../support/stream.ts';

// The handler waits for each spool put as long as it takes (test/support/patient-spool.ts says why).
vi.mock('../../functions/dispatch/record-evidence.ts', async (importOriginal) =>
  (await import('../support/patient-spool.ts')).patientSpoolPuts(await importOriginal()),
);

const ddb = documentClientMock();
/** The Lambda context as the handler reads it: only the time left. */
const context = (ms: number) => ({ getRemainingTimeInMillis: () => ms }) as never;
const { sns } = providerMocks();

/** `n` SMS notifications created just now (the handler runs on the real clock). */
const smsBatch = (n: number): NotificationItem[] =>
  Array.from({ length: n }, (_, i) => ({
    ...pendingNotification('SMS', Date.now() - 1000),
    pk: `EVENT#slot-${i}`,
    eventId: `slot-${i}`,
    notificationId: `slot-${i}#SMS`,
  }));

const isClaim = (input: { ConditionExpression?: string }) =>
  input.ConditionExpression?.startsWith('#status = :fromStatus AND (attribute') === true;
const isSent = (input: { ExpressionAttributeValues?: Record<string, unknown> }) =>
  input.ExpressionAttributeValues?.[':to'] === 'SENT';

/** The table as these tests drive it: claims granted, SENT writes answered by `sentWrite`, everything else accepted. */
function table(items: NotificationItem[], sentWrite: () => Promise<object>) {
  const order: string[] = [];
  ddb.on(UpdateCommand).callsFake(async (input) => {
    if (isClaim(input)) {
      const item = items.find((n) => n.pk === input.Key.pk) as NotificationItem;
      return { Attributes: { ...claimedNotification(item), leaseUntil: Date.now() + 120_000 } };
    }
    if (!isSent(input)) return {};
    order.push('SENT asked');
    const answer = await sentWrite();
    order.push('SENT landed');
    return answer;
  });
  ddb.on(GetCommand).resolves({});
  ddb.on(PutCommand).callsFake(async () => {
    order.push('put');
    return {};
  });
  ddb.on(BatchWriteCommand).callsFake(async () => {
    order.push('index');
    return {};
  });
  return order;
}

/** The handler of a function that keeps evidence (in a folder) and spools invocations of fewer than 25 records. */
let handler: typeof import('../../functions/dispatch/index.ts').handler;
beforeAll(async () => {
  vi.resetModules();
  vi.stubEnv('EVIDENCE_DIR', mkdtempSync(join(tmpdir(), 'dispatch-slot-')));
  vi.stubEnv('EVIDENCE_SPOOL_BELOW', '25');
  handler = (await import('../../functions/dispatch/index.ts')).handler;
}, 60_000);
afterAll(() => vi.unstubAllEnvs());

beforeEach(() => {
  ddb.reset();
  sns.reset();
  let n = 0;
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

describe('a spooling invocation frees a send slot at its spool put, never its outcome', () => {
  it('the handler does not return, close its evidence nor report before a freed slot’s SENT write lands', async () => {
    const items = smsBatch(2);
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const order = table(items, async () => {
      await released;
      return {};
    });
    let returned = false;
    const response = handler(streamEvent(items.map((n) => streamRecord('INSERT', n))), context(60_000)).then((r) => {
      returned = true;
      return r;
    });
    // As long as the handler's first run takes (its templates load): 1 s, waitFor's default, was the run's own length.
    await vi.waitFor(() => expect(order.filter((o) => o === 'SENT asked')).toHaveLength(2), { timeout: 20_000 });
    // Both sends went out and both records are kept; both SENT writes are unanswered: the invocation is not over.
    expect(sns.commandCalls(PublishCommand)).toHaveLength(2);
    expect(returned).toBe(false);
    expect(order).not.toContain('index');
    release();
    expect((await response).batchItemFailures).toEqual([]);
    // The evidence close (the spool's index items) comes after every SENT write landed.
    expect(order.lastIndexOf('SENT landed')).toBeLessThan(order.indexOf('index'));
  }, 30_000);

  it('a table refusing SENT writes holds the invocation back: twice its slots sent at most until a SENT lands', async () => {
    const slots = DISPATCH_TIMING.concurrency;
    const items = smsBatch(24);
    let refusing = true;
    let refused = 0;
    const order = table(items, async () => {
      if (!refusing) return {};
      refused++;
      // As the SDK raises it (with its $metadata): an answer worth trying again, which the holder does.
      throw Object.assign(new Error('throttled'), {
        name: 'ProvisionedThroughputExceededException',
        $metadata: { httpStatusCode: 400 },
      });
    });
    const response = handler(streamEvent(items.map((n) => streamRecord('INSERT', n))), context(60_000));
    // Twice the slots sent; then every slot is held by a send whose SENT write is refused, tried again and again.
    await vi.waitFor(() => expect(sns.commandCalls(PublishCommand)).toHaveLength(2 * slots), { timeout: 20_000 });
    const triedBy = refused;
    await vi.waitFor(() => expect(refused).toBeGreaterThan(triedBy + 2 * slots), { timeout: 20_000 });
    expect(sns.commandCalls(PublishCommand)).toHaveLength(2 * slots);
    expect(order).not.toContain('SENT landed');
    refusing = false;
    expect((await response).batchItemFailures).toEqual([]);
    expect(sns.commandCalls(PublishCommand)).toHaveLength(items.length);
  }, 90_000);
});
