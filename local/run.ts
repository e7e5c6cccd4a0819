/**
 * `npm start`: the whole pipeline on this machine. DynamoDB Local (in memory), the SES emulator with its web viewer,
 * a local SNS endpoint; the real ingest, dispatch and sweeper handlers behind emulated event source mappings.
 *
 *   npm start -- [--events FILE.jsonl] [--batch-size N] [--redeliver N] [--max-event-age SECONDS] [--json] [--keep]
 *                [--ses-rate R] [--sns-rate R] [--settle]
 *                [--dynamodb-port P] [--ses-port P] [--sns-port P] [--viewer-port P]
 *
 * --ses-rate / --sns-rate give the local SES and SNS an account quota (they throttle beyond R sends per second, as
 * SES and SNS answer) and configure dispatch's pacing with the same rates, as a deploy would.
 *
 * --settle delivers each batch only after the previous batch's notifications and their SES feedback have settled, so
 * a bounce can suppress a later send (the built-in sample always settles). Emails to the SES mailbox simulator
 * (success@, bounce@, complaint@simulator.amazonses.com) produce the feedback events SES would, handed to the real
 * feedback function; the report's `outcomes` show each notification's status, deliveryStatus and reason.
 *
 * Standard output carries the summary (exactly one JSON document with --json); logs and progress go to stderr.
 * The summary checks that the ingest figures reconcile (delivered = accepted + duplicates + conflicts + quarantined +
 * requarantined + failed) and prints a warning line when they do not.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FIGURE_METRICS, type IngestFigures, reconciles } from '../functions/ingest/figures.ts';
import { createTable, type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import { captureOutput } from './emf.ts';
import { mskEvent } from './msk.ts';
import { type OutboxRow, startOutboxPage } from './outbox-page.ts';
import { type Outcome, outcomesOf, readAudience } from './outcomes.ts';
import { converge, FeedbackMapping, KafkaMapping, loadHandlers, readTable, StreamMapping } from './pipeline.ts';
import {
  type AcceptedSend,
  type ProviderEndpoint,
  SendQuota,
  type SesEndpoint,
  startSesEndpoint,
  startSnsEndpoint,
} from './providers.ts';
import { type Scenario, sampleScenario } from './sample.ts';
import { StreamReader } from './stream-reader.ts';

class UsageError extends Error {
  override name = 'UsageError';
}

const TOPIC = 'banking.transfers';

function parseCommandLine(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      events: { type: 'string' },
      'batch-size': { type: 'string' },
      redeliver: { type: 'string' },
      'max-event-age': { type: 'string' },
      json: { type: 'boolean', default: false },
      settle: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      'ses-rate': { type: 'string' },
      'sns-rate': { type: 'string' },
      'dynamodb-port': { type: 'string' },
      'ses-port': { type: 'string' },
      'sns-port': { type: 'string' },
      'viewer-port': { type: 'string' },
    },
    strict: true,
  });
  const int = (name: string, value: string | undefined, min: number) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got "${value}"`);
    return n;
  };
  return {
    events: values.events,
    batchSize: int('batch-size', values['batch-size'], 1),
    redeliver: int('redeliver', values.redeliver, 0) ?? 0,
    maxEventAgeSeconds: int('max-event-age', values['max-event-age'], 0),
    json: values.json === true,
    settle: values.settle === true,
    keep: values.keep === true,
    sesRate: int('ses-rate', values['ses-rate'], 1),
    snsRate: int('sns-rate', values['sns-rate'], 1),
    ports: {
      dynamodb: int('dynamodb-port', values['dynamodb-port'], 1),
      ses: int('ses-port', values['ses-port'], 1),
      sns: int('sns-port', values['sns-port'], 1),
      viewer: int('viewer-port', values['viewer-port'], 1),
    },
  };
}

function loadScenario(file: string | undefined, batchSize: number | undefined): Scenario {
  if (file === undefined) {
    const sample = sampleScenario(Date.now());
    return batchSize === undefined ? sample : { ...sample, batchSize };
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read --events file "${file}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  // A file's events carry fixed dates: the max-age rule is off unless --max-event-age asks for it.
  return {
    values: lines.map((l) => l.replace(/\r$/, '')),
    batchSize: batchSize ?? 100,
    redeliverBatches: [],
    maxEventAgeSeconds: 0,
    settle: false,
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

const progress = (message: string) => process.stderr.write(`[notifier] ${message}\n`);

async function main(): Promise<number> {
  const options = parseCommandLine(process.argv.slice(2));
  const scenario = loadScenario(options.events, options.batchSize);
  requireJava();
  const output = captureOutput();

  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
  };
  try {
    let db: DynamoDbLocal;
    let ses: SesEndpoint;
    let sns: ProviderEndpoint;
    try {
      db = await startDynamoDbLocal(options.ports.dynamodb);
      started.push(db);
      ses = await startSesEndpoint(options.ports.ses, options.ports.viewer);
      started.push(ses);
      sns = await startSnsEndpoint(options.ports.sns);
      started.push(sns);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new UsageError(`a port is already in use: ${(error as Error).message}`);
      throw error;
    }
    const tableName = 'notifier-local';
    await createTable(db.endpoint, tableName);
    const rates: Record<string, string> = {};
    if (options.sesRate !== undefined) {
      ses.quota.EMAIL = new SendQuota(options.sesRate);
      rates.SEND_RATE_EMAIL = String(options.sesRate);
    }
    if (options.snsRate !== undefined) {
      sns.quota.SMS = new SendQuota(options.snsRate);
      sns.quota.PUSH = new SendQuota(options.snsRate);
      rates.SEND_RATE_SMS = String(options.snsRate);
      rates.SEND_RATE_PUSH = String(options.snsRate);
    }
    progress(`DynamoDB Local ${db.endpoint}, SES ${ses.url} (viewer ${ses.viewerUrl}), SNS ${sns.url}`);

    const handlers = await loadHandlers({
      dynamoEndpoint: db.endpoint,
      sesEndpoint: ses.url,
      snsEndpoint: sns.url,
      tableName,
      extra: {
        POWERTOOLS_LOG_LEVEL: process.env.LOG_LEVEL ?? 'WARN',
        POWERTOOLS_METRICS_DISABLED: 'false',
        // Set explicitly, never left to the default: see Scenario.maxEventAgeSeconds.
        MAX_EVENT_AGE_SECONDS: String(options.maxEventAgeSeconds ?? scenario.maxEventAgeSeconds),
        // As the stack does: emails go through the configuration set whose events reach the feedback function.
        SES_CONFIGURATION_SET: 'notifier-local',
        ...rates,
      },
    });
    const kafka = new KafkaMapping(handlers.ingest);
    const reader = new StreamReader(db.endpoint, tableName);
    started.push({ stop: async () => reader.close() });
    const stream = new StreamMapping(reader, handlers.dispatch);
    const feedback = new FeedbackMapping(ses.feedback, handlers.feedback);
    const settle = options.settle || scenario.settle;
    const env = { dynamoEndpoint: db.endpoint, tableName };

    const t0 = Date.now();
    const batches: { offset: number; values: string[] }[] = [];
    for (let i = 0; i < scenario.values.length; i += scenario.batchSize) {
      batches.push({ offset: i, values: scenario.values.slice(i, i + scenario.batchSize) });
    }
    for (const [index, batch] of batches.entries()) {
      const event = () =>
        mskEvent(
          batch.values.map((value, j) => ({
            topic: TOPIC,
            partition: 0,
            offset: batch.offset + j,
            value: Buffer.from(value, 'utf8'),
          })),
        );
      // The first delivery and --redeliver extra deliveries of the same batch run concurrently.
      await Promise.all([
        kafka.deliver(event()),
        ...Array.from({ length: options.redeliver }, () => kafka.deliver(event())),
      ]);
      if (scenario.redeliverBatches.includes(index)) await kafka.deliver(event());
      if (settle) {
        await converge(stream, handlers, env, { timeoutMs: 300_000 });
        await feedback.deliverAll();
      }
      if ((index + 1) % 10 === 0 || index === batches.length - 1) {
        progress(
          `ingested ${Math.min(batch.offset + batch.values.length, scenario.values.length)}/${scenario.values.length} records`,
        );
        await stream.pump();
      }
    }
    await converge(stream, handlers, env, {
      timeoutMs: 300_000,
      onProgress: (c) => progress(`converging: ${JSON.stringify(c.byStatus)}`),
    });
    await feedback.deliverAll();
    // Read after the feedback: the outcomes carry its deliveryStatus.
    const counts = await readTable(db.endpoint, tableName);
    const audience = await readAudience(db.endpoint, tableName);
    const seconds = (Date.now() - t0) / 1000;

    const sent = [...ses.sends, ...sns.sends].sort((a, b) => a.at - b.at);
    const m = output.metrics;
    // The handler's own figures (EMF metrics, summed as CloudWatch would); `delivered` is the emulator's count.
    const { received, ...figures } = Object.fromEntries(
      Object.entries(FIGURE_METRICS).map(([figure, metric]) => [figure, m[metric] ?? 0]),
    ) as unknown as IngestFigures;
    const reconciled = received === kafka.deliveries && reconciles({ received, ...figures });
    const report = {
      events: { delivered: kafka.deliveries, ...figures },
      reconciled,
      notifications: {
        created: m.NotificationsCreated ?? 0,
        sent: counts.byStatus.SENT ?? 0,
        failed: counts.byStatus.FAILED ?? 0,
        unknown: counts.byStatus.UNKNOWN ?? 0,
        suppressed: counts.byStatus.SUPPRESSED ?? 0,
      },
      outcomes: outcomesOf(counts.notifications),
      feedback: { delivered: feedback.delivered },
      preferences: audience.preferences,
      suppressions: audience.suppressions,
      sends: sent.map((s) => sendView(s, counts.notifications)),
      pacing: {
        seconds: Math.round(seconds * 10) / 10,
        deferred: m.SendsDeferred ?? 0,
        providerThrottled: { SES: ses.throttled.EMAIL ?? 0, SNS: (sns.throttled.SMS ?? 0) + (sns.throttled.PUSH ?? 0) },
      },
      quarantine: counts.quarantine
        .map((q) => ({ reason: q.reason, eventId: q.eventId ?? null, offset: (q.source as { offset: number }).offset }))
        .sort((a, b) => a.offset - b.offset),
    };
    const outbox = await startOutboxPage(() => outboxRows(report), ses.viewerUrl);
    started.push(outbox);
    if (options.json) output.writeStdout(`${JSON.stringify(report, null, 2)}\n`);
    else output.writeStdout(humanSummary(report, seconds, ses.viewerUrl, stream.onFailure.length, outbox.url));
    if (!reconciled) {
      progress(
        `warning: the figures do not reconcile: delivered ${kafka.deliveries} (handler saw ${received}) ≠ ${EQUATION_TERMS.map((t) => `${t} ${figures[t]}`).join(' + ')}`,
      );
    }
    if (report.events.accepted !== counts.inbox) {
      progress(`warning: ${report.events.accepted} accepted by metrics but ${counts.inbox} inbox items`);
    }

    if (options.keep) {
      progress(
        `--keep: everything stays up. Email viewer: ${ses.viewerUrl}  DynamoDB Local: ${db.endpoint}. Ctrl-C to stop.`,
      );
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
    return 0;
  } finally {
    await stopAll();
    output.restore();
  }
}

const EQUATION_TERMS = ['accepted', 'duplicates', 'conflicts', 'quarantined', 'requarantined', 'failed'] as const;

type Report = {
  events: Record<string, number>;
  reconciled: boolean;
  notifications: Record<string, number>;
  outcomes: Outcome[];
  feedback: { delivered: number };
  preferences: Awaited<ReturnType<typeof readAudience>>['preferences'];
  suppressions: Awaited<ReturnType<typeof readAudience>>['suppressions'];
  pacing: { seconds: number; deferred: number; providerThrottled: { SES: number; SNS: number } };
  sends: ReturnType<typeof sendView>[];
  quarantine: { reason: unknown; eventId: unknown; offset: number }[];
};

function sendView(s: AcceptedSend, notifications: Record<string, unknown>[]) {
  // SMS carries no id of ours: the table's providerMessageId ties the provider's message back to the notification.
  const notificationId =
    s.notificationId ??
    (notifications.find((n) => n.providerMessageId === s.messageId)?.notificationId as string | undefined) ??
    null;
  return {
    notificationId,
    eventId: notificationId === null ? null : notificationId.slice(0, notificationId.lastIndexOf('#')),
    channel: s.channel,
    to: s.to,
    from: s.from ?? null,
    subject: s.subject ?? null,
    text: s.text,
    html: s.html ?? null,
  };
}

/** `"Example Bank" <a@b>` or `=?UTF-8?B?…?= <a@b>` → the display name as a reader sees it. */
function displayName(source: string): string {
  const name = source.replace(/\s*<[^>]*>$/, '');
  return name
    .replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=\s*/g, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'))
    .replace(/^"(.*)"$/, '$1')
    .replace(/\\(.)/g, '$1');
}

/** The outbox page's rows: each outcome with what its provider received (subject, or the text's first line). */
function outboxRows(r: Report): OutboxRow[] {
  return r.outcomes.map((o) => {
    const send = r.sends.find((s) => s.notificationId === o.notificationId);
    const sent = send === undefined ? null : String(send.subject ?? String(send.text).split('\n')[0] ?? '');
    return { ...o, channel: o.notificationId.slice(o.notificationId.lastIndexOf('#') + 1), sent };
  });
}

function humanSummary(r: Report, seconds: number, viewer: string, onFailure: number, outbox: string): string {
  const lines = [
    '',
    `notifier local run — converged in ${seconds.toFixed(1)} s`,
    '',
    `events         delivered ${r.events.delivered} = ${EQUATION_TERMS.map((t) => `${t} ${r.events[t]}`).join(' + ')}${r.reconciled ? '' : '  ← DOES NOT RECONCILE'}`,
    `               of the accepted: without a channel to send ${r.events.withoutNotifications}  too old to send ${r.events.tooOld}  display text cleaned ${r.events.displayTextSanitised}`,
    `notifications  created ${r.notifications.created}  sent ${r.notifications.sent}  failed ${r.notifications.failed}  unknown ${r.notifications.unknown}  suppressed ${r.notifications.suppressed}`,
    `feedback       SES events delivered to the feedback function: ${r.feedback.delivered}`,
    `stream         records given up to the on-failure queue: ${onFailure}`,
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
    ...(r.sends.length > 20 ? [`  … and ${r.sends.length - 20} more`] : []),
    '',
    'outcomes (status · what SES said after accepting · why not sent):',
    ...r.outcomes
      .slice(0, 40)
      .map(
        (o) =>
          `  ${o.notificationId.padEnd(32)} ${o.status.padEnd(10)} ${(o.deliveryStatus ?? '-').padEnd(10)} ${o.reason ?? ''}`,
      ),
    ...(r.outcomes.length > 40 ? [`  … and ${r.outcomes.length - 40} more`] : []),
    '',
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
    'quarantine:',
    ...r.quarantine
      .slice(0, 20)
      .map((q) => `  offset ${String(q.offset).padEnd(6)} ${String(q.reason).padEnd(18)} ${q.eventId ?? ''}`),
    ...(r.quarantine.length > 20 ? [`  … and ${r.quarantine.length - 20} more`] : []),
    '',
    `email viewer: ${viewer}  outbox (outcomes): ${outbox} (up while the run lasts; add --keep to browse them)`,
    '',
  ];
  return lines.join('\n');
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`notifier: ${error.name === 'UsageError' ? '' : `${error.name}: `}${error.message}\n`);
    process.exit(error.name === 'UsageError' ? 2 : 1);
  },
);
