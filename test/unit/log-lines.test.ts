/**
 * A log line carries what an on-call engineer reads and nothing the log group or the invocation's REPORT line already
 * says: CloudWatch Logs bills every byte of the lines each notification writes at INFO, at ingest and for the year it
 * is kept. The runbook's queries (docs/operations.md, Logs Insights) read level, message, eventId or notificationId
 * and the line's own keys; the line ties to its invocation by its request id.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { logger, NotifierLogFormatter } from '../../functions/commons/powertools.ts';
import { traceQuery } from '../../tools/ops/trace.ts';

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
      const [line] = linesOf(() => logger.info('delivery feedback', { notificationId: 'trf-9#SMS' }));
      expect(line).toMatchObject({ level: 'INFO', message: 'delivery feedback', notificationId: 'trf-9#SMS' });
      for (const key of ['service', 'function_arn', 'function_memory_size', 'cold_start', 'sampling_rate'])
        expect(line, key).not.toHaveProperty(key);
    } finally {
      logger.setLogLevel(level);
    }
    expect(traceQuery('trf-9')).toContain('notificationId like "trf-9#"');
  });
});
