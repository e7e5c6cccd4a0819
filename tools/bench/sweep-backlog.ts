/**
 * The sweeper alone, on DynamoDB Local: how long a deferred critical notice waits behind a backlog of deferred normal
 * ones. `--backlog` transfer-notice emails (default 10,000), all deferred and due, and then one sign-in-class notice
 * (PasswordChanged) deferred through the store as dispatch defers it (a provider's throttle), due after all of them.
 * The sweeper's own handler runs with the stack's default settings — a 14/s SES quota × the one-minute schedule, 840
 * wake-ups a run — once after the other, each run standing for a minute of the schedule, until the critical one is
 * woken; a woken item is not due again for the stuck threshold, so each run wakes the next 840. Prints the run the
 * critical notice was woken in and each run's figures.
 *
 *   npx tsx tools/bench/sweep-backlog.ts [--backlog 10000]
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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
  for (let run = 1; ; run++) {
    const started = performance.now();
    const r = await sweeper({}, lambdaContext('notifier-sweeper', 60_000));
    const ms = Math.round(performance.now() - started);
    const woken = (await store.get(key))?.retryAt === undefined;
    // The handler's summary has the queries it made, too (functions/sweeper/index.ts).
    const queries = (r as { pages?: number }).pages;
    console.log(
      `run ${run}: woken ${r.woken}, queries ${queries}, ${ms} ms${woken ? '; the critical notice woken' : ''}`,
    );
    if (woken) {
      console.log(`critical notice woken in run ${run}: about ${run - 1} minute(s) after it was due`);
      break;
    }
    if (r.woken === 0) throw new Error('nothing woken and the critical notice not found');
  }
} finally {
  await db.stop();
}
