/**
 * The sweeper alone, on DynamoDB Local: how long a deferred critical notice waits behind a backlog of deferred normal
 * ones. `--backlog` transfer-notice emails (default 10,000), all deferred and due, and then one sign-in-class notice
 * (PasswordChanged) deferred through the store as dispatch defers it (a provider's throttle), due after all of them.
 * The sweeper runs with the stack's default settings and the clock held still — a 14/s SES quota × the one-minute
 * schedule, 840 wake-ups a run — until the critical one is woken; a woken item is not due again at that instant, so
 * each run wakes the next 840. Prints the run the critical notice was woken in (each run is a minute of real time) and
 * each run's figures.
 *
 *   npx tsx tools/scripts/sweep-backlog.ts [--backlog 10000]
 */
import { BatchWriteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { loadSweeperConfig } from '../../functions/commons/config.ts';
import { brandEnvValue } from '../../functions/domain/brand.ts';
import { type DecodedTransfer, decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { notificationKey } from '../../functions/domain/keys.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { sweep } from '../../functions/sweeper/sweep.ts';
import { createTable, localClient, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';

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

const db = await startDynamoDbLocal();
try {
  const tableName = 'sweep-backlog';
  await createTable(db.endpoint, tableName);
  const doc = DynamoDBDocumentClient.from(localClient(db.endpoint), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const store = new DynamoNotificationStore(doc, tableName);

  // The backlog: deferred once, due ten minutes ago and after, oldest first.
  const items = Array.from({ length: BACKLOG }, (_, i) => {
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
  const writes = pLimit(8);
  await Promise.all(
    Array.from({ length: Math.ceil(items.length / 25) }, (_, b) =>
      writes(async () => {
        let batch = items.slice(b * 25, b * 25 + 25).map((Item) => ({ PutRequest: { Item } }));
        while (batch.length > 0) {
          const r = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: batch } }));
          batch = (r.UnprocessedItems?.[tableName] ?? []) as typeof batch;
        }
      }),
    ),
  );

  // The critical notice: claimed and deferred by the store, due a second ago.
  const { event } = decoded({
    eventId: 'critical-1',
    type: 'PasswordChanged',
    occurredAt,
    recipient,
    data: { changeId: 'pw-1', via: 'APP' },
  });
  await doc.send(
    new PutCommand({
      TableName: tableName,
      Item: buildNotification(event, 'EMAIL', recipient.email, now - 120_000, { retentionDays: 1 }),
    }),
  );
  const claim = await store.claim(notificationKey('critical-1', 'EMAIL'), 'claim-1', now - 60_000, 30_000);
  if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
  const retryAt = now - 1_000;
  await store.release(claim.item, { reason: 'THROTTLED', retryAt, sweepAt: retryAt, deferral: true }, now - 60_000);
  const critical = await store.get(notificationKey('critical-1', 'EMAIL'));
  console.log(`backlog ${BACKLOG} deferred emails; the critical notice's sweep key: ${critical?.sweepKey}`);

  for (let run = 1; ; run++) {
    const started = performance.now();
    // The deployed defaults (14 emails/s, a one-minute period, pages of 100 …): what the stack's sweeper runs with.
    const r = await sweep({
      store,
      now: () => now,
      ...loadSweeperConfig({
        TABLE_NAME: tableName,
        SENDER_EMAIL: 'notifications@bank.example',
        BRAND: brandEnvValue(EXAMPLE_BRAND),
      }),
      deadline: now + 55_000,
    });
    const ms = Math.round(performance.now() - started);
    const found = r.woken.findIndex((e) => e.notificationId === 'critical-1#EMAIL');
    console.log(
      `run ${run}: woken ${r.woken.length}, queries ${r.pages}, ${ms} ms${found < 0 ? '' : `; the critical notice woken, number ${found + 1} of the run`}`,
    );
    if (found >= 0) {
      console.log(`critical notice woken in run ${run}: about ${run - 1} minute(s) after it was due`);
      break;
    }
    if (r.woken.length === 0) throw new Error('nothing woken and the critical notice not found');
  }
} finally {
  await db.stop();
}
