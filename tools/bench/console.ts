/**
 * The support console's figures (`npm run bench -- --console`): a customer look-up — the page support staff load,
 * its first page of 50 events and an older one through the cursor — a quarantined event's look-up, and the incident
 * look-up by time window with its counts by reason and producer (`ops quarantine --since 1h` / `1d`), through the console's deployed handler (functions/console/index.ts, as API
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
import { CUSTOMER_PAGE_EVENTS } from '../../functions/contracts/console-views.ts';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import type { RejectionReason } from '../../functions/domain/event/contract.ts';
import { buildQuarantine } from '../../functions/domain/notification.ts';
import { buildQuarantineRef } from '../../functions/domain/quarantine-ref.ts';
import { listAudit, listQuarantine, type OperatorPorts, operatorPorts } from '../../functions/operator/index.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';
import { createTable, localClient } from '../local/dynamodb-local.ts';
import { quarantineText } from '../ops/text/lists.ts';
import type { BenchArgs } from './options.ts';
import { seedItems } from './seed.ts';
import { log, median } from './workload.ts';

const CUSTOMER = 'bench-customer';
/** More than a page (50 events): the first page is full and an older page is there to load. */
const CUSTOMER_EVENTS = 200;
const HOUR_MS = 3_600_000;
/** The claims API Gateway's authorizer hands over for a support agent. */
const AGENT = {
  'cognito:username': 'bench_agent',
  name: 'Bench',
  email: 'bench.agent@bank.example',
  'custom:groups': '["bench-support"]',
};

/** The sizes around the look-ups: full, or --quick's. */
const sizesOf = (quick: boolean) => ({
  otherCustomers: quick ? 200 : 5_000,
  quarantined: quick ? 200 : 10_000,
  otherAuditRecords: quick ? 200 : 5_000,
  customerAuditRecords: 20,
  lookups: quick ? 5 : 30,
  incidentLookups: quick ? 3 : 10,
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
    const { handler, requests } = await consoleHandler(endpoint, tableName, dir);
    const ask = async (name: ApiRouteName, body: unknown) => {
      const route = API_ROUTES.find((r) => r.name === name) as (typeof API_ROUTES)[number];
      const answer = await handler(requestOf(route.method, route.resource, body));
      return { status: answer.statusCode, body: JSON.parse(answer.body) as unknown };
    };
    const page = async (older?: string) => {
      const a = await ask('customer', { userId: CUSTOMER, ...(older === undefined ? {} : { older }) });
      if (a.status !== 200) throw new Error(`customer look-up answered ${a.status}`);
      return a.body as { notices: unknown[]; quarantined: unknown[]; older: string | null };
    };
    const first = await page();
    if (first.older === null) throw new Error('the customer has more than a page of events, but no older page');
    const older = first.older;
    const customerFirstPage = await timedWithRequests(sizes.lookups, requests, () => page());
    const customerOlderPage = await timedWithRequests(sizes.lookups, requests, () => page(older));
    const quarantine = await timed(sizes.lookups, async () => {
      const a = await ask('event', { eventId: 'bench-q-0' });
      if (a.status !== 200 || (a.body as { quarantined: unknown[] }).quarantined.length !== 1) {
        throw new Error('quarantine look-up found nothing');
      }
    });
    const incidents = await incidentLookups(doc, ports, sizes);
    const since = new Date(Date.now() - 90 * 86_400_000).toISOString();
    // What the first page asks the trail about: the customer and its newest events.
    const subjects = [CUSTOMER, ...Array.from({ length: CUSTOMER_PAGE_EVENTS }, (_, i) => `bench-e-${i}`)];
    const auditIndexed = await timed(sizes.lookups, () => ports.audit.listAbout(subjects, since));
    const auditWholeLog = await timed(Math.min(3, sizes.lookups), () => listAudit(ports, since));
    return {
      sizes: { ...sizes, customerEvents: CUSTOMER_EVENTS },
      customerFirstPage: { ...customerFirstPage, notices: first.notices.length, quarantined: first.quarantined.length },
      customerOlderPage,
      quarantinedEventLookupMs: quarantine,
      customerAuditThroughIndexMs: auditIndexed,
      customerAuditByReadingWholeLogMs: auditWholeLog,
      quarantineIncidentLookup: incidents,
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
    EVIDENCE_INDEX_TABLE_NAME: localEvidenceIndexTableName(tableName),
    EVIDENCE_DIR: dir,
    CONSOLE_GROUPS: JSON.stringify({ support: ['bench-support'], approver: ['bench-approver'] }),
  });
  const { handler } = await import('../../functions/console/index.ts');
  // The handler's one document client (module scope), counted as it sends.
  const { documentClient } = await import('../../functions/commons/dynamodb-client.ts');
  return {
    handler: handler as (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>,
    requests: counted(documentClient),
  };
}

/** Counts the requests a client sends: `.n` read and reset by the caller. */
function counted(doc: DynamoDBDocumentClient): { n: number } {
  const counter = { n: 0 };
  doc.middlewareStack.add(
    (next) => async (a) => {
      counter.n++;
      return next(a);
    },
    { step: 'initialize', name: 'benchConsoleRequests' },
  );
  return counter;
}

/**
 * The incident look-up as `ops quarantine --since …` does it (tools/ops/commands-read.ts): every quarantined record
 * of the window through the incident index, then the text with its counts by reason and producer.
 */
async function incidentLookups(doc: DynamoDBDocumentClient, ports: OperatorPorts, sizes: ReturnType<typeof sizesOf>) {
  const requests = counted(doc);
  const lookup = async (windowMs: number) => {
    let records = 0;
    const t = await timedWithRequests(sizes.incidentLookups, requests, async () => {
      const list = await listQuarantine(ports, { sinceIso: new Date(Date.now() - windowMs).toISOString() });
      records = list.length;
      return quarantineText(list);
    });
    return { ...t, records };
  };
  return { since1h: await lookup(HOUR_MS), since1d: await lookup(24 * HOUR_MS) };
}

async function timedWithRequests(rounds: number, requests: { n: number }, run: () => Promise<unknown>) {
  let last = 0;
  const t = await timed(rounds, async () => {
    requests.n = 0;
    await run();
    last = requests.n;
  });
  return { ...t, requests: last };
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
  const event = (
    eventId: string,
    userId: string,
    at: string,
    notices: readonly (readonly [string, string, string])[] = [
      ['EMAIL', `${userId}@example.com`, 'SENT'],
      ['SMS', '+14155550100', 'FAILED'],
    ],
  ) => {
    items.push({
      pk: `EVENT#${eventId}`,
      sk: 'INBOX',
      userKey: `USER#${userId}`,
      occurredAt: at,
      type: 'TransferCompleted',
    });
    for (const [channel, recipient, status] of notices) {
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
    event(`bench-e-${i}`, CUSTOMER, new Date(now - i * HOUR_MS).toISOString(), customerNotices(i));
  for (let i = 0; i < sizes.otherCustomers; i++)
    event(`bench-o-${i}`, `bench-u-${i}`, new Date(now - i * 60_000).toISOString());
  // Quarantined records as ingest writes them (the item and its reference), spread evenly over the last day, of a
  // few reasons from a few producers (what the incident look-up counts).
  const value = Buffer.from(JSON.stringify({ eventId: 'x', recipient: { userId: CUSTOMER } })).toString('base64');
  for (let i = 0; i < sizes.quarantined; i++) {
    const reason = REASONS[i % REASONS.length] as RejectionReason;
    const item = buildQuarantine(
      { reason, detail: 'amount must be a string (at data.amount)', eventId: `bench-q-${i}` },
      value,
      { topic: TOPICS[i % TOPICS.length] as string, partition: i % 12, offset: i },
      now - Math.floor((i * 24 * HOUR_MS) / sizes.quarantined),
      { retentionDays: 35 },
      [],
      { key: `producer-${i % 7}`, headers: { 'content-type': 'application/json' } },
    );
    if (i % 500 === 0) item.userId = CUSTOMER;
    items.push(item);
    const ref = buildQuarantineRef(item);
    if (ref !== undefined) items.push(ref);
  }
  await seedItems(doc, tableName, items, 16);
}

const TOPICS = ['banking.transfers', 'banking.cards', 'banking.loans'];
const REASONS: readonly RejectionReason[] = [
  'SCHEMA_VIOLATION',
  'INVALID_AMOUNT',
  'SCHEMA_VIOLATION',
  'INVALID_JSON',
  'UNKNOWN_TYPE',
];

/** The customer's notices of event i: an email each (SENT), a text every other, a push every third; some FAILED. */
const customerNotices = (i: number): (readonly [string, string, string])[] => [
  ['EMAIL', `${CUSTOMER}@example.com`, i % 10 === 0 ? 'FAILED' : 'SENT'],
  ...(i % 2 === 0 ? [['SMS', '+14155550100', i % 4 === 0 ? 'FAILED' : 'SENT'] as const] : []),
  ...(i % 3 === 0 ? [['PUSH', 'arn:aws:sns:us-east-1:000000000000:endpoint/GCM/bench/1', 'SENT'] as const] : []),
];

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
