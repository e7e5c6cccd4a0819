/**
 * The support console's figures (`npm run bench -- --console`): a customer look-up — the page support staff load —
 * and a quarantined event's look-up, through the console's own API handler (functions/console/api.ts) on DynamoDB
 * Local, at a table and an audit log of a realistic size around them: other customers' events, a day of quarantined
 * records, other customers' audit records. Beside them, the customer's audit trail read through its index and, for
 * comparison, by reading the whole log (what every look-up did before the index). The evidence store is a local
 * folder here, S3 in a stack: the figures are this machine's, for comparing, not a deployed console's latency.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { answerApi, type ConsoleDeps } from '../../functions/console/api.ts';
import { type Caller, callerOf, parseGroupRoles } from '../../functions/console/caller.ts';
import { API_ROUTES, type ApiRouteName } from '../../functions/contracts/console-routes.ts';
import { approvalPolicyOf } from '../../functions/domain/approval.ts';
import { buildQuarantine } from '../../functions/domain/notification.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { listAudit, operations, operatorPorts } from '../../functions/operator/index.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { createTable, localClient } from '../local/dynamodb-local.ts';
import type { BenchArgs } from './options.ts';
import { log, median } from './workload.ts';

const CUSTOMER = 'bench-customer';
const CUSTOMER_EVENTS = 30;
const GROUPS = parseGroupRoles(JSON.stringify({ support: ['s'], approver: ['a'] }));
const AGENT = callerOf({ 'cognito:username': 'bench_agent', name: 'Bench', 'custom:groups': 's' }, GROUPS) as Caller;

/** The sizes around the look-ups: full, or --quick's. */
const sizesOf = (quick: boolean) => ({
  otherCustomers: quick ? 200 : 5_000,
  quarantined: quick ? 200 : 10_000,
  otherAuditRecords: quick ? 200 : 5_000,
  customerAuditRecords: 20,
  lookups: quick ? 5 : 30,
});

export async function measureConsole(endpoint: string, args: BenchArgs) {
  const sizes = sizesOf(args.quick);
  const tableName = `bench-console-${Date.now().toString(36)}`;
  await createTable(endpoint, tableName);
  const doc = DynamoDBDocumentClient.from(localClient(endpoint));
  const dir = mkdtempSync(join(tmpdir(), 'bench-console-'));
  try {
    const ports = operatorPorts({
      doc,
      tableName,
      evidence: new FileEvidenceStore(dir),
      invokeIngest: () => Promise.reject(new Error('the bench feeds nothing through ingest')),
    });
    const policy = approvalPolicyOf(undefined, 24);
    if ('unknown' in policy) throw new Error('approval policy');
    const deps: ConsoleDeps = { ports, ops: operations(ports, policy.policy) };
    await seed(doc, tableName, sizes);
    log('console: table seeded');
    await seedAudit(deps, sizes);
    log('console: audit seeded');
    const ask = (name: ApiRouteName, body: unknown) =>
      answerApi(
        API_ROUTES.find((r) => r.name === name) as (typeof API_ROUTES)[number],
        AGENT,
        JSON.stringify(body),
        deps,
      );
    const customer = await timed(sizes.lookups, async () => {
      const a = await ask('customer', { userId: CUSTOMER });
      if (a.status !== 200) throw new Error(`customer look-up answered ${a.status}`);
    });
    const quarantine = await timed(sizes.lookups, async () => {
      const a = await ask('event', { eventId: 'bench-q-0' });
      if (a.status !== 200 || (a.body as { quarantined: unknown[] }).quarantined.length !== 1) {
        throw new Error('quarantine look-up found nothing');
      }
    });
    const since = new Date(Date.now() - 90 * 86_400_000).toISOString();
    const subjects = [CUSTOMER, ...Array.from({ length: CUSTOMER_EVENTS }, (_, i) => `bench-e-${i}`)];
    const auditIndexed = await timed(sizes.lookups, () => ports.audit.listAbout(subjects, since));
    const auditWholeLog = await timed(Math.min(3, sizes.lookups), () => listAudit(ports, since));
    return {
      sizes: { ...sizes, customerEvents: CUSTOMER_EVENTS },
      customerLookupMs: customer,
      quarantinedEventLookupMs: quarantine,
      customerAuditThroughIndexMs: auditIndexed,
      customerAuditByReadingWholeLogMs: auditWholeLog,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function timed(rounds: number, run: () => Promise<unknown>): Promise<{ p50: number; max: number }> {
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await run();
    ms.push(performance.now() - start);
  }
  return { p50: Math.round(median(ms) * 10) / 10, max: Math.round(Math.max(...ms) * 10) / 10 };
}

/** The customer's events (an email delivered, a text failed, each), other customers' events, a day of quarantine. */
async function seed(doc: DynamoDBDocumentClient, tableName: string, sizes: ReturnType<typeof sizesOf>) {
  const now = Date.now();
  const items: Record<string, unknown>[] = [];
  const event = (eventId: string, userId: string, at: string) => {
    items.push({
      pk: `EVENT#${eventId}`,
      sk: 'INBOX',
      userKey: `USER#${userId}`,
      occurredAt: at,
      type: 'TransferCompleted',
    });
    for (const [channel, recipient, status] of [
      ['EMAIL', `${userId}@example.com`, 'SENT'],
      ['SMS', '+14155550100', 'FAILED'],
    ] as const) {
      items.push({
        pk: `EVENT#${eventId}`,
        sk: `NOTIFICATION#${channel}`,
        kind: 'NOTIFICATION',
        notificationId: `${eventId}#${channel}`,
        eventId,
        channel,
        userId,
        recipient,
        status,
        attempt: 1,
        template: 'TransferCompleted',
        occurredAt: at,
        createdAt: at,
      });
    }
  };
  for (let i = 0; i < CUSTOMER_EVENTS; i++)
    event(`bench-e-${i}`, CUSTOMER, new Date(now - i * 3_600_000).toISOString());
  for (let i = 0; i < sizes.otherCustomers; i++)
    event(`bench-o-${i}`, `bench-u-${i}`, new Date(now - i * 60_000).toISOString());
  const limit = pLimit(16);
  const batches = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  await Promise.all(
    batches.map((batch) =>
      limit(() =>
        doc.send(
          new BatchWriteCommand({ RequestItems: { [tableName]: batch.map((Item) => ({ PutRequest: { Item } })) } }),
        ),
      ),
    ),
  );
  // Quarantined records as ingest writes them (the item and its reference), over the last day.
  const store = new DynamoInboxStore(doc, tableName);
  const value = Buffer.from(JSON.stringify({ eventId: 'x', recipient: { userId: CUSTOMER } })).toString('base64');
  await Promise.all(
    Array.from({ length: sizes.quarantined }, (_, i) =>
      limit(async () => {
        const item = buildQuarantine(
          { reason: 'INVALID_AMOUNT', detail: 'amount must be a string (at data.amount)', eventId: `bench-q-${i}` },
          value,
          { topic: 'banking.transfers', partition: i % 12, offset: i },
          now - (i % 86_400) * 1000,
          { retentionDays: 35 },
        );
        if (i % 500 === 0) item.userId = CUSTOMER;
        await store.quarantine(item);
      }),
    ),
  );
}

/** Other customers' audit records around the customer's own: what a desk writes in 90 days, scaled down. */
async function seedAudit(deps: ConsoleDeps, sizes: ReturnType<typeof sizesOf>) {
  const by = { principal: 'bench_agent', verifiedBy: 'IDENTITY_PROVIDER' as const };
  const write = async (target: string) => {
    const entry = await deps.ports.audit.record(
      { action: 'REVEAL', step: 'CONFIRM', by, reason: 'customer on the phone', target, details: {} },
      Date.now(),
    );
    await deps.ports.audit.recordOutcome(entry.key, { result: 'DONE', details: {} }, Date.now());
  };
  const limit = pLimit(16);
  await Promise.all([
    ...Array.from({ length: sizes.otherAuditRecords }, (_, i) => limit(() => write(`bench-o-${i}#SMS`))),
    ...Array.from({ length: sizes.customerAuditRecords }, (_, i) =>
      limit(() => write(`bench-e-${i % CUSTOMER_EVENTS}#SMS`)),
    ),
  ]);
}
