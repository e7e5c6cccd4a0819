/**
 * The support console's figures (`npm run bench -- --console`): a customer look-up — the page support staff load —
 * and a quarantined event's look-up, through the console's deployed handler (functions/console/index.ts, as API
 * Gateway calls it after its authorizer) on DynamoDB Local, at a table and an audit log of a realistic size around them: other customers' events, a day of quarantined
 * records, other customers' audit records. Beside them, the customer's audit trail read through its index and, for
 * comparison, by reading the whole log (what every look-up did before the index). The evidence store is a local
 * folder here, S3 in a stack: the figures are this machine's, for comparing, not a deployed console's latency.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import pLimit from 'p-limit';
import { API_ROUTES, type ApiRouteName } from '../../functions/contracts/console-routes.ts';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import { buildQuarantine } from '../../functions/domain/notification.ts';
import { buildQuarantineRef } from '../../functions/domain/quarantine-ref.ts';
import { listAudit, type OperatorPorts, operatorPorts } from '../../functions/operator/index.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { createTable, localClient } from '../local/dynamodb-local.ts';
import type { BenchArgs } from './options.ts';
import { seedItems } from './seed.ts';
import { log, median } from './workload.ts';

const CUSTOMER = 'bench-customer';
const CUSTOMER_EVENTS = 30;
/** The claims API Gateway's authorizer hands over for a support agent. */
const AGENT = { 'cognito:username': 'bench_agent', name: 'Bench', 'custom:groups': '["bench-support"]' };

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
      evidenceIndexTableName: localEvidenceIndexTableName(tableName),
      evidence: new FileEvidenceStore(dir),
      invokeIngest: () => Promise.reject(new Error('the bench feeds nothing through ingest')),
    });
    await seed(doc, tableName, sizes);
    log('console: table seeded');
    await seedAudit(ports, sizes);
    log('console: audit seeded');
    const handler = await consoleHandler(endpoint, tableName, dir);
    const ask = async (name: ApiRouteName, body: unknown) => {
      const route = API_ROUTES.find((r) => r.name === name) as (typeof API_ROUTES)[number];
      const answer = await handler(requestOf(route.method, route.resource, body));
      return { status: answer.statusCode, body: JSON.parse(answer.body) as unknown };
    };
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

/** The console's handler, loaded with the environment a stack gives it, on this table and evidence folder. */
async function consoleHandler(endpoint: string, tableName: string, dir: string) {
  Object.assign(process.env, {
    // DynamoDB Local's own region and keys, as the local run gives its handlers.
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    TABLE_NAME: tableName,
    EVIDENCE_DIR: dir,
    CONSOLE_GROUPS: JSON.stringify({ support: ['bench-support'], approver: ['bench-approver'] }),
  });
  const { handler } = await import('../../functions/console/index.ts');
  return handler as (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
}

/** The proxy event API Gateway builds for a matched route, with the authorizer's claims. */
const requestOf = (method: string, resource: string, body: unknown) =>
  ({
    resource,
    path: resource,
    httpMethod: method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    requestContext: { requestId: 'bench', authorizer: { claims: AGENT } },
  }) as unknown as APIGatewayProxyEvent;

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
  const items: object[] = [];
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
  // Quarantined records as ingest writes them (the item and its reference), over the last day.
  const value = Buffer.from(JSON.stringify({ eventId: 'x', recipient: { userId: CUSTOMER } })).toString('base64');
  for (let i = 0; i < sizes.quarantined; i++) {
    const item = buildQuarantine(
      { reason: 'INVALID_AMOUNT', detail: 'amount must be a string (at data.amount)', eventId: `bench-q-${i}` },
      value,
      { topic: 'banking.transfers', partition: i % 12, offset: i },
      now - (i % 86_400) * 1000,
      { retentionDays: 35 },
    );
    if (i % 500 === 0) item.userId = CUSTOMER;
    items.push(item);
    const ref = buildQuarantineRef(item);
    if (ref !== undefined) items.push(ref);
  }
  await seedItems(doc, tableName, items, 16);
}

/** Other customers' audit records around the customer's own: what a desk writes in 90 days, scaled down. */
async function seedAudit(ports: OperatorPorts, sizes: ReturnType<typeof sizesOf>) {
  const by = { principal: 'bench_agent', verifiedBy: 'IDENTITY_PROVIDER' as const };
  const write = async (target: string) => {
    const entry = await ports.audit.record(
      { action: 'REVEAL', step: 'CONFIRM', by, reason: 'customer on the phone', target, details: {} },
      Date.now(),
    );
    await ports.audit.recordOutcome(entry.key, { result: 'DONE', details: {} }, Date.now());
  };
  const limit = pLimit(16);
  await Promise.all([
    ...Array.from({ length: sizes.otherAuditRecords }, (_, i) => limit(() => write(`bench-o-${i}#SMS`))),
    ...Array.from({ length: sizes.customerAuditRecords }, (_, i) =>
      limit(() => write(`bench-e-${i % CUSTOMER_EVENTS}#SMS`)),
    ),
  ]);
}
