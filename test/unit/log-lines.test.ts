/**
 * A log line carries what an on-call engineer reads and nothing the log group or the invocation's REPORT line already
 * says: CloudWatch Logs bills every byte of the lines each notification writes at INFO, at ingest and for the year it
 * is kept. The runbook's queries (docs/operations.md, Logs Insights) read level, message, eventId or notificationId
 * and the line's own keys; the line ties to its invocation by its request id.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENTRIES_PER_LINE, infoListing, logger, NotifierLogFormatter } from '../../functions/commons/powertools.ts';
import { localTrace, traceQuery, traceText } from '../../tools/ops/trace.ts';

const context = {
  functionName: 'notifier-prod-dispatch',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-2:123456789012:function:notifier-prod-dispatch',
  memoryLimitInMB: '512',
  awsRequestId: '0d56bd3b-74e7-46db-ae30-b083ec15bd92',
} as Context;

const original = { out: process.stdout.write, err: process.stderr.write };
afterEach(() => {
  process.stdout.write = original.out;
  process.stderr.write = original.err;
});

/** The lines a logger writes (to standard output or error) while `f` runs, parsed. */
function linesOf(f: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  const capture = ((chunk: string | Uint8Array) => {
    lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = capture;
  process.stderr.write = capture;
  try {
    f();
  } finally {
    process.stdout.write = original.out;
    process.stderr.write = original.err;
  }
  return lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

describe('a log line', () => {
  it('names its level, message, time, function and invocation, and what the call logged — not the ARN, memory, service, sampling rate or cold start', () => {
    const fresh = new Logger({ serviceName: 'notifier', logLevel: 'INFO', logFormatter: new NotifierLogFormatter() });
    fresh.addContext(context);
    const [line] = linesOf(() =>
      fresh.info('notification sent', { notificationId: 'e-1#EMAIL', channel: 'EMAIL', attempt: 1 }),
    );
    expect(line).toEqual({
      level: 'INFO',
      message: 'notification sent',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      function_name: 'notifier-prod-dispatch',
      function_request_id: '0d56bd3b-74e7-46db-ae30-b083ec15bd92',
      notificationId: 'e-1#EMAIL',
      channel: 'EMAIL',
      attempt: 1,
    });
  });

  it('names the X-Ray trace of a traced invocation only: an unsampled one is recorded nowhere', () => {
    const fresh = new Logger({ serviceName: 'notifier', logLevel: 'INFO', logFormatter: new NotifierLogFormatter() });
    const traceOf = (header: string) => {
      process.env._X_AMZN_TRACE_ID = header;
      try {
        return linesOf(() => fresh.info('event accepted', { eventId: 'e-1' }))[0]?.xray_trace_id;
      } finally {
        delete process.env._X_AMZN_TRACE_ID;
      }
    };
    const root = '1-5759e988-bd862e3fe1be46a994272793';
    expect(traceOf(`Root=${root};Parent=557abcec3ee5a047;Sampled=1`)).toBe(root);
    expect(traceOf(`Root=${root};Parent=557abcec3ee5a047;Sampled=0`)).toBeUndefined();
  });

  it('an error still carries its name, message and stack', () => {
    const fresh = new Logger({ serviceName: 'notifier', logLevel: 'INFO', logFormatter: new NotifierLogFormatter() });
    const [line] = linesOf(() => fresh.error('notification failed', { error: new TypeError('boom') }));
    expect(line).toMatchObject({ level: 'ERROR', message: 'notification failed', error: { name: 'TypeError' } });
    expect(JSON.stringify(line)).toContain('boom');
  });

  it('the functions’ shared logger writes it so, and the runbook’s trace of an event finds a line by its notificationId alone', () => {
    const level = logger.getLevelName();
    logger.setLogLevel('INFO');
    try {
      const [line] = linesOf(() => logger.warn('delivery feedback', { notificationId: 'trf-9#SMS' }));
      expect(line).toMatchObject({ level: 'WARN', message: 'delivery feedback', notificationId: 'trf-9#SMS' });
      for (const key of ['service', 'function_arn', 'function_memory_size', 'cold_start', 'sampling_rate'])
        expect(line, key).not.toHaveProperty(key);
    } finally {
      logger.setLogLevel(level);
    }
    expect(traceQuery('trf-9')).toContain('notificationId like "trf-9#"');
  });
});

/** The regular expression of the trace query's `@message like /…/`, as JavaScript reads it. */
const traceRegex = (eventId: string) => new RegExp(/@message like \/(.*)\/$/m.exec(traceQuery(eventId))?.[1] ?? '^$');

describe('what an invocation did to many records: one line listing them', () => {
  const atInfo = <T>(f: () => T): T => {
    const level = logger.getLevelName();
    logger.setLogLevel('INFO');
    try {
      return f();
    } finally {
      logger.setLogLevel(level);
    }
  };

  it('lists every id of the invocation in one line; the trace of each event finds it, and no other event’s', () => {
    const sent = ['trf-1#EMAIL 1 ses-1', 'trf-1#SMS 2 9f1c', 'trf-12#PUSH 1 a7e0'];
    const lines = atInfo(() => linesOf(() => infoListing('notifications sent', sent)));
    expect(lines).toEqual([expect.objectContaining({ level: 'INFO', message: 'notifications sent', sent })]);
    const raw = JSON.stringify(lines[0]);
    expect(traceRegex('trf-1').test(raw)).toBe(true);
    expect(traceRegex('trf-12').test(raw)).toBe(true);
    expect(traceRegex('trf-2').test(raw)).toBe(false);
    expect(traceRegex('trf').test(raw)).toBe(false);
    // an eventId's dot is a dot, not any character
    expect(traceRegex('a.b').test('{"sent":["axb#EMAIL 1 m"]}')).toBe(false);
    expect(traceRegex('a.b').test('{"sent":["a.b#EMAIL 1 m"]}')).toBe(true);
    // the per-record lines still match: an eventId, a notificationId
    expect(traceRegex('trf-1').test('{"message":"send deferred","notificationId":"trf-1#SMS","eventId":"trf-1"}')).toBe(
      true,
    );
  });

  it('a batch line keeps its figures and lists the accepted events; ops trace prints an event’s entries, locally and from Logs Insights', () => {
    const [line] = atInfo(() =>
      linesOf(() => infoListing('batch ingested', ['e-7 EMAIL,SMS', 'e-8 PUSH'], { received: 2, accepted: 2 })),
    );
    expect(line).toMatchObject({
      message: 'batch ingested',
      received: 2,
      accepted: 2,
      events: ['e-7 EMAIL,SMS', 'e-8 PUSH'],
    });
    const text = traceText(
      [
        {
          '@timestamp': 't',
          '@log': '1:/aws/lambda/ingest',
          message: 'batch ingested',
          '@message': JSON.stringify(line),
        },
      ],
      'e-8',
    );
    expect(text).toContain('e-8 PUSH');
    expect(text).not.toContain('e-7 EMAIL,SMS');
    const dir = mkdtempSync(join(tmpdir(), 'trace-'));
    const log = join(dir, 'run.log');
    writeFileSync(log, `${JSON.stringify(line)}\n{"message":"x","eventId":"e-88"}\n`);
    expect(localTrace('e-8', log)).toEqual([JSON.stringify(line)]);
  });

  it(`writes at most ${ENTRIES_PER_LINE} entries a line, the rest in numbered parts; nothing to list and nothing to say: no line`, () => {
    const ids = Array.from({ length: ENTRIES_PER_LINE * 2 + 1 }, (_, i) => `e-${i}#SMS DELIVERED m-${i}`);
    const lines = atInfo(() => linesOf(() => infoListing('deliveries recorded', ids)));
    expect(lines.map((l) => (l.reports as string[]).length)).toEqual([ENTRIES_PER_LINE, ENTRIES_PER_LINE, 1]);
    expect(lines.map((l) => l.part)).toEqual([undefined, 2, 3]);
    expect(lines.flatMap((l) => l.reports)).toEqual(ids);
    expect(atInfo(() => linesOf(() => infoListing('notifications sent', [])))).toEqual([]);
  });
});

describe('the invocation’s metrics', () => {
  it('sums each dimension set’s counts at the flush: the plain counts and the first set in one document, each further set in one of its own', async () => {
    // Metrics read POWERTOOLS_METRICS_DISABLED when made (the tests' environment disables them): a fresh module.
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    vi.resetModules();
    try {
      const p = await import('../../functions/commons/powertools.ts');
      const docs = linesOf(() => {
        for (let i = 0; i < 50; i++) p.countBy('NotificationsSent', { channel: 'EMAIL' });
        p.countBy('NotificationsSent', { channel: 'SMS' }, 2);
        p.countBy('DeliveryFeedback', { channel: 'SMS', status: 'DELIVERED' });
        p.countBy('DeliveryFeedback', { status: 'DELIVERED', channel: 'SMS' }, 3);
        p.countBy('NotificationsSent', { channel: 'PUSH' }, 0);
        p.count('DispatchSkipped');
        p.publishMetrics();
      });
      const sets = docs.map((d) => ({
        dimensions: (d._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics.map(
          (c) => c.Dimensions[0],
        ),
        channel: d.channel,
        status: d.status,
        sent: d.NotificationsSent,
        delivered: d.DeliveryFeedback,
        skipped: d.DispatchSkipped,
      }));
      expect(sets).toEqual([
        expect.objectContaining({ dimensions: [['service'], ['service', 'channel']], skipped: 1, sent: 50 }),
        expect.objectContaining({ dimensions: [['service', 'channel']], channel: 'SMS', sent: 2 }),
        expect.objectContaining({
          dimensions: [['service', 'channel', 'status']],
          channel: 'SMS',
          status: 'DELIVERED',
          delivered: 4,
        }),
      ]);
      expect(docs[0]).toMatchObject({ channel: 'EMAIL', service: 'notifier' });
      // Flushed: the next invocation starts from nothing.
      expect(linesOf(() => p.publishMetrics())).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });

  /** The powertools module with metrics on (they are read when it is made: the tests' environment disables them). */
  const withMetrics = async (f: (p: typeof import('../../functions/commons/powertools.ts')) => Promise<void>) => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    vi.resetModules();
    try {
      await f(await import('../../functions/commons/powertools.ts'));
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  };
  const namesIn = (docs: Record<string, unknown>[]) =>
    docs.map((d) =>
      (d._aws as { CloudWatchMetrics: { Metrics: { Name: string }[] }[] }).CloudWatchMetrics.flatMap((c) =>
        c.Metrics.map((m) => m.Name),
      ),
    );

  it('writes what an alarm reads the moment it is counted: an invocation that dies after an UNKNOWN outcome has told CloudWatch', async () => {
    await withMetrics(async (p) => {
      // No publishMetrics: the invocation times out, runs out of memory or crashes here.
      const docs = linesOf(() => {
        p.countBy('NotificationsSent', { channel: 'SMS' });
        p.countBy('UnknownOutcomes', { channel: 'EMAIL' });
        p.countBy('SendFailures', { channel: 'SMS' });
        p.countBy('ProviderBlocked', { channel: 'SMS' });
        p.countBy('DeliveryFeedback', { channel: 'SMS', status: 'FAILED' });
        p.countNow('AcceptancesNotRecorded');
      });
      expect(namesIn(docs)).toEqual([
        ['UnknownOutcomes'],
        ['SendFailures'],
        ['ProviderBlocked'],
        ['DeliveryFeedback'],
        ['AcceptancesNotRecorded'],
      ]);
      expect(docs[0]).toMatchObject({ channel: 'EMAIL', UnknownOutcomes: 1, service: 'notifier' });
      expect(docs[3]).toMatchObject({ channel: 'SMS', status: 'FAILED', DeliveryFeedback: 1 });
      expect(docs[4]).toMatchObject({ AcceptancesNotRecorded: 1, service: 'notifier' });
    });
  });

  it('flushes the summed counts when the evidence close throws, and the close’s error still escapes', async () => {
    await withMetrics(async (p) => {
      const lines: string[] = [];
      const write = process.stdout.write;
      process.stdout.write = ((c: string | Uint8Array) => lines.push(String(c)) > 0) as typeof process.stdout.write;
      let escaped: unknown;
      try {
        p.countBy('NotificationsSent', { channel: 'EMAIL' }, 3);
        p.count('EvidenceSpooled', 3);
        await p.thenPublishMetrics(async () => {
          throw new Error('S3 is down');
        });
      } catch (error) {
        escaped = error;
      } finally {
        process.stdout.write = write;
      }
      expect((escaped as Error | undefined)?.message).toBe('S3 is down');
      const docs = lines
        .flatMap((l) => l.split('\n'))
        .filter((l) => l.startsWith('{"_aws"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(namesIn(docs)).toEqual([['EvidenceSpooled', 'NotificationsSent']]);
      expect(docs[0]).toMatchObject({ channel: 'EMAIL', NotificationsSent: 3, EvidenceSpooled: 3 });
    });
  });

  it('sums only the successes counted once a record; every count with dimensions an alarm fires on is written at once', async () => {
    const { summedPerInvocation } = await import('../../functions/commons/powertools.ts');
    const { METRIC_NAMES } = await import('../../functions/contracts/telemetry.ts');
    const summed = METRIC_NAMES.filter((n) => summedPerInvocation(n, { channel: 'EMAIL', status: 'DELIVERED' }));
    expect(summed).toEqual(['NotificationsCreated', 'PreferencesUpdates', 'NotificationsSent', 'DeliveryFeedback']);
    for (const status of ['FAILED', 'BOUNCED', 'COMPLAINED', 'REJECTED', 'DELAYED'])
      expect(summedPerInvocation('DeliveryFeedback', { channel: 'SMS', status }), status).toBe(false);
  });
});

describe('an invocation of one record: one line, its metrics and its listing together', () => {
  /** Every line (standard output and error) the flush of `f`'s invocation writes, with metrics on. */
  const invocation = async (f: (p: typeof import('../../functions/commons/powertools.ts')) => void) => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'notifier/prod');
    vi.resetModules();
    try {
      const p = await import('../../functions/commons/powertools.ts');
      p.logger.setLogLevel('INFO');
      return linesOf(() => {
        f(p);
        p.publishMetrics();
      });
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  };
  type Directive = { Dimensions: string[][]; Metrics: { Name: string }[] };
  const directivesOf = (doc: Record<string, unknown> | undefined): Directive[] =>
    (doc?._aws as { CloudWatchMetrics: Directive[] } | undefined)?.CloudWatchMetrics ?? [];

  it('a spooling send writes ONE line: its plain count, its channel’s send and the listing in one EMF document; the runbook’s trace finds it and prints the entry, not the document’s channel', async () => {
    const entry = 'trf-1#SMS 1 9f1c';
    const lines = await invocation((p) => {
      p.logger.addContext(context);
      p.countBy('NotificationsSent', { channel: 'SMS' });
      p.count('EvidenceSpooled');
      p.infoListing('notifications sent', [entry]);
    });
    expect(lines).toHaveLength(1);
    const [doc] = lines;
    expect(directivesOf(doc)).toEqual([
      { Namespace: 'notifier/prod', Dimensions: [['service']], Metrics: [{ Name: 'EvidenceSpooled', Unit: 'Count' }] },
      {
        Namespace: 'notifier/prod',
        Dimensions: [['service', 'channel']],
        Metrics: [{ Name: 'NotificationsSent', Unit: 'Count' }],
      },
    ]);
    expect(doc).toMatchObject({
      service: 'notifier',
      EvidenceSpooled: 1,
      channel: 'SMS',
      NotificationsSent: 1,
      message: 'notifications sent',
      sent: [entry],
      // The invocation, as on every line: its REPORT line and its other lines.
      function_request_id: context.awsRequestId,
    });
    const raw = JSON.stringify(doc);
    expect(raw.startsWith('{"_aws"')).toBe(true);
    expect(traceRegex('trf-1').test(raw)).toBe(true);
    expect(traceRegex('trf-2').test(raw)).toBe(false);
    const text = traceText(
      [
        {
          '@timestamp': 't',
          '@log': '1:/aws/lambda/dispatch',
          message: 'notifications sent',
          channel: 'SMS',
          '@message': raw,
        },
      ],
      'trf-1',
    );
    expect(text).toContain(entry);
    expect(text).not.toContain('channel=');
  });

  it('an event of two channels: its figures, its first channel and the batch listing in one document, the second channel in one of its own', async () => {
    const lines = await invocation((p) => {
      p.count('EventsReceived');
      p.count('EventsAccepted');
      p.count('RecordsFailed', 0);
      p.countBy('NotificationsCreated', { channel: 'EMAIL' });
      p.countBy('NotificationsCreated', { channel: 'SMS' });
      p.infoListing('batch ingested', ['e-7 EMAIL,SMS'], { reconciled: true });
    });
    expect(lines.map((l) => directivesOf(l).map((d) => d.Dimensions[0]))).toEqual([
      [['service'], ['service', 'channel']],
      [['service', 'channel']],
    ]);
    expect(lines[0]).toMatchObject({
      EventsReceived: 1,
      RecordsFailed: 0,
      channel: 'EMAIL',
      NotificationsCreated: 1,
      message: 'batch ingested',
      reconciled: true,
      events: ['e-7 EMAIL,SMS'],
    });
    expect(lines[1]).toMatchObject({ channel: 'SMS', NotificationsCreated: 1 });
    expect(lines[1]).not.toHaveProperty('message');
  });

  it('a report needs no plain count: its status’s set and the listing are the one line', async () => {
    const lines = await invocation((p) => {
      p.countBy('DeliveryFeedback', { channel: 'PUSH', status: 'DELIVERED' });
      p.infoListing('deliveries recorded', ['e-9#PUSH DELIVERED m-9']);
    });
    expect(lines).toEqual([
      expect.objectContaining({ status: 'DELIVERED', DeliveryFeedback: 1, reports: ['e-9#PUSH DELIVERED m-9'] }),
    ]);
  });

  it('what an alarm reads is still written the moment it is counted, in a document of its own before the one line', async () => {
    const lines = await invocation((p) => {
      p.countBy('NotificationsSent', { channel: 'EMAIL' });
      p.countBy('UnknownOutcomes', { channel: 'SMS' });
      p.infoListing('notifications sent', ['e-1#EMAIL 1 m-1']);
    });
    expect(lines.map((l) => directivesOf(l).flatMap((d) => d.Metrics.map((m) => m.Name)))).toEqual([
      ['UnknownOutcomes'],
      ['NotificationsSent'],
    ]);
    expect(lines[1]).toMatchObject({ message: 'notifications sent' });
  });

  it(`above ${ENTRIES_PER_LINE} entries the document carries the first ${ENTRIES_PER_LINE}, the rest are numbered log lines; listed and not flushed, nothing leaks into the next invocation`, async () => {
    const ids = Array.from({ length: ENTRIES_PER_LINE + 5 }, (_, i) => `e-${i}#SMS DELIVERED m-${i}`);
    const lines = await invocation((p) => {
      p.countBy('DeliveryFeedback', { channel: 'SMS', status: 'DELIVERED' }, ids.length);
      p.infoListing('deliveries recorded', ids);
    });
    expect(lines.map((l) => [l.message, l.part, (l.reports as string[]).length])).toEqual([
      ['deliveries recorded', undefined, ENTRIES_PER_LINE],
      ['deliveries recorded', 2, 5],
    ]);
    expect(lines.flatMap((l) => l.reports)).toEqual(ids);
  });

  it('an INFO listing: above INFO (POWERTOOLS_LOG_LEVEL=WARN) the document carries the metrics alone', async () => {
    const lines = await invocation((p) => {
      p.logger.setLogLevel('WARN');
      p.countBy('NotificationsSent', { channel: 'EMAIL' });
      p.infoListing('notifications sent', ['e-1#EMAIL 1 m-1']);
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ NotificationsSent: 1 });
    expect(lines[0]).not.toHaveProperty('sent');
  });

  it('nothing counted but something listed: the listing is a log line of its own', async () => {
    const lines = await invocation((p) => p.infoListing('notifications sent', ['e-1#EMAIL 1 m-1']));
    expect(lines).toEqual([expect.objectContaining({ level: 'INFO', message: 'notifications sent' })]);
  });
});
