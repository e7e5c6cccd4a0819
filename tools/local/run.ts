/**
 * `npm start`: the whole pipeline on this machine. DynamoDB Local (in memory), the SES emulator with its web viewer,
 * a local SNS endpoint; the real ingest, dispatch and sweeper handlers behind emulated event source mappings; the
 * outbox page (tools/local/outbox.ts) showing what each customer got.
 *
 * Standard output carries the summary (exactly one JSON document with --json); progress and messages go to standard
 * error; the handlers' JSON logs and EMF lines go to a log file under .local/logs (named in the summary) unless
 * --verbose. The summary checks that the ingest figures reconcile (delivered = accepted + duplicates + conflicts +
 * quarantined + requarantined + failed) and says so when they do not. Exit codes: see USAGE.
 *
 * --settle delivers each batch only after the previous batch's notifications and their feedback have settled, so
 * a bounce can suppress a later send (the built-in sample always settles). Emails to the SES mailbox simulator
 * (success@, bounce@, complaint@simulator.amazonses.com) produce the feedback events SES would, and every SMS and push
 * the local SNS accepted the delivery status log entry SNS would (tools/local/sns-delivery-status.ts), handed to the real
 * feedback function; the report's `outcomes` show each notification's status, deliveryStatus and reason.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, openSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DISPATCH_TIMING } from '../../functions/contracts/dispatch-timing.ts';
import { sendRateEnvironment } from '../../functions/contracts/environment.ts';
import { parseNotificationId } from '../../functions/domain/keys.ts';
import { FIGURE_METRICS, type IngestFigures, reconciles } from '../../functions/ingest/figures.ts';
import { assertPortsFree, EXIT, intOption, onExit, parseCommandLine, runCommand, UsageError } from './cli.ts';
import {
  createTable,
  type DynamoDbLocal,
  type DynamoDbStorage,
  keepsDataOnDisk,
  scanPages,
  startDynamoDbLocal,
} from './dynamodb-local.ts';
import { captureOutput } from './emf.ts';
import { type EventSource, openEventSource } from './event-source.ts';
import { LOCAL_EVIDENCE_DIR } from './evidence-dir.ts';
import { mskEvent } from './msk.ts';
import { displayName, type OutboxNotification, SENDS_IN_FULL, startOutbox } from './outbox.ts';
import { type OutboxRow, outboxHtml } from './outbox-page.ts';
import { summarizeTable, type TableSummary } from './outcomes.ts';
import { converge, DispatchMappings, FeedbackMapping, KafkaMapping, lambdaContext, loadHandlers } from './pipeline.ts';
import {
  type AcceptedSend,
  SendQuota,
  type SesEndpoint,
  type SnsEndpoint,
  startSesEndpoint,
  startSnsEndpoint,
} from './providers.ts';
import { sampleScenario } from './sample.ts';
import { readRegistryFolder, startLocalSchemaRegistry } from './schema-registry.ts';
import { subscriptionEvents } from './sns-delivery-status.ts';
import { StreamReader } from './stream-reader.ts';

export const USAGE = `
Usage: npm start -- [options]          (npm start --silent -- --json | jq   for JSON on standard output)

Runs the whole notifier pipeline locally: DynamoDB Local, the SES emulator, a local SNS, the real handlers.

Input
  --events FILE        JSON Lines: one Kafka record value per line (examples/events.jsonl); "-" reads standard input.
                       Without it, a built-in sample scenario runs. A FILE ending in .b64 (or any FILE with --base64)
                       holds one record value per line in base64: the bytes exactly as the topic holds them, e.g.
                       Confluent wire-format Avro or Protobuf (examples/events.avro.b64)
  --base64             read --events lines as base64 record values
  --registry DIR       the folder standing in for the schema registry (default docs/wire: registry.json and the
                       schemas it lists); served to ingest as Confluent's REST API
  --batch-size N       records per MSK batch (default 100; the sample uses 4)
  --redeliver N        deliver every batch N more times, concurrently (at-least-once)
  --max-event-age S    the ingest function's MAX_EVENT_AGE_SECONDS (a file's events: 0, off, unless given)

Providers
  --ses-rate R         the local SES throttles beyond R emails/s, and dispatch is paced to R
  --sns-rate R         the same for SNS (SMS and push quotas apart)
  --settle             deliver each batch only once the previous one's sends and their feedback have settled, so a
                       bounce can suppress a later send (the built-in sample always settles)

Output
  --json               standard output is exactly one JSON document
  --verbose            the handlers' logs and metric lines on standard error instead of the log file
  --keep               keep everything up after the run (outbox page, email viewer, DynamoDB Local, the pipeline
                       itself: npm run ops -- --endpoint … works against it) until Ctrl-C
  --outbox-port P      the outbox page's port (default: a free one)
  --dynamodb-storage memory|disk|auto
                       where DynamoDB Local keeps the data (default auto: on disk for a file of 4 MiB or more and
                       for standard input, so memory stays flat; in memory otherwise: 2,000 events in 38 s, not 48)
  --dynamodb-port P, --ses-port P, --sns-port P, --viewer-port P
                       fixed ports instead of free ones; each is checked before anything starts
  -h, --help           this text

Exit codes
  0  every notification was sent (a       3  a notification ended FAILED or UNKNOWN, or a record was given up
     REFUSED channel or a quarantined
     record is bad input: listed, not a
     failure of the pipeline)
  1  the run failed (did not converge,     4  records were given, but none was accepted (all bad input?)
     figures do not reconcile, an error)   130/143/129  interrupted (SIGINT/SIGTERM/SIGHUP): the partial summary
  2  usage: unknown flag, bad value,          is printed; 141 standard output was closed (a broken pipe)
     missing or malformed file, busy port, no Java
`;

export const RUN_EXIT = { ...EXIT, NOT_ALL_SENT: 3, NOTHING_ACCEPTED: 4 } as const;

const TOPIC = 'banking.transfers';
/**
 * DynamoDB Local's heap bound when its data is on disk: the heap then holds requests, not items, and the JVM's default
 * (a quarter of the machine's memory) would let it grow with the run for nothing.
 */
const DYNAMODB_HEAP_MB_ON_DISK = 256;

/** The SES emulator's own store (what its viewer shows): CommonJS, the same instance the emulator writes to. */
const sesStore = createRequire(import.meta.url)('aws-ses-v2-local/dist/store.js') as {
  getStoreReadonly(): { emails: unknown[] };
};

/** Drops ledger entries past SENDS_IN_FULL; returns how many it dropped. */
function trimLedger(sends: AcceptedSend[]): number {
  const dropped = Math.max(0, sends.length - SENDS_IN_FULL);
  sends.length -= dropped;
  return dropped;
}
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function parseOptions(argv: string[]) {
  const { values } = parseCommandLine(
    {
      usage: USAGE,
      options: {
        events: { type: 'string' },
        base64: { type: 'boolean', default: false },
        registry: { type: 'string' },
        'batch-size': { type: 'string' },
        redeliver: { type: 'string' },
        'max-event-age': { type: 'string' },
        json: { type: 'boolean', default: false },
        verbose: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        settle: { type: 'boolean', default: false },
        'ses-rate': { type: 'string' },
        'sns-rate': { type: 'string' },
        'dynamodb-port': { type: 'string' },
        'ses-port': { type: 'string' },
        'sns-port': { type: 'string' },
        'viewer-port': { type: 'string' },
        'outbox-port': { type: 'string' },
        'dynamodb-storage': { type: 'string', default: 'auto' },
      },
    },
    argv,
  );
  const port = (name: 'dynamodb-port' | 'ses-port' | 'sns-port' | 'viewer-port' | 'outbox-port') =>
    intOption(name, values[name], 1, 65_535);
  const storage = values['dynamodb-storage'] as DynamoDbStorage;
  if (!['auto', 'memory', 'disk'].includes(storage)) {
    throw new UsageError(`--dynamodb-storage must be memory, disk or auto, not "${storage}"`);
  }
  return {
    storage,
    events: values.events,
    // A .b64 file holds binary record values (schema-registry records) as base64 lines.
    base64: values.base64 === true || (values.events?.endsWith('.b64') ?? false),
    registry: values.registry ?? join(REPO, 'docs', 'wire'),
    batchSize: intOption('batch-size', values['batch-size'], 1, 10_000),
    redeliver: intOption('redeliver', values.redeliver, 0, 100) ?? 0,
    maxEventAgeSeconds: intOption('max-event-age', values['max-event-age'], 0),
    json: values.json === true,
    verbose: values.verbose === true,
    keep: values.keep === true,
    settle: values.settle === true,
    sesRate: intOption('ses-rate', values['ses-rate'], 1),
    snsRate: intOption('sns-rate', values['sns-rate'], 1),
    ports: {
      'dynamodb-port': port('dynamodb-port'),
      'ses-port': port('ses-port'),
      'sns-port': port('sns-port'),
      'viewer-port': port('viewer-port'),
      'outbox-port': port('outbox-port'),
    },
  };
}

/** The records to run, as batches: the built-in sample (with its scripted redelivery) or a streamed file. */
interface Input {
  readonly batches: AsyncIterable<{ offset: number; values: string[]; redeliver: boolean }>;
  /** Records in the input when known in advance (the sample); a file reports progress by bytes. */
  readonly records: number | undefined;
  readonly source: EventSource | undefined;
  readonly maxEventAgeSeconds: number;
  /** Settle sends and feedback after each batch (the sample: always). */
  readonly settle: boolean;
}

async function openInput(file: string | undefined, batchSize: number | undefined): Promise<Input> {
  if (file === undefined) {
    const sample = sampleScenario(Date.now());
    const size = batchSize ?? sample.batchSize;
    return {
      records: sample.values.length,
      source: undefined,
      maxEventAgeSeconds: sample.maxEventAgeSeconds,
      settle: sample.settle,
      batches: (async function* () {
        for (let i = 0; i < sample.values.length; i += size) {
          yield {
            offset: i,
            values: sample.values.slice(i, i + size),
            redeliver: sample.redeliverBatches.includes(i / size),
          };
        }
      })(),
    };
  }
  const source = await openEventSource(file);
  const size = batchSize ?? 100;
  return {
    records: undefined,
    source,
    // A file's events carry fixed dates: the max-age rule is off unless --max-event-age asks for it.
    maxEventAgeSeconds: 0,
    settle: false,
    batches: (async function* () {
      let values: string[] = [];
      let offset = 0;
      for await (const line of source.lines()) {
        values.push(line);
        if (values.length === size) {
          yield { offset, values, redeliver: false };
          offset += values.length;
          values = [];
        }
      }
      if (values.length > 0) yield { offset, values, redeliver: false };
    })(),
  };
}

function requireJava(): void {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) {
    throw new UsageError(
      'Java 17+ is required: DynamoDB Local runs on it. Install a JRE (e.g. apt-get install openjdk-17-jre-headless).',
    );
  }
}

/** The run's log file: every handler line, metric line and warning of this run. */
function openLogFile(): { path: string; write: (text: string) => void } {
  const dir = join(REPO, '.local', 'logs');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `run-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  const fd = openSync(path, 'a');
  return { path, write: (text) => void writeSync(fd, text) };
}

const duration = (seconds: number) =>
  seconds >= 3600
    ? `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`
    : seconds >= 60
      ? `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`
      : `${Math.round(seconds)}s`;

/**
 * The live progress line: on a terminal, one line rewritten in place at most 4 times a second; otherwise a line every
 * 10 s, so a log file of a long run is not flooded.
 */
class Progress {
  private last = performance.now();
  private shown = false;
  private started = performance.now();
  constructor(
    private readonly write: (text: string) => void,
    private readonly tty: boolean,
  ) {}
  /** The rates count from the first record, not from the set-up. */
  start() {
    this.started = performance.now();
    this.last = this.started;
  }
  message(text: string) {
    this.clear();
    this.write(`[notifier] ${text}\n`);
  }
  update(records: number, sends: number, fraction: number | undefined, force = false) {
    const now = performance.now();
    if (!force && now - this.last < (this.tty ? 250 : 10_000)) return;
    // A short run off a terminal needs no progress at all: its summary follows at once.
    if (force && !this.tty && now - this.started < 10_000) return;
    this.last = now;
    const seconds = (now - this.started) / 1000;
    const eta =
      fraction !== undefined && fraction > 0.01 && fraction < 1
        ? ` · ETA ${duration((seconds / fraction) * (1 - fraction))}`
        : '';
    const line = `[notifier] ${records.toLocaleString('en-US')} records${fraction === undefined ? '' : ` (${Math.floor(fraction * 100)}%)`} · ${Math.round(records / Math.max(seconds, 0.001))} events/s · ${Math.round(sends / Math.max(seconds, 0.001))} sends/s${eta}`;
    if (this.tty) {
      this.write(`\r\x1b[K${line}`);
      this.shown = true;
    } else this.write(`${line}\n`);
  }
  clear() {
    if (this.shown) this.write('\r\x1b[K');
    this.shown = false;
  }
}

async function main(signal: AbortSignal): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const input = await openInput(options.events, options.batchSize);
  // Read now: a missing or malformed folder is a usage error before anything starts.
  readRegistryFolder(options.registry);
  await assertPortsFree(options.ports);
  requireJava();
  const log = options.verbose ? undefined : openLogFile();
  const output = captureOutput(log?.write);
  onExit(() => output.restore());
  const progress = new Progress(output.writeStderr, process.stderr.isTTY === true && !options.verbose);
  onExit(() => progress.clear());

  const onDisk = keepsDataOnDisk(
    options.storage,
    input.source === undefined ? { kind: 'sample' } : { kind: 'file', totalBytes: input.source.totalBytes },
  );
  const db: DynamoDbLocal = await startDynamoDbLocal(options.ports['dynamodb-port'], {
    onDisk,
    maxHeapMb: onDisk ? DYNAMODB_HEAP_MB_ON_DISK : undefined,
  });
  onExit(() => db.stop());
  const ses: SesEndpoint = await startSesEndpoint(options.ports['ses-port'], options.ports['viewer-port']);
  onExit(() => ses.stop());
  const sns: SnsEndpoint = await startSnsEndpoint(options.ports['sns-port']);
  onExit(() => sns.stop());
  const tableName = 'notifier-local';
  await createTable(db.endpoint, tableName);
  const notificationPages = () =>
    scanPages(db.endpoint, tableName, {
      expression: 'kind = :k',
      values: { ':k': 'NOTIFICATION' },
    }) as AsyncIterable<OutboxNotification[]>;
  let published: Report | undefined;
  const outbox = await startOutbox(
    {
      notificationPages,
      sends: () => [...ses.sends, ...sns.sends],
      // The outcomes table (status, SES's report after accepting, why not sent), once the run has them.
      pages: {
        '/outcomes': () =>
          published === undefined
            ? 'the run has not converged yet: reload'
            : outboxHtml(outboxRows(published), ses.viewerUrl),
      },
    },
    options.ports['outbox-port'],
  );
  onExit(() => outbox.stop());
  // Without --ses-rate/--sns-rate the local providers have no quota, so dispatch is not paced either (its defaults
  // are the SES sandbox's 14 emails/s, which would make a big file's run crawl for no reason).
  const unpaced = 100_000;
  if (options.sesRate !== undefined) ses.quota.EMAIL = new SendQuota(options.sesRate);
  if (options.snsRate !== undefined) {
    sns.quota.SMS = new SendQuota(options.snsRate);
    sns.quota.PUSH = new SendQuota(options.snsRate);
  }
  const rates = sendRateEnvironment({
    EMAIL: options.sesRate ?? unpaced,
    PUSH: options.snsRate ?? unpaced,
    SMS: options.snsRate ?? unpaced,
  });
  progress.message(
    `outbox ${outbox.url}  (DynamoDB Local ${db.endpoint} ${db.dataDir === undefined ? 'in memory' : `on disk in ${db.dataDir}`}, SES ${ses.url}, viewer ${ses.viewerUrl}, SNS ${sns.url})`,
  );
  if (log !== undefined) progress.message(`handler logs and metrics: ${relative(process.cwd(), log.path)}`);

  const registry = await startLocalSchemaRegistry(options.registry);
  onExit(() => registry.stop());
  const handlers = await loadHandlers({
    dynamoEndpoint: db.endpoint,
    sesEndpoint: ses.url,
    snsEndpoint: sns.url,
    tableName,
    extra: {
      POWERTOOLS_LOG_LEVEL: process.env.LOG_LEVEL ?? 'WARN',
      POWERTOOLS_METRICS_DISABLED: 'false',
      // Production's send timeout, not the tests' 2 s: on a slow or busy machine the emulators' first answers can take
      // seconds, and a send cut off by the timeout would show an UNKNOWN outcome the provider never caused. The lease
      // still outlasts the pacing wait, the send and the write after it (loadDispatchConfig checks): 5 + 5 s within 15.
      SEND_TIMEOUT_MS: String(DISPATCH_TIMING.sendTimeoutMs),
      LEASE_SECONDS: '15',
      // Set explicitly, never left to the default: see Scenario.maxEventAgeSeconds.
      MAX_EVENT_AGE_SECONDS: String(options.maxEventAgeSeconds ?? input.maxEventAgeSeconds),
      // As the stack does: emails go through the configuration set whose events reach the feedback function.
      SES_CONFIGURATION_SET: 'notifier-local',
      // The folder standing in for the schema registry, as the stack configures a Confluent one.
      SCHEMA_REGISTRY_KIND: 'confluent',
      SCHEMA_REGISTRY_URL: registry.url,
      // The evidence of every send, as the stack's Object Lock bucket keeps it: the same keys and bytes, in a folder
      // that outlives the run (npm run ops -- evidence <id> reads it after the table is gone).
      EVIDENCE_DIR: LOCAL_EVIDENCE_DIR,
      ...rates,
    },
  });
  const kafka = new KafkaMapping(handlers.ingest);
  // Dispatch's two triggers, each reading the stream on its own (lib/dispatch-triggers.ts): critical types, and all.
  const readers = {
    urgent: new StreamReader(db.endpoint, tableName),
    routine: new StreamReader(db.endpoint, tableName),
  };
  onExit(() => {
    readers.urgent.close();
    readers.routine.close();
  });
  const stream = new DispatchMappings(readers, handlers.dispatch);
  const feedback = new FeedbackMapping(() => ses.feedback.splice(0), handlers.feedback);
  // SNS's delivery status log entries, a subscription batch per log group, as CloudWatch Logs would deliver them.
  let deliveryLogs = 0;
  const deliveryStatus = new FeedbackMapping(() => {
    const logs = sns.deliveryLogs.splice(0);
    deliveryLogs += logs.length;
    return subscriptionEvents(logs);
  }, handlers.feedback);
  const deliverFeedback = async () => {
    await feedback.deliverAll(signal);
    await deliveryStatus.deliverAll(signal);
  };
  const settle = options.settle || input.settle;
  const env = { dynamoEndpoint: db.endpoint, tableName };
  let sendsDropped = 0;
  const sendCount = () => ses.sends.length + sns.sends.length + sendsDropped;
  const trim = () => {
    sendsDropped += trimLedger(ses.sends) + trimLedger(sns.sends);
    // The viewer keeps the first SENDS_IN_FULL emails too.
    const emails = sesStore.getStoreReadonly().emails;
    if (emails.length > SENDS_IN_FULL) emails.length = SENDS_IN_FULL;
  };
  // Whenever dispatch has caught up: SES's feedback on what was sent reaches the feedback function as it would in
  // AWS (not all at the end, held in memory), and the ledgers are cut back.
  const whenIdle = async () => {
    await deliverFeedback();
    trim();
  };
  // The progress line is refreshed by a timer, so it moves while dispatch drains the stream too.
  let records = 0;
  const fraction = () =>
    input.records !== undefined
      ? records / input.records
      : input.source?.totalBytes
        ? input.source.bytesRead() / input.source.totalBytes
        : undefined;
  const ticker = setInterval(() => progress.update(records, sendCount(), fraction()), 250);
  onExit(() => clearInterval(ticker));

  const t0 = Date.now();
  progress.start();
  let batchIndex = 0;
  for await (const batch of input.batches) {
    if (signal.aborted) break;
    const event = () =>
      mskEvent(
        batch.values.map((value, j) => ({
          topic: TOPIC,
          partition: 0,
          offset: batch.offset + j,
          value: Buffer.from(value, options.base64 ? 'base64' : 'utf8'),
        })),
      );
    // The first delivery and --redeliver extra deliveries of the same batch run concurrently.
    await Promise.all([
      kafka.deliver(event()),
      ...Array.from({ length: options.redeliver }, () => kafka.deliver(event())),
    ]);
    if (batch.redeliver) await kafka.deliver(event());
    if (settle) {
      await converge(stream, handlers, env, { timeoutMs: 300_000, signal, onIdle: whenIdle });
      await deliverFeedback();
    }
    records += batch.values.length;
    batchIndex++;
    // Dispatch drains the stream every 10 batches. (Running it beside ingest, as in AWS, measured slower here: both
    // wait on the one DynamoDB Local, and ingest's transactions starve dispatch's claims.)
    if (batchIndex % 10 === 0) {
      await stream.pump();
      await whenIdle();
    } else trim();
  }
  progress.update(records, sendCount(), undefined, true);
  let interrupted = signal.aborted;
  if (!interrupted) {
    try {
      await converge(stream, handlers, env, { timeoutMs: 300_000, signal, onIdle: whenIdle });
      await deliverFeedback();
    } catch (error) {
      if (!signal.aborted) throw error;
    }
    interrupted = signal.aborted;
  }
  clearInterval(ticker);
  progress.clear();
  const seconds = (Date.now() - t0) / 1000;

  trim();
  // The sends kept in full (the first SENDS_IN_FULL of each provider), in the order the providers accepted them.
  const sent = [...ses.sends, ...sns.sends].sort((a, b) => a.at - b.at);
  // Read after the feedback: the outcomes carry its deliveryStatus.
  const counts = await summarizeTable(db.endpoint, tableName, {
    listLimit: SENDS_IN_FULL,
    messageIds: new Set(sent.map((s) => s.messageId)),
  });
  const m = output.metrics;
  // The handler's own figures (EMF metrics, summed as CloudWatch would); `delivered` is the emulator's count.
  const { received, ...figures } = Object.fromEntries(
    Object.entries(FIGURE_METRICS).map(([figure, metric]) => [figure, m[metric] ?? 0]),
  ) as unknown as IngestFigures;
  const reconciled = received === kafka.deliveries && reconciles({ received, ...figures });
  const report = {
    ...(interrupted ? { interrupted: true, recordsRead: records } : {}),
    events: { delivered: kafka.deliveries, ...figures },
    reconciled,
    notifications: {
      created: m.NotificationsCreated ?? 0,
      sent: counts.byStatus.SENT ?? 0,
      failed: counts.byStatus.FAILED ?? 0,
      unknown: counts.byStatus.UNKNOWN ?? 0,
      suppressed: counts.byStatus.SUPPRESSED ?? 0,
      // Written REFUSED (a contact point without a sendable reading) and still so; repaired ones were sent.
      refused: counts.byStatus.REFUSED ?? 0,
      repaired: m.NotificationsRepaired ?? 0,
      ...(interrupted ? { pending: counts.byStatus.PENDING ?? 0, sending: counts.byStatus.SENDING ?? 0 } : {}),
    },
    outcomes: counts.outcomes,
    outcomesNotListed: counts.outcomesNotListed,
    feedback: { delivered: feedback.delivered, snsDeliveryStatus: deliveryLogs },
    preferences: counts.preferences,
    suppressions: counts.suppressions,
    sends: sent.map((s) => sendView(s, counts.notificationIdOfMessage)),
    sendsNotListed: sendsDropped,
    pacing: {
      seconds: Math.round(seconds * 10) / 10,
      deferred: m.SendsDeferred ?? 0,
      providerThrottled: { SES: ses.throttled.EMAIL ?? 0, SNS: (sns.throttled.SMS ?? 0) + (sns.throttled.PUSH ?? 0) },
    },
    quarantined: counts.quarantined,
    quarantine: counts.quarantine,
    onFailure: stream.onFailure.length,
    outbox: outbox.url,
    log: log === undefined ? null : relative(process.cwd(), log.path),
    // Evidence written for every accepted send; a gap is one the store refused at once (the sweeper fills it).
    evidence: {
      dir: relative(process.cwd(), LOCAL_EVIDENCE_DIR),
      gaps: m.EvidenceGaps ?? 0,
      gapsFilled: m.EvidenceGapsFilled ?? 0,
      lost: m.EvidenceLost ?? 0,
    },
  };
  published = report;
  if (options.json) output.writeStdout(`${JSON.stringify(report, null, 2)}\n`);
  else output.writeStdout(humanSummary(report, seconds, ses.viewerUrl, options.keep));
  if (!reconciled) {
    progress.message(
      `warning: the figures do not reconcile: delivered ${kafka.deliveries} (handler saw ${received}) ≠ ${EQUATION_TERMS.map((t) => `${t} ${figures[t]}`).join(' + ')}`,
    );
  }
  if (!interrupted && report.events.accepted !== counts.inbox) {
    progress.message(`warning: ${report.events.accepted} accepted by metrics but ${counts.inbox} inbox items`);
  }
  if (interrupted) {
    return signal.reason === 'EPIPE'
      ? RUN_EXIT.SIGPIPE
      : RUN_EXIT[(signal.reason as 'SIGINT' | 'SIGTERM' | 'SIGHUP') ?? 'SIGINT'];
  }

  if (options.keep) {
    progress.message(
      `--keep: everything stays up, and the pipeline keeps running (npm run ops -- --endpoint ${db.endpoint} …). Outbox: ${outbox.url}  Email viewer: ${ses.viewerUrl}. Ctrl-C to stop.`,
    );
    // Replays and manual resends from the operator CLI are dispatched here, as the stream trigger would.
    while (!signal.aborted) {
      await stream.pump().catch(() => undefined);
      await handlers.sweeper({}, lambdaContext('notifier-sweeper', 55_000)).catch(() => undefined);
      await deliverFeedback().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
    }
    return RUN_EXIT.OK;
  }
  if (!reconciled) return RUN_EXIT.FAILED;
  if (report.notifications.failed + report.notifications.unknown + report.onFailure > 0) return RUN_EXIT.NOT_ALL_SENT;
  if (kafka.deliveries > 0 && report.events.accepted + report.events.duplicates === 0) return RUN_EXIT.NOTHING_ACCEPTED;
  return RUN_EXIT.OK;
}

const EQUATION_TERMS = ['accepted', 'duplicates', 'conflicts', 'quarantined', 'requarantined', 'failed'] as const;

type Report = {
  interrupted?: boolean;
  recordsRead?: number;
  events: Record<string, number>;
  reconciled: boolean;
  notifications: Record<string, number>;
  outcomes: TableSummary['outcomes'];
  outcomesNotListed: number;
  feedback: { delivered: number; snsDeliveryStatus: number };
  preferences: TableSummary['preferences'];
  suppressions: TableSummary['suppressions'];
  pacing: { seconds: number; deferred: number; providerThrottled: { SES: number; SNS: number } };
  sends: ReturnType<typeof sendView>[];
  sendsNotListed: number;
  quarantined: number;
  quarantine: TableSummary['quarantine'];
  onFailure: number;
  outbox: string;
  log: string | null;
  evidence: { dir: string; gaps: number; gapsFilled: number; lost: number };
};

function sendView(s: AcceptedSend, notificationIdOfMessage: ReadonlyMap<string, string>) {
  // SMS carries no id of ours: the table's providerMessageId ties the provider's message back to the notification.
  const notificationId = s.notificationId ?? notificationIdOfMessage.get(s.messageId) ?? null;
  return {
    notificationId,
    eventId: notificationId === null ? null : (parseNotificationId(notificationId)?.eventId ?? null),
    channel: s.channel,
    to: s.to,
    from: s.from ?? null,
    subject: s.subject ?? null,
    text: s.text,
    html: s.html ?? null,
  };
}

/** The outcomes table's rows: each outcome with what its provider received (subject, or the text's first line). */
function outboxRows(r: Report): OutboxRow[] {
  return r.outcomes.map((o) => {
    const send = r.sends.find((s) => s.notificationId === o.notificationId);
    const sent = send === undefined ? null : String(send.subject ?? String(send.text).split('\n')[0] ?? '');
    return { ...o, channel: parseNotificationId(o.notificationId)?.channel ?? '', sent };
  });
}

function humanSummary(r: Report, seconds: number, viewer: string, keep: boolean): string {
  const lines = [
    '',
    r.interrupted
      ? `notifier local run — INTERRUPTED after ${seconds.toFixed(1)} s and ${r.recordsRead} records read: a partial summary`
      : `notifier local run — converged in ${seconds.toFixed(1)} s`,
    '',
    `events         delivered ${r.events.delivered} = ${EQUATION_TERMS.map((t) => `${t} ${r.events[t]}`).join(' + ')}${r.reconciled ? '' : '  ← DOES NOT RECONCILE'}`,
    `               of the accepted: without a channel to send ${r.events.withoutNotifications}  too old to send ${r.events.tooOld}  display text cleaned ${r.events.displayTextSanitised}  card numbers masked ${r.events.cardNumbersMasked}`,
    `               with a channel refused ${r.events.withRefusedChannels}  spellings normalised ${r.events.spellingsNormalised}  language fell back ${r.events.localeFallbacks}  time zone fell back ${r.events.timeZoneFallbacks}  of the duplicates: repairs ${r.events.repairs}`,
    `notifications  created ${r.notifications.created}  sent ${r.notifications.sent}  failed ${r.notifications.failed}  unknown ${r.notifications.unknown}  suppressed ${r.notifications.suppressed}  refused ${r.notifications.refused} (repaired since ${r.notifications.repaired})${r.interrupted ? `  still pending ${r.notifications.pending}  sending ${r.notifications.sending}` : ''}`,
    `feedback       to the feedback function: SES events ${r.feedback.delivered}, SNS delivery status log entries ${r.feedback.snsDeliveryStatus}`,
    `stream         records given up to the on-failure queue: ${r.onFailure}`,
    `pacing         deferred ${r.pacing.deferred}  throttled by SES ${r.pacing.providerThrottled.SES}, by SNS ${r.pacing.providerThrottled.SNS}`,
    '',
    'sends (what SES and SNS received):',
    ...r.sends.slice(0, 20).map((s) => {
      const sender = s.from === null ? undefined : displayName(s.from);
      // An email's text alternative has several lines: the first sentence after the bank's name says what happened.
      const text = String(s.text)
        .split('\n')
        .filter((line) => line !== '' && line !== sender);
      return `  ${String(s.channel).padEnd(5)} ${String(s.notificationId).padEnd(22)} ${sender === undefined ? '' : `from ${sender} `}${s.subject ? `"${s.subject}" ` : ''}${(text[0] ?? '').slice(0, 70)}`;
    }),
    ...(r.sends.length + r.sendsNotListed > 20 ? [`  … and ${r.sends.length + r.sendsNotListed - 20} more`] : []),
    '',
    'outcomes (status · what the provider said after accepting · why not sent or not delivered):',
    ...r.outcomes
      .slice(0, 40)
      .map(
        (o) =>
          `  ${o.notificationId.padEnd(32)} ${o.status.padEnd(10)} ${(o.deliveryStatus ?? '-').padEnd(10)} ${o.reason ?? ''}`,
      ),
    ...(r.outcomes.length + r.outcomesNotListed > 40
      ? [`  … and ${r.outcomes.length + r.outcomesNotListed - 40} more`]
      : []),
    '',
    ...(r.preferences.length + r.suppressions.length === 0
      ? []
      : [
          'preferences (newest occurredAt wins):',
          ...r.preferences.map(
            (p) =>
              `  ${p.eventId.padEnd(22)} occurred ${p.occurredAt}  ${p.applied ? 'applied' : 'older than the one in force: changed nothing'}`,
          ),
          ...r.suppressions.map(
            (x) =>
              `suppressed     ${x.channel} ${x.addressHash.slice(0, 12)}… ${x.cause} since ${x.since} (from ${x.notificationId})`,
          ),
          '',
        ]),
    `quarantine (${r.quarantined}):`,
    ...r.quarantine
      .slice(0, 20)
      .map(
        (q) =>
          `  offset ${String(q.offset).padEnd(6)} ${String(q.reason).padEnd(18)} ${q.eventId === null ? '' : `${q.eventId}: `}${q.detail ?? ''}`,
      ),
    ...(r.quarantined > 20
      ? [
          `  … and ${r.quarantined - 20} more (--json lists ${r.quarantined > r.quarantine.length ? `the first ${r.quarantine.length} by offset` : 'them all'})`,
        ]
      : []),
    '',
    `outbox page:  ${r.outbox} — what each customer got${keep ? '' : ' (up while the run lasts; add --keep to browse it)'}`,
    `email viewer: ${viewer}`,
    ...(r.log === null ? [] : [`handler logs and metrics: ${r.log}`]),
    `evidence:     ${r.evidence.dir} (gaps ${r.evidence.gaps}, filled ${r.evidence.gapsFilled}, lost ${r.evidence.lost}) — npm run ops -- evidence <eventId> --endpoint <DynamoDB Local>`,
    '',
  ];
  return lines.join('\n');
}

runCommand('notifier', main);
