/**
 * `npm start`: the whole pipeline on this machine. DynamoDB Local (in memory), the SES emulator with its web viewer,
 * a local SNS endpoint; the real ingest, dispatch and sweeper handlers behind emulated event source mappings; the
 * outbox page (tools/local/outbox.ts) showing what each customer got.
 *
 * Standard output carries the summary (exactly one JSON document with --json); progress and messages go to standard
 * error; the handlers' JSON logs and EMF lines go to the run's log file unless --verbose. Each run has a folder of its
 * own, .local/runs/<started>/ (tools/local/run-dir.ts): its log file and its evidence, named in the summary. The summary checks that the ingest figures reconcile (delivered = accepted + duplicates + conflicts +
 * quarantined + requarantined + failed) and says so when they do not. Exit codes: see USAGE.
 *
 * --settle delivers each batch only after the previous batch's notifications and their feedback have settled, so
 * a bounce can suppress a later send (the built-in sample always settles). Emails to the SES mailbox simulator
 * (success@, bounce@, complaint@simulator.amazonses.com) produce the feedback events SES would, and every SMS and push
 * the local SNS accepted the delivery status log entry SNS would (tools/local/sns-delivery-status.ts), handed to the real
 * feedback function; the report's `outcomes` show each notification's status, deliveryStatus and reason.
 *
 * The run in phases: check what it needs, start the services, load the pipeline on them, deliver the records, report;
 * with --keep, keep the pipeline running for the operator CLI.
 */
import { mkdirSync, openSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, relative } from 'node:path';
import { DISPATCH_TIMING } from '../../functions/contracts/dispatch-timing.ts';
import { sendRateEnvironment } from '../../functions/contracts/environment.ts';
import { FIGURE_METRICS, type IngestFigures, reconciles } from '../../functions/contracts/ingest-figures.ts';
import { assertPortsFree, onExit, runCommand } from './cli.ts';
import { LOCAL_USERS, startConsole } from './console.ts';
import { createTable, keepsDataOnDisk, scanPages, startDynamoDbLocal } from './dynamodb-local.ts';
import { captureOutput } from './emf.ts';
import { mskEvent } from './msk.ts';
import { type Input, openInput, parseOptions, RUN_EXIT, type RunOptions, requireJava } from './options.ts';
import { type OutboxNotification, SENDS_IN_FULL, startOutbox } from './outbox.ts';
import { outboxHtml } from './outbox-page.ts';
import { summarizeTable } from './outcomes.ts';
import {
  converge,
  DispatchMappings,
  FeedbackMapping,
  KafkaMapping,
  lambdaContext,
  loadHandlers,
  sqsBatches,
} from './pipeline.ts';
import { Progress } from './progress.ts';
import { type AcceptedSend, SendQuota, startSesEndpoint, startSnsEndpoint } from './providers.ts';
import { newRunDir, type RunDir, recordRun } from './run-dir.ts';
import { readRegistryFolder, startLocalSchemaRegistry } from './schema-registry.ts';
import { subscriptionEvents } from './sns-delivery-status.ts';
import { StreamReader } from './stream-reader.ts';
import { EQUATION_TERMS, humanSummary, outboxRows, type Report, sendView } from './summary.ts';

export { RUN_EXIT, USAGE } from './options.ts';

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

/** The run's log file: every handler line, metric line and warning of this run. */
function openLogFile(run: RunDir): { path: string; write: (text: string) => void } {
  mkdirSync(dirname(run.logPath), { recursive: true });
  const fd = openSync(run.logPath, 'a');
  return { path: run.logPath, write: (text) => void writeSync(fd, text) };
}

async function main(signal: AbortSignal, heard: () => void): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const input = await openInput(options.events, options.batchSize);
  // Read now: a missing or malformed folder is a usage error before anything starts.
  readRegistryFolder(options.registry);
  await assertPortsFree(options.ports);
  requireJava();
  const run = newRunDir();
  const log = options.verbose ? undefined : openLogFile(run);
  const output = captureOutput(log?.write);
  onExit(() => output.restore());
  const progress = new Progress(output.writeStderr, process.stderr.isTTY === true && !options.verbose);
  onExit(() => progress.clear());
  const services = await startServices(options, input, progress);
  recordRun(run, { endpoint: services.db.endpoint, tableName: services.tableName });
  if (log !== undefined) progress.message(`this run's log and evidence: ${relative(process.cwd(), run.dir)}`);
  const pipeline = await loadPipeline(services, options, input, run, signal);
  // After the pipeline: the console's handlers read the table and the evidence the pipeline's environment names.
  const supportConsole = await startConsole(options.ports['console-port']);
  onExit(() => supportConsole.stop());
  progress.message(`support console ${supportConsole.url} (sign in as ${consoleUsers()})`);
  // Under way: from now on a signal stops the run after the batch in hand, and it reports what it has — it has heard
  // the signal, so no grace period cuts the report short.
  if (signal.aborted) heard();
  else signal.addEventListener('abort', heard, { once: true });
  progress.message('delivering the records (Ctrl-C stops the run and prints what it has)');
  const delivered = await deliverRecords(pipeline, input, options, signal, progress);
  const { report, inbox } = await reportOf(pipeline, delivered, output.metrics, run, log, supportConsole.url);
  services.publish(report);
  if (options.json) output.writeStdout(`${JSON.stringify(report, null, 2)}\n`);
  else output.writeStdout(humanSummary(report, delivered.seconds, services.ses.viewerUrl, options.keep));
  warnIfOff(report, inbox, pipeline, progress);
  if (delivered.interrupted) {
    return signal.reason === 'EPIPE'
      ? RUN_EXIT.SIGPIPE
      : RUN_EXIT[(signal.reason as 'SIGINT' | 'SIGTERM' | 'SIGHUP') ?? 'SIGINT'];
  }
  if (options.keep) return keepRunning(pipeline, signal, progress, supportConsole.url);
  if (!report.reconciled) return RUN_EXIT.FAILED;
  if (report.notifications.failed + report.notifications.unknown + report.onFailure > 0) return RUN_EXIT.NOT_ALL_SENT;
  const { kafka } = pipeline;
  if (kafka.deliveries > 0 && report.events.accepted + report.events.duplicates === 0) return RUN_EXIT.NOTHING_ACCEPTED;
  return RUN_EXIT.OK;
}

/** DynamoDB Local, the SES emulator with its viewer, the local SNS, the table, and the outbox page. */
async function startServices(options: RunOptions, input: Input, progress: Progress) {
  const onDisk = keepsDataOnDisk(
    options.storage,
    input.source === undefined ? { kind: 'sample' } : { kind: 'file', totalBytes: input.source.totalBytes },
  );
  const db = await startDynamoDbLocal(options.ports['dynamodb-port'], {
    onDisk,
    maxHeapMb: onDisk ? DYNAMODB_HEAP_MB_ON_DISK : undefined,
  });
  onExit(() => db.stop());
  const ses = await startSesEndpoint(options.ports['ses-port'], options.ports['viewer-port']);
  onExit(() => ses.stop());
  const sns = await startSnsEndpoint(options.ports['sns-port']);
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
  progress.message(
    `outbox ${outbox.url}  (DynamoDB Local ${db.endpoint} ${db.dataDir === undefined ? 'in memory' : `on disk in ${db.dataDir}`}, SES ${ses.url}, viewer ${ses.viewerUrl}, SNS ${sns.url})`,
  );
  return {
    db,
    ses,
    sns,
    tableName,
    outbox,
    publish: (report: Report) => {
      published = report;
    },
  };
}
type Services = Awaited<ReturnType<typeof startServices>>;

/**
 * Without --ses-rate/--sns-rate the local providers have no quota, so dispatch is not paced either (its defaults are
 * the SES sandbox's 14 emails/s, which would make a big file's run crawl for no reason).
 */
function sendRates(options: RunOptions, { ses, sns }: Services) {
  const unpaced = 100_000;
  if (options.sesRate !== undefined) ses.quota.EMAIL = new SendQuota(options.sesRate);
  if (options.snsRate !== undefined) {
    sns.quota.SMS = new SendQuota(options.snsRate);
    sns.quota.PUSH = new SendQuota(options.snsRate);
  }
  return sendRateEnvironment({
    EMAIL: options.sesRate ?? unpaced,
    PUSH: options.snsRate ?? unpaced,
    SMS: options.snsRate ?? unpaced,
  });
}

/** The real handlers on the services, behind the emulated MSK mapping, dispatch's two triggers and the feedback. */
async function loadPipeline(services: Services, options: RunOptions, input: Input, run: RunDir, signal: AbortSignal) {
  const { db, ses, sns, tableName } = services;
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
      // The sample's events happen now, so their validity and send windows are judged as in AWS; a file's are not.
      NOTICE_TIMING: input.timing,
      // As the stack does: emails go through the configuration set whose events reach the feedback function.
      SES_CONFIGURATION_SET: 'notifier-local',
      // The folder standing in for the schema registry, as the stack configures a Confluent one.
      SCHEMA_REGISTRY_KIND: 'confluent',
      SCHEMA_REGISTRY_URL: registry.url,
      // The evidence of every send, as the stack's Object Lock bucket keeps it: the same keys and bytes, in this run's
      // own folder (npm run ops -- evidence <id> --endpoint … reads it, also after the table is gone).
      EVIDENCE_DIR: run.evidenceDir,
      ...sendRates(options, services),
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
  // SES's events through the queue, in its batches, as the stack delivers them.
  const feedback = new FeedbackMapping(() => sqsBatches(ses.feedback.splice(0)), handlers.feedback);
  // SNS's delivery status log entries, a subscription batch per log group, as CloudWatch Logs would deliver them.
  const deliveryLogs = { count: 0 };
  const deliveryStatus = new FeedbackMapping(() => {
    const logs = sns.deliveryLogs.splice(0);
    deliveryLogs.count += logs.length;
    return subscriptionEvents(logs);
  }, handlers.feedback);
  const deliverFeedback = async () => {
    await feedback.deliverAll(signal);
    await deliveryStatus.deliverAll(signal);
  };
  const ledger = { dropped: 0 };
  const trim = () => {
    ledger.dropped += trimLedger(ses.sends) + trimLedger(sns.sends);
    // The viewer keeps the first SENDS_IN_FULL emails too.
    const emails = sesStore.getStoreReadonly().emails;
    if (emails.length > SENDS_IN_FULL) emails.length = SENDS_IN_FULL;
  };
  return {
    services,
    handlers,
    kafka,
    stream,
    feedback,
    deliveryLogs,
    ledger,
    deliverFeedback,
    trim,
    env: { dynamoEndpoint: db.endpoint, tableName },
    sendCount: () => ses.sends.length + sns.sends.length + ledger.dropped,
    // Whenever dispatch has caught up: SES's feedback on what was sent reaches the feedback function as it would in
    // AWS (not all at the end, held in memory), and the ledgers are cut back.
    whenIdle: async () => {
      await deliverFeedback();
      trim();
    },
  };
}
type Pipeline = Awaited<ReturnType<typeof loadPipeline>>;

/**
 * Every batch through the emulated MSK mapping (with --redeliver's extra deliveries at once), dispatch draining the
 * stream every ten batches (or settling each batch), then convergence: until nothing is in flight. Stops between
 * batches when the run is interrupted.
 */
async function deliverRecords(
  pipeline: Pipeline,
  input: Input,
  options: RunOptions,
  signal: AbortSignal,
  progress: Progress,
) {
  const { kafka, stream, handlers, env, whenIdle, deliverFeedback } = pipeline;
  const settle = options.settle || input.settle;
  // The progress line is refreshed by a timer, so it moves while dispatch drains the stream too.
  let records = 0;
  const fraction = () =>
    input.records !== undefined
      ? records / input.records
      : input.source?.totalBytes
        ? input.source.bytesRead() / input.source.totalBytes
        : undefined;
  const ticker = setInterval(() => progress.update(records, pipeline.sendCount(), fraction()), 250);
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
    } else pipeline.trim();
  }
  progress.update(records, pipeline.sendCount(), undefined, true);
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
  return { records, interrupted, seconds: (Date.now() - t0) / 1000 };
}

/** What the run did: the handlers' own figures (reconciled), every notification's outcome, the sends, the quarantine. */
async function reportOf(
  pipeline: Pipeline,
  delivered: Awaited<ReturnType<typeof deliverRecords>>,
  m: Readonly<Record<string, number>>,
  run: RunDir,
  log: { path: string } | undefined,
  consoleUrl: string,
) {
  const { services, kafka, stream, feedback } = pipeline;
  const { db, ses, sns, tableName, outbox } = services;
  const { interrupted, records, seconds } = delivered;
  pipeline.trim();
  // The sends kept in full (the first SENDS_IN_FULL of each provider), in the order the providers accepted them.
  const sent = [...ses.sends, ...sns.sends].sort((a, b) => a.at - b.at);
  // Read after the feedback: the outcomes carry its deliveryStatus.
  const counts = await summarizeTable(db.endpoint, tableName, {
    listLimit: SENDS_IN_FULL,
    messageIds: new Set(sent.map((s) => s.messageId)),
  });
  // The handler's own figures (EMF metrics, summed as CloudWatch would); `delivered` is the emulator's count.
  const { received, ...figures } = Object.fromEntries(
    Object.entries(FIGURE_METRICS).map(([figure, metric]) => [figure, m[metric] ?? 0]),
  ) as unknown as IngestFigures;
  const report = {
    ...(interrupted ? { interrupted: true, recordsRead: records } : {}),
    events: { delivered: kafka.deliveries, ...figures },
    reconciled: received === kafka.deliveries && reconciles({ received, ...figures }),
    notifications: {
      created: m.NotificationsCreated ?? 0,
      sent: counts.byStatus.SENT ?? 0,
      failed: counts.byStatus.FAILED ?? 0,
      unknown: counts.byStatus.UNKNOWN ?? 0,
      suppressed: counts.byStatus.SUPPRESSED ?? 0,
      // Written REFUSED (a contact point without a sendable reading) and still so; repaired ones were sent.
      refused: counts.byStatus.REFUSED ?? 0,
      repaired: m.NotificationsRepaired ?? 0,
      // The right moment: waiting for the send window (listed as waiting, not as unconverged), or ended unsent by it.
      held: counts.byStatus.HELD ?? 0,
      expired: counts.byStatus.EXPIRED ?? 0,
      superseded: counts.byStatus.SUPERSEDED ?? 0,
      throttled: counts.byStatus.THROTTLED ?? 0,
      ...(interrupted ? { pending: counts.byStatus.PENDING ?? 0, sending: counts.byStatus.SENDING ?? 0 } : {}),
    },
    outcomes: counts.outcomes,
    outcomesNotListed: counts.outcomesNotListed,
    feedback: { delivered: feedback.delivered, snsDeliveryStatus: pipeline.deliveryLogs.count },
    preferences: counts.preferences,
    suppressions: counts.suppressions,
    sends: sent.map((s) => sendView(s, counts.notificationIdOfMessage)),
    sendsNotListed: pipeline.ledger.dropped,
    pacing: {
      seconds: Math.round(seconds * 10) / 10,
      deferred: m.SendsDeferred ?? 0,
      providerThrottled: { SES: ses.throttled.EMAIL ?? 0, SNS: (sns.throttled.SMS ?? 0) + (sns.throttled.PUSH ?? 0) },
    },
    quarantined: counts.quarantined,
    quarantine: counts.quarantine,
    onFailure: stream.onFailure.length,
    outbox: outbox.url,
    console: consoleUrl,
    endpoint: db.endpoint,
    run: relative(process.cwd(), run.dir),
    log: log === undefined ? null : relative(process.cwd(), log.path),
    // Evidence written for every accepted send; a gap is one the store refused at once (the sweeper fills it).
    evidence: {
      dir: relative(process.cwd(), run.evidenceDir),
      gaps: m.EvidenceGaps ?? 0,
      gapsFilled: m.EvidenceGapsFilled ?? 0,
      lost: m.EvidenceLost ?? 0,
    },
  } satisfies Report;
  return { report, inbox: counts.inbox };
}

/** Said on standard error when the figures do not reconcile, or the metrics and the table disagree. */
function warnIfOff(report: Report, inbox: number, { kafka }: Pipeline, progress: Progress): void {
  if (!report.reconciled) {
    const e = report.events as Record<string, number>;
    progress.message(
      `warning: the figures do not reconcile: delivered ${kafka.deliveries} ≠ ${EQUATION_TERMS.map((t) => `${t} ${e[t]}`).join(' + ')}`,
    );
  }
  if (!report.interrupted && report.events.accepted !== inbox) {
    progress.message(`warning: ${report.events.accepted} accepted by metrics but ${inbox} inbox items`);
  }
}

/** --keep: everything stays up, and replays and manual resends from the operator CLI are dispatched as in AWS. */
async function keepRunning(
  pipeline: Pipeline,
  signal: AbortSignal,
  progress: Progress,
  consoleUrl: string,
): Promise<number> {
  const { db, outbox, ses } = pipeline.services;
  progress.message(
    `--keep: everything stays up, and the pipeline keeps running (npm run ops -- --endpoint ${db.endpoint} …). Outbox: ${outbox.url}  Support console: ${consoleUrl} (${consoleUsers()})  Email viewer: ${ses.viewerUrl}. Ctrl-C to stop.`,
  );
  while (!signal.aborted) {
    await pipeline.stream.pump().catch(() => undefined);
    await pipeline.handlers.sweeper({}, lambdaContext('notifier-sweeper', 55_000)).catch(() => undefined);
    await pipeline.deliverFeedback().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
  }
  return RUN_EXIT.OK;
}

/** The local console's users, as the run names them: "sam or kim (support), noor (approver)". */
const consoleUsers = () =>
  ['support', 'approver']
    .map(
      (role) =>
        `${LOCAL_USERS.filter((u) => (u.roles as readonly string[]).includes(role))
          .map((u) => u.username)
          .join(' or ')} (${role})`,
    )
    .join(', ');

runCommand('notifier', main);
