/**
 * Held notices in an operator's hands, on DynamoDB Local (functions/operator/held.ts, functions/stores/held-store.ts,
 * docs/regions.md "Runbook"): after a failover whose old region never answers, `ops held` lists what waits, a release
 * sends a held notice once — through the real dispatch handler on the table's stream —, a release racing
 * `ops reconcile` on the same notice sends it once, a settlement is terminal, and every refusal is audited.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand } from '@aws-sdk/client-sns';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createFenceTableInput } from '../../functions/contracts/fence-schema.ts';
import { approvalPolicyOf } from '../../functions/domain/approval.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { buildSuccessor } from '../../functions/domain/failover.ts';
import type { FenceControl } from '../../functions/domain/fence.ts';
import { eventPk, notificationIdOf } from '../../functions/domain/keys.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { DEFAULT_SWEEP_PLACEMENT } from '../../functions/domain/sweep-index.ts';
import {
  answer,
  apply,
  listAudit,
  listHeld,
  OperatorError,
  type OperatorPorts,
  operations,
  releaseHeld,
  settleHeld,
} from '../../functions/operator/index.ts';
import { reconcile } from '../../functions/operator/reconcile.ts';
import { oldRegionLookOf } from '../../functions/operator-api/region-commands.ts';
import { DynamoFenceStore } from '../../functions/stores/fence-store.ts';
import { DynamoSuccessorStore } from '../../functions/stores/successor-store.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { converge, type Handlers, StreamMapping } from '../../tools/local/pipeline.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { heldPreviewText } from '../../tools/ops/text/held.ts';
import { providerMocks } from '../support/aws-mocks.ts';
import { pendingNotification } from '../support/dispatch-deps.ts';
import { handlersOn } from '../support/handlers.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE, operatorOn } from '../support/operator.ts';

const OLD = 'ap-northeast-1';
const ACTIVE = 'ap-northeast-3';
const { ses, sns } = providerMocks();
/** The old region's replica (its originals) and the active region's (the successors, its stream, its dispatch). */
let old: LocalTable;
let active: LocalTable;
let handlers: Handlers;
let reader: StreamReader;
let stream: StreamMapping;
let ports: OperatorPorts;

beforeAll(async () => {
  [old, active] = await Promise.all([newLocalTable(inject('dynamoEndpoint')), newLocalTable(inject('dynamoEndpoint'))]);
  handlers = await handlersOn(active);
  reader = new StreamReader(active.endpoint, active.tableName);
  stream = new StreamMapping(reader, handlers.dispatch);
  ports = operatorOn(active);
});
afterAll(() => reader.close());

beforeEach(() => {
  ses.reset();
  sns.reset();
  let n = 0;
  ses.on(SendEmailCommand).callsFake(async () => ({ MessageId: `ses-${n++}` }));
  sns.on(PublishCommand).callsFake(async () => ({ MessageId: `sns-${n++}` }));
});

/** A notification of the transfer fixture under another eventId, written now (the handlers are one table's). */
function notificationOf(eventId: string, channel: Channel): NotificationItem {
  const n = pendingNotification(channel, Date.now());
  // A customer of its own: the per-customer throttle (30 an hour) never holds a notice this file sends.
  return {
    ...n,
    eventId,
    userId: `u-${eventId}`,
    pk: eventPk(eventId),
    notificationId: notificationIdOf(eventId, channel),
  };
}

/**
 * An event the old region took and had not sent when it was lost: its original PENDING there, and in the active
 * region the successor a failover's promotion wrote (epoch 2) — FAILOVER_HELD, or UNKNOWN when it was in flight.
 */
async function heldAfterFailover(
  eventId: string,
  channel: Channel,
  status: 'FAILOVER_HELD' | 'UNKNOWN' = 'FAILOVER_HELD',
) {
  const original = notificationOf(eventId, channel);
  await old.doc.send(new PutCommand({ TableName: old.tableName, Item: original }));
  const heldReason = status === 'UNKNOWN' ? 'IN_FLIGHT_AT_FAILOVER' : 'INHERITED_PENDING';
  const successor = buildSuccessor(
    original,
    { status, heldReason },
    { owner: ACTIVE, epoch: 2 },
    Date.now(),
    DEFAULT_SWEEP_PLACEMENT,
  );
  await active.doc.send(new PutCommand({ TableName: active.tableName, Item: successor }));
  return successor.notificationId;
}

const itemOf = async (notificationId: string) =>
  (await active.eventItems(notificationId.split('#')[0] as string)).find((i) => i.notificationId === notificationId);

/** How many times the providers were asked to send this notification (emails by their tag, pushes by their payload). */
function sendsOf(notificationId: string): number {
  const emails = ses
    .commandCalls(SendEmailCommand)
    .map((c) => c.args[0].input.Tags?.find((t) => t.Name === 'notificationId')?.Value ?? '')
    .map((tag) => Buffer.from(tag, 'base64url').toString('utf8'));
  const pushes = sns.commandCalls(PublishCommand).map((c) => String(c.args[0].input.Message ?? ''));
  return emails.filter((id) => id === notificationId).length + pushes.filter((m) => m.includes(notificationId)).length;
}
const deliver = async () => {
  try {
    await converge(
      stream,
      handlers,
      { dynamoEndpoint: active.endpoint, tableName: active.tableName },
      // Not a test of speed: a converge measured at 3 s here must not fail a loaded CI machine (it had 5 s); under
      // the test timeout (180 s), so a pipeline that never converges still prints what is left below.
      { timeoutMs: 40_000 },
    );
  } catch (e) {
    console.log(
      JSON.stringify(
        (await active.allItems()).filter((i) => i.status === 'PENDING' || i.status === 'SENDING'),
        null,
        1,
      ),
    );
    throw e;
  }
};

async function refusalOf(run: () => Promise<unknown>) {
  try {
    await run();
  } catch (error) {
    if (error instanceof OperatorError) return error.refusal;
    throw error;
  }
  throw new Error('not refused');
}

/** The newest audit record of this action on this target, with its outcome. */
const lastAudit = async (action: string, target: string) =>
  (await listAudit(ports))
    .filter((r) => r.action === action && r.target === target)
    .sort((a, b) => a.at.localeCompare(b.at))
    .at(-1);

describe('ops held', () => {
  it('lists the held and unknown-in-flight notices page by page, the contact point masked', async () => {
    const a = await heldAfterFailover('held-list-1', 'EMAIL');
    const b = await heldAfterFailover('held-list-2', 'SMS', 'UNKNOWN');
    const first = await listHeld(ports, { limit: 1 });
    expect(first.held).toHaveLength(1);
    expect(first.next).toBeDefined();
    const all = [];
    let after: string | undefined;
    do {
      const page = await listHeld(ports, { limit: 1, ...(after === undefined ? {} : { after }) });
      all.push(...page.held);
      after = page.next;
    } while (after !== undefined);
    const mine = all.filter((h) => h.notificationId === a || h.notificationId === b);
    expect(mine.map((h) => [h.notificationId, h.status, h.heldReason]).sort()).toEqual([
      [a, 'FAILOVER_HELD', 'INHERITED_PENDING'],
      [b, 'UNKNOWN', 'IN_FLIGHT_AT_FAILOVER'],
    ]);
    const email = mine.find((h) => h.channel === 'EMAIL');
    expect(email).toMatchObject({ eventId: 'held-list-1', supersedes: 'NOTIFICATION#EMAIL', epoch: 2 });
    expect(email?.recipient).toMatch(/^h•••@example\.com$/);
    expect(email?.since).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});

describe('ops release-held', () => {
  it('sends a held notice once, late, and a second release is refused (ALREADY_RESOLVED), audited', async () => {
    const id = await heldAfterFailover('held-release-1', 'EMAIL');
    await deliver();
    expect(sendsOf(id)).toBe(0);
    const released = await apply(releaseHeld, ports, { notificationId: id }, ALICE);
    expect(released).toMatchObject({ fromStatus: 'FAILOVER_HELD', status: 'PENDING' });
    await deliver();
    expect(sendsOf(id)).toBe(1);
    expect(await itemOf(id)).toMatchObject({ status: 'SENT', late: true, heldDecision: { decision: 'RELEASED' } });
    expect(await lastAudit('RELEASE_HELD', id)).toMatchObject({ outcome: { result: 'DONE' } });

    const again = await refusalOf(() => apply(releaseHeld, ports, { notificationId: id }, ALICE));
    expect(again.code).toBe('ALREADY_RESOLVED');
    await deliver();
    expect(sendsOf(id)).toBe(1);
    expect(await lastAudit('RELEASE_HELD', id)).toMatchObject({
      outcome: { result: 'REFUSED', details: { code: 'ALREADY_RESOLVED' } },
    });
  });

  it("on an at-most-once channel the preview says plainly the customer may get it twice, and that it is the operator's decision", async () => {
    const id = await heldAfterFailover('held-preview-1', 'SMS');
    const plan = releaseHeld.decide(await releaseHeld.read(ports, { notificationId: id }), { notificationId: id });
    expect(plan.ok).toBe(true);
    const shown = plan.ok ? releaseHeld.shown(plan.value) : {};
    expect(shown).toMatchObject({ deliveryPolicy: 'AT_MOST_ONCE', fromStatus: 'FAILOVER_HELD' });
    expect(String(shown.risk)).toMatch(/gets it twice/);
    expect(String(shown.risk)).toMatch(/your decision/);
    // The operator API answers the same preview over HTTP, and names the kind four eyes may be set for.
    const policy = approvalPolicyOf(undefined);
    if ('unknown' in policy) throw new Error('the default policy');
    const http = await answer(operations(ports, policy.policy), ALICE.identity, {
      method: 'POST',
      path: '/actions/RELEASE_HELD/preview',
      query: {},
      body: { notificationId: id },
    });
    expect(http).toMatchObject({
      status: 200,
      body: { ok: true, kind: 'RELEASE_HELD', approvalRequired: false, shown: { risk: shown.risk } },
    });
  });

  it('a notice no failover held is refused NOT_HELD, and an unknown id NOT_FOUND, each audited', async () => {
    const { sweepKey: _k, sweepAt: _a, ...plain } = notificationOf('plain-1', 'EMAIL');
    await active.doc.send(new PutCommand({ TableName: active.tableName, Item: { ...plain, status: 'FAILED' } }));
    const notHeld = await refusalOf(() => apply(releaseHeld, ports, { notificationId: 'plain-1#EMAIL' }, ALICE));
    expect(notHeld.code).toBe('NOT_HELD');
    expect(await lastAudit('RELEASE_HELD', 'plain-1#EMAIL')).toMatchObject({
      outcome: { result: 'REFUSED', details: { code: 'NOT_HELD' } },
    });
    const missing = await refusalOf(() => apply(settleHeld, ports, { notificationId: 'nothing-1#EMAIL#E2' }, ALICE));
    expect(missing.code).toBe('NOT_FOUND');
    expect(await lastAudit('SETTLE_HELD', 'nothing-1#EMAIL#E2')).toMatchObject({ outcome: { result: 'REFUSED' } });
  });
});

describe('a release racing ops reconcile on the same notice', () => {
  const fenceAt = async (table: LocalTable, control: FenceControl) => {
    const name = `${table.tableName}-fence-${Math.random().toString(36).slice(2, 8)}`;
    const db = localClient(table.endpoint);
    await db.send(new CreateTableCommand(createFenceTableInput(name)));
    db.destroy();
    const fence = new DynamoFenceStore(table.doc, name, 4);
    await fence.initialise(control);
    return fence;
  };
  const base = { since: 0, by: 'test', reason: 'failover', epoch: 2 };
  const sides = async () => ({
    from: {
      region: OLD,
      fence: await fenceAt(old, { ...base, region: OLD, state: 'FENCED', epoch: 1, mode: 'INITIAL', quiescentAt: 1 }),
      store: new DynamoSuccessorStore(old.doc, old.tableName, 4),
      intake: { enable: async () => undefined, disable: async () => undefined },
    },
    to: {
      region: ACTIVE,
      fence: await fenceAt(active, {
        ...base,
        region: ACTIVE,
        state: 'ACTIVE',
        mode: 'FORCED',
        cutAt: 0,
        predecessor: { region: OLD, epoch: 1 },
      }),
      store: new DynamoSuccessorStore(active.doc, active.tableName, 4),
      intake: { enable: async () => undefined, disable: async () => undefined },
    },
  });
  const request = {
    by: 'test',
    reason: 'old region back',
    policies: ports?.policies ?? { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
    secondCopy: [],
    placement: DEFAULT_SWEEP_PLACEMENT,
    lookupMs: 3_600_000,
    settleAfterMs: 0,
  } as const;
  const clock = { now: Date.now, sleep: async () => undefined };

  it('reconcile releasing it between the release read and its write: the release is refused (CHANGED), audited, and it is sent once', async () => {
    const id = await heldAfterFailover('held-race-1', 'EMAIL');
    await deliver();
    const { from, to } = await sides();
    // The reconciliation runs — and dispatch sends what it released — in the gap between the release's read and its
    // conditional write: a write on what was read, unconditioned, would put it back to PENDING and send it again.
    const racing: OperatorPorts = {
      ...ports,
      held: {
        ...ports.held,
        page: ports.held.page.bind(ports.held),
        read: ports.held.read.bind(ports.held),
        decide: async (...args) => {
          await reconcile(from, to, request, clock);
          await deliver();
          return ports.held.decide(...args);
        },
      },
    };
    const refused = await refusalOf(() => apply(releaseHeld, racing, { notificationId: id }, ALICE));
    expect(refused.code).toBe('CHANGED');
    expect(await lastAudit('RELEASE_HELD', id)).toMatchObject({
      outcome: { result: 'REFUSED', details: { code: 'CHANGED' } },
    });
    await deliver();
    expect(sendsOf(id)).toBe(1);
    expect(await itemOf(id)).toMatchObject({ status: 'SENT' });
  });

  it('both at once: whichever wins, the notice is sent once', async () => {
    const id = await heldAfterFailover('held-race-2', 'EMAIL');
    await deliver();
    const { from, to } = await sides();
    const [report, release] = await Promise.allSettled([
      reconcile(from, to, request, clock),
      apply(releaseHeld, ports, { notificationId: id }, ALICE),
    ]);
    expect(report.status).toBe('fulfilled');
    await deliver();
    expect(sendsOf(id)).toBe(1);
    expect(await itemOf(id)).toMatchObject({ status: 'SENT' });
    if (release.status === 'rejected')
      expect((release.reason as OperatorError).refusal.code).toMatch(/CHANGED|ALREADY_RESOLVED/);
  });
  it('a reconcile interrupted between its two writes, run again, sends the notice once and counts it released once', async () => {
    const id = await heldAfterFailover('held-interrupt-1', 'EMAIL');
    await deliver();
    const { from, to } = await sides();
    // The first run stops after the original was handed over in the old region, before the successor moved (a Lambda
    // timeout, a throttle, a 5xx of the active region's table).
    const dying = {
      ...to,
      store: Object.assign(Object.create(Object.getPrototypeOf(to.store)), to.store, {
        move: async () => {
          throw new Error('interrupted');
        },
      }),
    };
    await expect(reconcile(from, dying, request, clock)).rejects.toThrow('interrupted');
    expect((await old.eventItems('held-interrupt-1')).find((i) => i.sk === 'NOTIFICATION#EMAIL')).toMatchObject({
      status: 'HANDED_OVER',
      handedOverTo: 'NOTIFICATION#EMAIL#E2',
    });
    const report = await reconcile(from, to, request, clock);
    expect(report).toMatchObject({ released: 1, handedOver: 0, ids: { released: [id] } });
    await deliver();
    expect(sendsOf(id)).toBe(1);
    expect(await itemOf(id)).toMatchObject({ status: 'SENT', late: true, reconcileRun: report.runId });
  });

  it('two reconciles at once (a re-run after a 504) send each of 40 held notices once, and their counts add up to 40', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 40; n++) ids.push(await heldAfterFailover(`held-conc-${n}`, 'EMAIL'));
    await deliver();
    const { from, to } = await sides();
    const runs = await Promise.all([reconcile(from, to, request, clock), reconcile(from, to, request, clock)]);
    await deliver();
    expect(ids.filter((id) => sendsOf(id) !== 1)).toEqual([]);
    const released = runs.flatMap((r) => r.ids.released.filter((id) => ids.includes(id)));
    // Each notice released by exactly one run's write, none handed over, none counted twice.
    expect(released.sort()).toEqual([...ids].sort());
    expect(runs.flatMap((r) => r.ids.handedOver.filter((id) => ids.includes(id)))).toEqual([]);
    for (const r of runs) {
      const other = r.ids.alreadyDecided.filter((id) => r.ids.released.includes(id));
      expect(other).toEqual([]);
    }
  });

  it('a release by an operator that wins the race is reported decidedByOperator, not waiting, and sent once', async () => {
    const id = await heldAfterFailover('held-operator-wins-1', 'EMAIL');
    await deliver();
    const { from, to } = await sides();
    let released = false;
    // The operator's release lands between reconcile's read of the successor and its write.
    const racing = {
      ...to,
      store: Object.assign(Object.create(Object.getPrototypeOf(to.store)), to.store, {
        move: async (...args: Parameters<typeof to.store.move>) => {
          if (!released && args[0].notificationId === id) {
            released = true;
            await apply(releaseHeld, ports, { notificationId: id }, ALICE);
          }
          return to.store.move(...args);
        },
      }),
    };
    const report = await reconcile(from, racing, request, clock);
    expect(report.ids.decidedByOperator).toContain(id);
    expect(report.ids.waiting).not.toContain(id);
    expect(report.ids.released).not.toContain(id);
    await deliver();
    expect(sendsOf(id)).toBe(1);
  });
  describe('when the old region answers', () => {
    const looking = async (down = false) => {
      const { from, to } = await sides();
      const lost: typeof from.fence = Object.assign(Object.create(Object.getPrototypeOf(from.fence)), from.fence, {
        control: async () => Promise.reject(new Error('ECONNREFUSED')),
      });
      const glance = [to, down ? { ...from, fence: lost } : from];
      const withLook: OperatorPorts = { ...ports, oldRegion: oldRegionLookOf({ scope: { acting: ACTIVE }, glance }) };
      return { from, to, withLook };
    };

    it('release-held and settle-held are refused USE_RECONCILE, audited, nothing sent: reconcile decides from its record', async () => {
      const id = await heldAfterFailover('held-answers-1', 'SMS');
      const { withLook } = await looking();
      const release = await refusalOf(() => apply(releaseHeld, withLook, { notificationId: id }, ALICE));
      expect(release).toMatchObject({ code: 'USE_RECONCILE' });
      expect(release.message).toMatch(`the old region ${OLD} answers: \`ops reconcile --from ${OLD}\` decides ${id}`);
      const settle = await refusalOf(() => apply(settleHeld, withLook, { notificationId: id }, ALICE));
      expect(settle.code).toBe('USE_RECONCILE');
      expect(await lastAudit('RELEASE_HELD', id)).toMatchObject({
        outcome: { result: 'REFUSED', details: { code: 'USE_RECONCILE' } },
      });
      await deliver();
      expect(sendsOf(id)).toBe(0);
      expect(await itemOf(id)).toMatchObject({ status: 'FAILOVER_HELD' });
    });

    it('an old region that does not answer leaves the decision to the operator, and the preview says so', async () => {
      const id = await heldAfterFailover('held-answers-2', 'EMAIL');
      const { withLook } = await looking(true);
      const plan = releaseHeld.decide(await releaseHeld.read(withLook, { notificationId: id }), { notificationId: id });
      const shown = plan.ok ? releaseHeld.shown(plan.value) : {};
      expect(shown).toMatchObject({ oldRegion: `${OLD} does not answer` });
      expect(heldPreviewText('RELEASE_HELD', id, shown)).toContain(`The old region: ${OLD} does not answer.`);
    });

    it('once a reconciliation ran and proved nothing for a notice, the operator decides it', async () => {
      const id = await heldAfterFailover('held-answers-3', 'EMAIL');
      // The old region took the event and its notification never reached its table: nothing proves it unsent.
      await old.doc.send(
        new DeleteCommand({
          TableName: old.tableName,
          Key: { pk: eventPk('held-answers-3'), sk: 'NOTIFICATION#EMAIL' },
        }),
      );
      await old.doc.send(
        new PutCommand({ TableName: old.tableName, Item: { pk: eventPk('held-answers-3'), sk: 'INBOX' } }),
      );
      const { from, to, withLook } = await looking();
      const report = await reconcile(from, to, request, clock);
      expect(report.ids.waiting).toContain(id);
      const plan = releaseHeld.decide(await releaseHeld.read(withLook, { notificationId: id }), { notificationId: id });
      expect(plan.ok && releaseHeld.shown(plan.value)).toMatchObject({
        oldRegion: `${OLD} answers; ops reconcile ran and proved nothing for this notice`,
      });
    });
  });
});

describe('ops settle-held', () => {
  it('closes a held notice without sending: FAILED (HELD_SETTLED), terminal — a release after it is refused, nothing sent', async () => {
    const id = await heldAfterFailover('held-settle-1', 'EMAIL');
    const settled = await apply(settleHeld, ports, { notificationId: id }, ALICE);
    expect(settled).toMatchObject({ fromStatus: 'FAILOVER_HELD', status: 'FAILED' });
    const item = await itemOf(id);
    expect(item).toMatchObject({ status: 'FAILED', lastError: 'HELD_SETTLED', heldDecision: { decision: 'SETTLED' } });
    expect(item?.sweepKey).toBeUndefined();
    expect(await lastAudit('SETTLE_HELD', id)).toMatchObject({
      outcome: { result: 'DONE', details: { status: 'FAILED' } },
    });
    const after = await refusalOf(() => apply(releaseHeld, ports, { notificationId: id }, ALICE));
    expect(after.code).toBe('ALREADY_RESOLVED');
    await deliver();
    expect(sendsOf(id)).toBe(0);
    expect((await listHeld(ports)).held.map((h) => h.notificationId)).not.toContain(id);
  });

  it("with the proof of the old region's send it is handed over; an unknown one without proof stays UNKNOWN and waits no more", async () => {
    const proven = await heldAfterFailover('held-settle-2', 'EMAIL');
    await apply(settleHeld, ports, { notificationId: proven, sentBefore: 'ses-0102' }, ALICE);
    expect(await itemOf(proven)).toMatchObject({
      status: 'HANDED_OVER',
      handedOverTo: 'NOTIFICATION#EMAIL',
      settledProof: 'ses-0102',
    });
    const unknown = await heldAfterFailover('held-settle-3', 'SMS', 'UNKNOWN');
    await apply(settleHeld, ports, { notificationId: unknown }, ALICE);
    const item = await itemOf(unknown);
    expect(item).toMatchObject({ status: 'UNKNOWN', heldDecision: { decision: 'SETTLED' } });
    expect(item?.sweepKey).toBeUndefined();
    const again = await refusalOf(() => apply(settleHeld, ports, { notificationId: unknown }, ALICE));
    expect(again.code).toBe('ALREADY_RESOLVED');
  });
});
