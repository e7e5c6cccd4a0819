/**
 * The sweeper alone, on DynamoDB Local: how long a deferred critical notice waits behind a backlog of deferred normal
 * ones. `--backlog` transfer-notice emails (default 10,000), all deferred and due, and then one sign-in-class notice
 * (PasswordChanged) deferred through the store as dispatch defers it (a provider's throttle), due after all of them.
 * The sweeper's own handler runs with the stack's default settings — a 14/s SES quota × the one-minute schedule, 840
 * wake-ups a run — once after the other, each run standing for a minute of the schedule, until the critical one is
 * woken; a woken item is not due again for the stuck threshold, so each run wakes the next 840. Prints the run the
 * critical notice was woken in and each run's figures.
 *
 * `--claimed k` hides k dead claims in the backlog (SENDING, their lease expired, as a crashed holder leaves them:
 * at their PENDING sweepAt, spread from the oldest due item to the pending threshold ahead), and runs until every one
 * is resolved: the cap stops the due round early, so the lease pass reads the rest (functions/sweeper/lease-pass.ts).
 * Each run prints the read units its Queries consumed (as DynamoDB Local reports them) and the lease pass's pages.
 *
 *   npx tsx tools/bench/sweep-backlog.ts [--backlog 10000] [--claimed 0] [--run-ms 60000]
 */
import { DynamoDBDocumentClient, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { DISPATCH_TIMING } from '../../functions/contracts/dispatch-timing.ts';
import { type DecodedTransfer, decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { notificationKey } from '../../functions/domain/keys.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { createTable, localClient, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { lambdaContext, loadHandlers } from '../local/pipeline.ts';
import { seedItems } from './seed.ts';

const arg = process.argv.indexOf('--backlog');
const BACKLOG = arg > 0 ? Number(process.argv[arg + 1]) : 10_000;
const claimedArg = process.argv.indexOf('--claimed');
const CLAIMED = claimedArg > 0 ? Number(process.argv[claimedArg + 1]) : 0;
const THRESHOLD_MS = DISPATCH_TIMING.pendingThresholdSeconds * 1000;
const runArg = process.argv.indexOf('--run-ms');
/** The time a run is given (the Lambda context's): shorter than a minute, a backlog's lease pass spans runs. */
const RUN_MS = runArg > 0 ? Number(process.argv[runArg + 1]) : 60_000;

function decoded(event: object): DecodedTransfer {
  const d = decodeRecordValue(Buffer.from(JSON.stringify(event)).toString('base64'), 65_536);
  if (!isTransfer(d)) throw new Error(`not a notice: ${JSON.stringify(d)}`);
  return d;
}
const recipient = { userId: 'u-1', locale: 'en', email: 'alex@example.com' };
const now = Date.now();
const occurredAt = new Date(now - 60_000).toISOString();

/** The backlog: deferred once, due ten minutes ago and after, oldest first. */
const backlog = () =>
  Array.from({ length: BACKLOG }, (_, i) => {
    const due = now - 600_000 + i;
    const { event } = decoded({
      eventId: `backlog-${i}`,
      type: 'TransferCompleted',
      occurredAt,
      recipient,
      data: { transferId: `t-${i}`, amount: '100', currency: 'USD', counterpartyName: 'Pat' },
    });
    return {
      ...buildNotification(event, 'EMAIL', recipient.email, now - 3_600_000, { retentionDays: 1 }),
      attempt: 1,
      deferrals: 1,
      retryAt: due,
      sweepAt: due,
    };
  });

/** Dead claims: claimed and never finished, their lease ended 10 s ago, at sweepAt from the oldest due to T ahead. */
const deadClaims = () =>
  Array.from({ length: CLAIMED }, (_, j) => {
    const { event } = decoded({
      eventId: `claimed-${j}`,
      type: 'TransferCompleted',
      occurredAt,
      recipient,
      data: { transferId: `c-${j}`, amount: '100', currency: 'USD', counterpartyName: 'Pat' },
    });
    const sweepAt = Math.round(now - 600_000 + ((j + 0.5) / CLAIMED) * (600_000 + THRESHOLD_MS));
    return {
      ...buildNotification(event, 'EMAIL', recipient.email, sweepAt - THRESHOLD_MS, { retentionDays: 1 }),
      status: 'SENDING' as const,
      attempt: 1,
      claimId: `dead-${j}`,
      leaseUntil: now - 10_000,
      sweepAt,
    };
  });

const db = await startDynamoDbLocal();
try {
  const tableName = 'sweep-backlog';
  await createTable(db.endpoint, tableName);
  const doc = DynamoDBDocumentClient.from(localClient(db.endpoint), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const store = new DynamoNotificationStore(doc, tableName);
  const { event } = decoded({
    eventId: 'critical-1',
    type: 'PasswordChanged',
    occurredAt,
    recipient,
    data: { changeId: 'pw-1', via: 'APP' },
  });
  await seedItems(doc, tableName, [
    ...backlog(),
    ...deadClaims(),
    buildNotification(event, 'EMAIL', recipient.email, now - 120_000, { retentionDays: 1 }),
  ]);
  // The critical notice: claimed and deferred by the store, due a second ago.
  const key = notificationKey('critical-1', 'EMAIL');
  const claim = await store.claim(key, 'claim-1', now - 60_000, 30_000);
  if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
  const retryAt = now - 1_000;
  await store.release(claim.item, { reason: 'THROTTLED', retryAt, sweepAt: retryAt, deferral: true }, now - 60_000);
  console.log(
    `backlog ${BACKLOG} deferred emails; the critical notice's sweep key: ${(await store.get(key))?.sweepKey}`,
  );

  // The stack's sweeper with its defaults: the local run's environment, with the deployed stuck threshold.
  const { sweeper } = await loadHandlers({
    dynamoEndpoint: db.endpoint,
    sesEndpoint: 'http://127.0.0.1:9',
    snsEndpoint: 'http://127.0.0.1:9',
    tableName,
    extra: {
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      POWERTOOLS_METRICS_DISABLED: 'true',
      PENDING_THRESHOLD_SECONDS: String(DISPATCH_TIMING.pendingThresholdSeconds),
    },
  });
  // The read units the sweeper's Queries consumed, as DynamoDB Local reports them.
  let rru = 0;
  const { documentClient } = await import('../../functions/commons/dynamodb-client.ts');
  documentClient.middlewareStack.add(
    (next, context) => async (args) => {
      const query = context.commandName === 'QueryCommand';
      if (query) (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      if (query) rru += (out.output as QueryCommandOutput).ConsumedCapacity?.CapacityUnits ?? 0;
      return out;
    },
    { step: 'initialize', name: 'benchConsumedReads' },
  );
  const deadLeft = async () => {
    let left = 0;
    for (let j = 0; j < CLAIMED; j++)
      if ((await store.get(notificationKey(`claimed-${j}`, 'EMAIL')))?.status === 'SENDING') left++;
    return left;
  };
  let wokenIn: number | undefined;
  let resolvedIn: number | undefined = CLAIMED === 0 ? 0 : undefined;
  for (let run = 1; ; run++) {
    rru = 0;
    const started = performance.now();
    const r = await sweeper({}, lambdaContext('notifier-sweeper', RUN_MS));
    const ms = Math.round(performance.now() - started);
    const woken = (await store.get(key))?.retryAt === undefined;
    const left = await deadLeft();
    // The handler's summary has the queries it made, too (functions/sweeper/index.ts).
    const s = r as { pages?: number; leasePages?: number; leasePassUnfinished?: number; resolvedUnknown?: number };
    console.log(
      `run ${run}: woken ${r.woken}, queries ${s.pages} + lease pages ${s.leasePages} (unfinished ${s.leasePassUnfinished}), ` +
        `${Math.round(rru)} RRU, ${ms} ms; dead claims resolved ${s.resolvedUnknown}, left ${left}` +
        `${woken ? '; the critical notice woken' : ''}`,
    );
    if (woken && wokenIn === undefined) wokenIn = run;
    if (left === 0 && resolvedIn === undefined) resolvedIn = run;
    if (wokenIn !== undefined && resolvedIn !== undefined) break;
    // A run too short for the due round (--run-ms under the lease pass's reserve) never wakes the critical notice.
    if (resolvedIn !== undefined && run >= 30) break;
    if (r.woken === 0 && s.leasePages === 0) throw new Error('nothing woken or read, and a notice not found');
  }
  console.log(`critical notice woken in run ${wokenIn}: about ${(wokenIn ?? 1) - 1} minute(s) after it was due`);
  if (CLAIMED > 0) console.log(`${CLAIMED} dead claims in a backlog of ${BACKLOG}: all resolved in run ${resolvedIn}`);
} finally {
  await db.stop();
}
