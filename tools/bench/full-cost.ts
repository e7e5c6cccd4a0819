/**
 * The complete cost of a notification: what the deployed stack is billed for one, counted on the real handlers —
 * `npm start` itself, with tools/bench/cost-probe.ts counting in its process every DynamoDB request (the units of the
 * table and of each index, from the items before and after), every evidence request and its bytes, every item left in
 * the table and how long it is kept — plus the run's own log (every line the functions write, metrics included) and
 * its invocations. Priced with named parameters (prices.ts, and ASSUMPTIONS below for what is not a price), per
 * channel (a run of notices on that channel alone) and for the bench's mix (email ½, push ⅓, SMS ⅙), beside the floor
 * for the same guarantees (docs/measurements.md "The complete cost" says how each part is counted).
 *
 * The emails go to SES's mailbox simulator (success+N@simulator.amazonses.com), so each produces the Delivery event
 * SES publishes in AWS and the feedback function records it; push and SMS produce SNS's delivery status log entries.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOG_LISTINGS, type LogListing } from '../../functions/contracts/telemetry.ts';
import { CRITICAL_TYPES } from '../../functions/domain/catalogue.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { decodeBatch, encodeBatch } from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { spoolItem } from '../../functions/stores/evidence-spool.ts';
import { DEFAULT_TRACING } from '../../lib/tracing.ts';
import { deliveryStatusLog } from '../local/sns-delivery-status.ts';
import { costAtRate, type EmfOfFunction, EXTRA_PRICES, pacingPerMillion, type RunDensity } from './cost-at-rate.ts';
import type { OperationCounts, ProbeCounts } from './cost-probe.ts';
import { directiveDocumentBytes, oneCountDirectiveBytes } from './emf-tally.ts';
import { FLOOR, floorAtRate } from './floor-at-rate.ts';
import { type Prices, US_EAST_1_PRICES } from './prices.ts';
import { productEnv } from './product-env.ts';
import { REPO } from './repo.ts';
import { dynamoItemBytes } from './spool-cost.ts';
import { bankEventValue, log, round2 } from './workload.ts';

/** What the bill depends on besides prices: named, so a reader can put in their own. */
export const ASSUMPTIONS = {
  /** The evidence store's default retention (EVIDENCE_RETENTION_DAYS): its objects and their access logs. */
  evidenceRetentionDays: 2_557,
  /** One S3 server access log record (a PUT or GET of the evidence bucket), as S3 writes them: about 400 bytes. */
  accessLogBytesPerRequest: 400,
  /** Lambda's own lines per invocation in the JSON log format: platform.start and platform.report. */
  platformLogBytesPerInvocation: 700,
  /** The functions' log groups keep a year (lib/logs-key.ts); SNS's delivery status logs a month. */
  logRetentionMonths: 12,
  deliveryLogRetentionMonths: 1,
  /**
   * Every invocation traced when the settings' default traces (active tracing; Lambda's sampling traces fewer at
   * volume): an upper bound. None when it is off (lib/tracing.ts); the rate model prices turning it on.
   */
  tracedShareOfInvocations: DEFAULT_TRACING === 'active' ? 1 : 0,
  /** SES events reach the feedback function through a queue: one SendMessage each, a receive and a delete per batch of 10. */
  sqsRequestsPerSesEvent: 1 + 2 / 10,
  /** Functions' memory (lib/notifier-function.ts, lib/delivery-feedback.ts). */
  memoryGb: { ingest: 0.5, dispatch: 0.5, feedback: 0.25 },
  /** The feedback function's time per report: a message-index query, a read and a write at 10 ms each. */
  feedbackSecondsPerReport: 0.03,
  /** The sweeper runs every minute whatever the volume: 43,200 runs a month of about 0.2 s, over this many notifications. */
  sweeperRunsPerMonth: 43_200,
  sweeperSecondsPerRun: 0.2,
  notificationsPerMonth: 1_000_000,
} as const;

const DAYS_PER_MONTH = 30.44;
/** The channel whose sends produce SES events (the feedback queue's). */
const CHANNEL_OF_SES = new Set<string>(['EMAIL' satisfies Channel]);
const GB = 1024 ** 3;

/** What one run measured: per notification, everything the bill counts. */
interface RunFigures {
  notifications: number;
  events: number;
  sesEvents: number;
  snsDeliveryLogs: number;
  invocations: Record<string, number>;
  logBytes: number;
  emfLines: number;
  emfBytes: number;
  /** Each directive of the run's EMF lines as a document of its own (emf-tally.ts directiveDocumentBytes): bytes. */
  directiveBytes: number[];
  /** Per function, the bytes of its listing lines besides their entries (one such line an invocation). */
  listingBytes: Record<string, number>;
  probe: ProbeCounts;
  /** The run's evidence batches: their records, and the bytes of each record in a batch of its own. */
  batches: {
    records: number;
    bytes: number;
    bytesAlone: number;
    spoolItem?: { bytes: number; wru: number };
    reportItem?: { bytes: number; wru: number };
  };
  criticalNotifications: number;
  otpEvents: number;
  emails: number;
}

/** The channel set of each event: one channel alone, or the bench's mix (the workload's 1, 2 or 3 channels in turn). */
type Mix = 'EMAIL' | 'PUSH' | 'SMS' | 'mix';

function events(n: number, mix: Mix): object[] {
  return Array.from({ length: n }, (_, i) => {
    const e = bankEventValue(`cost-${mix}-${i}`, i, n, mix === 'mix' ? undefined : mix);
    return { ...e, recipient: { ...e.recipient, email: `success+${i}@simulator.amazonses.com` } };
  });
}

/** One `npm start` of the events with the probe loaded, at the stack's log level; its figures. */
async function runOnce(dir: string, mix: Mix, n: number): Promise<RunFigures> {
  const file = join(dir, `${mix}.jsonl`);
  const probeOut = join(dir, `${mix}.probe.json`);
  const values = events(n, mix) as { type: string; channels: string[] }[];
  writeFileSync(file, `${values.map((v) => JSON.stringify(v)).join('\n')}\n`);
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=512', '--import', 'tsx', '--import', './tools/bench/cost-probe.ts'].concat([
      'tools/local/run.ts',
      '--events',
      file,
      '--json',
    ]),
    {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: productEnv({ LOG_LEVEL: 'INFO', COST_PROBE_OUT: probeOut }),
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += String(c);
  });
  child.stderr.on('data', (c) => {
    stderr = (stderr + String(c)).slice(-4000);
  });
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  if (code !== 0) throw new Error(`npm start for the cost run exited ${code}: ${stderr.trim().slice(-1000)}`);
  const report = JSON.parse(stdout) as {
    events: { accepted: number };
    notifications: { created: number; sent: number };
    feedback: { delivered: number; snsDeliveryStatus: number };
    run: string;
    log: string;
  };
  if (report.notifications.sent !== report.notifications.created)
    throw new Error('cost run: not every notification was sent');
  const lines = readFileSync(join(REPO, report.log), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'));
  const requests = new Map<string, Set<string>>();
  for (const line of lines) {
    const fn = /"function_name":"([^"]+)"/.exec(line)?.[1];
    const id = /"function_request_id":"([^"]+)"/.exec(line)?.[1];
    if (fn === undefined || id === undefined) continue;
    if (!requests.has(fn)) requests.set(fn, new Set());
    requests.get(fn)?.add(id);
  }
  const probe = JSON.parse(readFileSync(probeOut, 'utf8')) as ProbeCounts;
  // An invocation's closing metric document names its request id, not its function: the probe attributed it.
  for (const [fn, t] of Object.entries(probe.emf ?? {})) {
    const ids = requests.get(`notifier-${fn}`) ?? new Set<string>();
    for (const id of t.requestIds ?? []) ids.add(id);
    if (ids.size > 0) requests.set(`notifier-${fn}`, ids);
  }
  const emf = lines.filter((l) => l.startsWith('{"_aws"'));
  const listingBytes = listingBytesOf(lines);
  const figures: RunFigures = {
    notifications: report.notifications.created,
    events: report.events.accepted,
    sesEvents: report.feedback.delivered,
    snsDeliveryLogs: report.feedback.snsDeliveryStatus,
    invocations: Object.fromEntries([...requests].map(([fn, ids]) => [fn.replace(/^notifier-/, ''), ids.size])),
    logBytes: lines.reduce((a, l) => a + Buffer.byteLength(l) + 1, 0),
    emfLines: emf.length,
    emfBytes: emf.reduce((a, l) => a + Buffer.byteLength(l) + 1, 0),
    directiveBytes: emf.flatMap(directiveDocumentBytes),
    listingBytes,
    probe,
    batches: await batchesIn(join(REPO, report.run)),
    criticalNotifications: values
      .filter((v) => CRITICAL_TYPES.includes(v.type))
      .reduce((a, v) => a + v.channels.length, 0),
    otpEvents: values.filter((v) => v.type === 'OneTimePasscode').length,
    emails: values.filter((v) => v.channels.some((c) => CHANNEL_OF_SES.has(c))).length,
  };
  rmSync(join(REPO, report.run), { recursive: true, force: true });
  return figures;
}

/**
 * Per function, its metric documents as the run wrote them (the probe's tally): per invocation, per dimension set,
 * and the records those sets summed per record of the function (events for ingest, sends, reports).
 */
export function emfOf(
  f: Pick<RunFigures, 'invocations' | 'notifications' | 'events' | 'sesEvents' | 'snsDeliveryLogs'> & {
    probe: Pick<ProbeCounts, 'emf' | 'emfSample'>;
  },
): RunDensity['emf'] {
  const records: Record<string, number> = {
    ingest: f.events,
    dispatch: f.notifications,
    feedback: f.sesEvents + f.snsDeliveryLogs,
  };
  const byFunction: Record<string, EmfOfFunction> = {};
  for (const [fn, t] of Object.entries(f.probe.emf ?? {})) {
    const invocations = Math.max(1, f.invocations[fn] ?? 0);
    const r = records[fn];
    const merged = t.merged ?? { sets: 0, records: 0 };
    byFunction[fn] = {
      plainPerInvocation: t.plain.bytes / invocations,
      setBytes: t.sets.docs === 0 ? 0 : t.sets.bytes / t.sets.docs,
      setsPerInvocation: (t.sets.docs + merged.sets) / invocations,
      mergedSetsPerInvocation: merged.sets / invocations,
      setsPerRecord: r === undefined || r === 0 ? 0 : (t.sets.records + merged.records) / r,
      entryBytesPerNotification: (t.entryBytes ?? 0) / f.notifications,
      ...(r === undefined ? {} : { recordsPerNotification: r / f.notifications }),
    };
  }
  if (Object.keys(byFunction).length === 0) return undefined;
  const sample = f.probe.emfSample;
  return { byFunction, spoolDocBytes: sample === undefined ? 0 : oneCountDirectiveBytes(sample, 'EvidenceSpooled') };
}

/**
 * Per function, the bytes its listing lines (contracts/telemetry.ts LOG_LISTINGS) write besides their entries: the
 * level, message, time, function, request id and figures a line of them repeats once an invocation. A line's further
 * parts (`part`, above 100 entries) grow with the records, and stay with them.
 */
export function listingBytesOf(lines: readonly string[]): Record<string, number> {
  const bytes: Record<string, number> = {};
  for (const line of lines) {
    if (line.startsWith('{"_aws"')) continue;
    const l = JSON.parse(line) as Record<string, unknown>;
    const key = LOG_LISTINGS[l.message as LogListing];
    if (key === undefined || l.part !== undefined || typeof l.function_name !== 'string') continue;
    const fn = l.function_name.replace(/^notifier-/, '');
    const entries = l[key] === undefined ? 0 : Buffer.byteLength(JSON.stringify(l[key]));
    bytes[fn] = (bytes[fn] ?? 0) + Buffer.byteLength(line) + 1 - entries;
  }
  return bytes;
}

/**
 * The send batches a run left (reports batches apart): records, bytes, and each record's bytes as a batch of one; each
 * record as the spool's item — the sends' and, apart, the reports' (a report's record is far smaller than a send's).
 */
async function batchesIn(runDir: string) {
  const totals = { records: 0, bytes: 0, bytesAlone: 0 };
  const all = readdirSync(runDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl.gz'));
  const files = all.filter((f) => !f.includes('.reports/') && f.includes('-dispatch-'));
  for (const f of files) {
    const object = readFileSync(join(runDir, f));
    const { header, records } = decodeBatch(object);
    totals.records += records.length;
    totals.bytes += object.length;
    for (const r of records) {
      const record = JSON.parse(r.bytes.toString('utf8'));
      totals.bytesAlone += encodeBatch(header.name, header.writer, [{ record, bytes: r.bytes }]).length;
    }
  }
  // The same records as the spool's items: what each one's put is billed on.
  const spoolItem = await spoolItemsOf(runDir, files, 'SEND');
  // A feedback invocation's reports: one object of its own (`<hhmmss>-feedback-<id>`), or under a send batch's
  // `.reports/` in the layout before.
  const reportItem = await spoolItemsOf(
    runDir,
    all.filter((f) => f.includes('.reports/') || /(^|\/)\d{6}-feedback-[^/]+$/.test(f)),
    'FEEDBACK',
  );
  return {
    ...totals,
    ...(spoolItem === undefined ? {} : { spoolItem }),
    ...(reportItem === undefined ? {} : { reportItem }),
  };
}

/** The mean spool item (bytes as DynamoDB bills them, and write units) of every record in `files`; none: undefined. */
async function spoolItemsOf(runDir: string, files: readonly string[], recordKind: 'SEND' | 'FEEDBACK') {
  let records = 0;
  let bytes = 0;
  let wru = 0;
  for (const f of files) {
    for (const r of decodeBatch(readFileSync(join(runDir, f))).records) {
      const record = JSON.parse(r.bytes.toString('utf8'));
      const at = Date.parse(record.at ?? record.acceptedAt ?? '2026-01-01T00:00:00Z');
      const item = dynamoItemBytes(
        await spoolItem({
          slice: sliceBatchName(Number.isFinite(at) ? at : 0, 2_557),
          sha256: r.entry.sha256,
          notificationId: r.entry.notificationId,
          recordKind,
          bytes: r.bytes,
        }),
      );
      records++;
      bytes += item;
      wru += Math.ceil(item / 1024);
    }
  }
  return records === 0 ? undefined : { bytes: bytes / records, wru: wru / records };
}

/** Seconds of Lambda per unit of work, measured by the bench under 10 ms per DynamoDB call; the pacer at a quota. */
export interface LambdaTimes {
  readonly ingestSecondsPerRecord: number;
  readonly dispatchSecondsPerSend: number;
  /** Token writes per send at a 14/s quota with a backlog (the quota bench). */
  readonly pacerWritesPerSend: number;
}

/**
 * The rates the cost is priced at: the assumption's own (a million notifications a month, about 0.4/s, as an average)
 * and the capacity model's 10,000/s (docs/scaling.md), each held as the month's average.
 */
const RATES = [
  { name: '1M a month', perSec: 1_000_000 / (30.44 * 86_400) },
  { name: '10,000/s', perSec: 10_000 },
] as const;

/** The kinds of item that are the customers' evidence index (both layouts: the per-batch items and the per-event ones). */
const INDEX_KINDS = ['EVIDENCE_INDEX', 'EVIDENCE_EVENT', 'EVIDENCE_REF'];

const money = (n: number) => round2(n);

/** Each operation's requests and units per notification, the dearest first (table and index writes, then reads). */
function perOperation(ops: Record<string, OperationCounts>, notifications: number) {
  const per = (n: number) => round3(n / notifications);
  const weight = (o: OperationCounts) => o.wru + Object.values(o.indexWru).reduce((a, b) => a + b, 0) + o.rru / 5;
  return Object.fromEntries(
    Object.entries(ops)
      .sort(([, a], [, b]) => weight(b) - weight(a))
      .map(([name, o]) => [
        name,
        {
          requests: per(o.requests),
          wru: per(o.wru),
          rru: per(o.rru),
          indexWru: Object.fromEntries(Object.entries(o.indexWru).map(([k, v]) => [k, per(v)])),
        },
      ]),
  );
}
const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** One run's bill per million notifications, part by part, and the floor beside it. */
function billOf(f: RunFigures, lambda: LambdaTimes, p: Prices) {
  const A = ASSUMPTIONS;
  const per = 1_000_000 / f.notifications;
  const dynamo = Object.values(f.probe.dynamodb);
  const indexWru = Object.values(f.probe.indexWru).reduce((a, b) => a + b, 0);
  const wru = dynamo.reduce((a, c) => a + c.wru, 0);
  // The evidence index's items, in a Standard-IA table of their own (lib/evidence-index-table.ts): priced apart.
  const indexTableWru = INDEX_KINDS.reduce((a, k) => a + (f.probe.wruByKind?.[k] ?? 0), 0);
  const rru = dynamo.reduce((a, c) => a + c.rru, 0);
  const wruPrice = p.dynamodbWriteRequestUnitPerMillion / 1e6;
  const rruPrice = p.dynamodbReadRequestUnitPerMillion / 1e6;
  const evidenceMonths = A.evidenceRetentionDays / DAYS_PER_MONTH;
  // Table storage: every item for as long as it is kept (its TTL; an item without one, for the evidence's retention),
  // its indexes' copies too; PITR on the table's own bytes. The evidence index's items apart (their own table).
  let storageGbMonths = 0;
  let pitrGbMonths = 0;
  let indexGbMonths = 0;
  for (const [kind, s] of Object.entries(f.probe.stored)) {
    const withTtl = s.items - s.withoutTtl;
    const keptMonths = withTtl === 0 ? 0 : s.keptSeconds / withTtl / 86_400 / DAYS_PER_MONTH;
    const months = (withTtl * keptMonths + s.withoutTtl * evidenceMonths) / Math.max(1, s.items);
    if (INDEX_KINDS.includes(kind)) {
      indexGbMonths += ((s.bytes + s.indexBytes) / GB) * months;
      continue;
    }
    storageGbMonths += ((s.bytes + s.indexBytes) / GB) * months;
    pitrGbMonths += (s.bytes / GB) * months;
  }
  const ev = f.probe.evidence;
  const evidenceRequests = ev.puts + ev.gets + ev.lists;
  const inv = f.invocations;
  const invocations = Object.values(inv).reduce((a, b) => a + b, 0);
  const snsLogBytes =
    f.snsDeliveryLogs *
    Buffer.byteLength(
      deliveryStatusLog({ messageId: 'a'.repeat(36), channel: 'SMS', to: '+819012345678', at: Date.now() }).message,
    );
  const lambdaGbSeconds =
    f.events * lambda.ingestSecondsPerRecord * A.memoryGb.ingest +
    f.notifications * lambda.dispatchSecondsPerSend * A.memoryGb.dispatch +
    (f.sesEvents + f.snsDeliveryLogs) * A.feedbackSecondsPerReport * A.memoryGb.feedback +
    ((A.sweeperRunsPerMonth * A.sweeperSecondsPerRun * 0.5) / A.notificationsPerMonth) * f.notifications;
  const logBytes = f.logBytes + invocations * A.platformLogBytesPerInvocation;
  const logMoney = (bytes: number, months: number) =>
    (bytes / GB) * (p.logsIngestPerGb + p.logsStorageGbMonth * months);
  const parts = {
    dynamodbWrites: (wru - indexTableWru) * wruPrice,
    dynamodbIndexWrites: indexWru * wruPrice,
    dynamodbReads: rru * rruPrice,
    dynamodbStorageAndPitr: storageGbMonths * p.dynamodbStorageGbMonth + pitrGbMonths * p.dynamodbPitrGbMonth,
    // Its writes at Standard-IA's price, its storage at Standard-IA's, point-in-time recovery on it; no AWS Backup.
    evidenceIndex:
      indexTableWru * (EXTRA_PRICES.dynamodbIaWriteRequestUnitPerMillion / 1e6) +
      indexGbMonths * (EXTRA_PRICES.dynamodbIaStorageGbMonth + p.dynamodbPitrGbMonth),
    evidenceRequests: (ev.puts + ev.lists) * (p.s3PutPerThousand / 1000) + ev.gets * (p.s3GetPerThousand / 1000),
    evidenceStorage: (ev.putBytes / GB) * evidenceMonths * p.s3StandardGbMonth,
    evidenceAccessLogs: ((evidenceRequests * A.accessLogBytesPerRequest) / GB) * evidenceMonths * p.s3StandardGbMonth,
    cloudWatchLogs: logMoney(logBytes, A.logRetentionMonths) + logMoney(snsLogBytes, A.deliveryLogRetentionMonths),
    xray: invocations * A.tracedShareOfInvocations * (p.xrayTracePerMillion / 1e6),
    feedbackQueue: f.sesEvents * A.sqsRequestsPerSesEvent * (p.sqsRequestPerMillion / 1e6),
    lambda: lambdaGbSeconds * p.lambdaGbSecondArm + invocations * (p.lambdaRequestPerMillion / 1e6),
  };
  const own = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, money(v * per)])) as typeof parts;
  const total = money(Object.values(parts).reduce((a, b) => a + b, 0) * per);
  // The pacer's own writes this run (unpaced: its bucket far from any quota), priced once at the rate instead.
  const pacerWru = Object.entries(f.probe.byOperation ?? {})
    .filter(([name]) => name.startsWith('Update RATE'))
    .reduce((a, [, o]) => a + o.wru, 0);
  const emf = emfOf(f);
  const density: RunDensity = {
    notifications: f.notifications,
    events: f.events,
    emails: f.emails,
    sesEvents: f.sesEvents,
    snsDeliveryLogs: f.snsDeliveryLogs,
    criticalNotifications: f.criticalNotifications,
    otpEvents: f.otpEvents,
    invocations: f.invocations,
    // One metric line as Powertools writes one directive, without a listing: what the floor prices an invocation.
    emfLineBytes:
      f.directiveBytes.length === 0 ? 0 : f.directiveBytes.reduce((a, b) => a + b, 0) / f.directiveBytes.length,
    emfBytesPerNotification: f.emfBytes / f.notifications,
    listingBytesPerInvocation: Object.fromEntries(
      Object.entries(f.listingBytes).map(([fn, b]) => [fn, b / Math.max(1, f.invocations[fn] ?? 0)]),
    ),
    ...(emf === undefined ? {} : { emf }),
    evidence: { puts: ev.puts, gets: ev.gets, lists: ev.lists, ...f.batches },
    intentWru: f.probe.wruByKind?.EVIDENCE_BATCH ?? 0,
    indexWru: indexTableWru,
    indexGbMonths,
    tableGbMonths: storageGbMonths,
    pacerWru,
  };
  const measured = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, v * per]));
  const atRates = RATES.map(({ name, perSec }) => {
    const shards = Math.max(1, Math.ceil((perSec * wru) / f.notifications / 1_000));
    const cost = costAtRate(measured, density, perSec, shards, p, undefined, undefined, lambda.pacerWritesPerSend);
    const floor = floorAtRate(measured, density, perSec, shards, p);
    // Pacing once: at the rate's density or at a quota, whichever writes more (cost-at-rate.ts pacerWritesPerSendAt).
    const pacing = { cost: cost.pacing.perMillion, floor: pacingPerMillion(FLOOR.pacingWritesPerSend, p) };
    const withPacing = { cost: round2(cost.perMillion.total + pacing.cost), floor: round2(floor.total + pacing.floor) };
    return {
      name,
      ...cost,
      floor,
      pacingAtQuota: pacing,
      withPacing,
      overFloor: round2(withPacing.cost / withPacing.floor),
    };
  });
  return {
    notifications: f.notifications,
    perNotification: {
      dynamodbRequests: round2(dynamo.reduce((a, c) => a + c.requests, 0) / f.notifications),
      wru: round2(wru / f.notifications),
      indexWru: Object.fromEntries(Object.entries(f.probe.indexWru).map(([k, v]) => [k, round2(v / f.notifications)])),
      rru: round2(rru / f.notifications),
      /** The same units per operation (cost-probe.ts `byOperation`): which request, on which item, from where. */
      byOperation: perOperation(f.probe.byOperation ?? {}, f.notifications),
      evidenceObjects: round2(ev.puts / f.notifications),
      evidenceBytes: Math.round(ev.putBytes / f.notifications),
      logBytes: Math.round(logBytes / f.notifications),
      invocations: round2(invocations / f.notifications),
      /** What stays in the table per notification, by kind of item: bytes (its indexes' copies included) and days kept. */
      stored: Object.fromEntries(
        Object.entries(f.probe.stored).map(([kind, s]) => [
          kind,
          {
            bytes: Math.round((s.bytes + s.indexBytes) / f.notifications),
            days: s.items === s.withoutTtl ? null : Math.round(s.keptSeconds / (s.items - s.withoutTtl) / 86_400),
            withoutTtl: s.withoutTtl,
          },
        ]),
      ),
    },
    /** The run as it ran: a burst, every batch full — not a production density (atRates is). */
    perMillion: { ...own, total },
    density,
    atRates,
  };
}

/** The runs: each channel alone, then the bench's mix; their bills per million notifications. */
export async function measureFullCost(quick: boolean, lambda: LambdaTimes, prices: Prices = US_EAST_1_PRICES) {
  const dir = mkdtempSync(join(tmpdir(), 'notifier-cost-'));
  try {
    const byChannel: Record<string, ReturnType<typeof billOf>> = {};
    for (const channel of ['EMAIL', 'PUSH', 'SMS'] as const) {
      byChannel[channel] = billOf(await runOnce(dir, channel, quick ? 30 : 200), lambda, prices);
      log(`complete cost: ${channel} done`);
    }
    const mix = billOf(await runOnce(dir, 'mix', quick ? 60 : 600), lambda, prices);
    log('complete cost: mix done');
    return { prices, extraPrices: EXTRA_PRICES, assumptions: ASSUMPTIONS, lambda, byChannel, mix };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
