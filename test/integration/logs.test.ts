/**
 * No personal data in any log line, even at DEBUG: ingest, dispatch and the sweeper run for real (DynamoDB Local, the
 * local SES/SNS endpoints through the handlers' own clients) with POWERTOOLS_LOG_LEVEL=DEBUG, through the paths that
 * log the most — accepted, duplicate, conflicting and malformed events, provider refusals, throttling, an account
 * pause, an accept whose reply was lost — and every line written to stdout or stderr is searched for the recipient's
 * address, phone number and push endpoint, the counterparty's name and the amount.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { logger } from '../../functions/commons/powertools.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { converge, type Handlers, KafkaMapping, loadHandlers, StreamMapping } from '../../tools/local/pipeline.ts';
import {
  type Fault,
  type ProviderEndpoint,
  type SesEndpoint,
  startSesEndpoint,
  startSnsEndpoint,
} from '../../tools/local/providers.ts';
import { StreamReader } from '../../tools/local/stream-reader.ts';
import { traceQuery } from '../../tools/ops/trace.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

// Metrics on, as deployed (the tests' environment turns them off): the listing lines ride in the invocations' metric
// documents, and those are searched too. Before the imports, which make the shared Metrics.
vi.hoisted(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

/** The personal data of the run: each must never appear in a log line. */
const PERSON = {
  email: 'zebedee.quill@example.org',
  phone: '+447700900123',
  pushToken: '5d1e6f70-8a9b-4c0d-9e1f-2a3b4c5d6e7f',
  name: 'Zebedee Quillfeather',
  amount: '73519.42',
};
const PUSH_ARN = `arn:aws:sns:eu-west-2:123456789012:endpoint/APNS/bank-app/${PERSON.pushToken}`;
/** Other shapes of the same data a log line could carry. */
const FORBIDDEN = [...Object.values(PERSON), 'zebedee.quill', '7700900123', 'Quillfeather', '73519', '7351942'];

let table: LocalTable;
let ses: SesEndpoint;
let sns: ProviderEndpoint;
let handlers: Handlers;
let reader: StreamReader;
const lines: string[] = [];
const original = { out: process.stdout.write, err: process.stderr.write };

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ses = await startSesEndpoint();
  sns = await startSnsEndpoint();
  const capture =
    (stream: NodeJS.WriteStream) =>
    (chunk: string | Uint8Array): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      for (const line of text.split('\n')) if (line.trim()) lines.push(line);
      void stream;
      return true;
    };
  process.stdout.write = capture(process.stdout) as typeof process.stdout.write;
  process.stderr.write = capture(process.stderr) as typeof process.stderr.write;
  handlers = await loadHandlers({
    dynamoEndpoint: table.endpoint,
    sesEndpoint: ses.url,
    snsEndpoint: sns.url,
    tableName: table.tableName,
    extra: {
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      PENDING_THRESHOLD_SECONDS: '1',
      BREAKER_HOLD_SECONDS: '1',
      CHANNEL_POLICIES: 'EMAIL=AT_MOST_ONCE,PUSH=AT_MOST_ONCE,SMS=AT_LEAST_ONCE',
    },
  });
  // The shared logger may have been made before POWERTOOLS_LOG_LEVEL was set (a module this file imports loads it):
  // the level this test is about is set on it directly.
  logger.setLogLevel('DEBUG');
  reader = new StreamReader(table.endpoint, table.tableName);
});
afterAll(async () => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.stdout.write = original.out;
  process.stderr.write = original.err;
  reader?.close();
  await ses?.stop();
  await sns?.stop();
});

const person = (eventId: string, over: Record<string, unknown> = {}) =>
  transferEvent({
    eventId,
    recipient: { email: PERSON.email, phoneNumber: PERSON.phone, pushEndpointArn: PUSH_ARN, locale: 'en' },
    data: { amount: PERSON.amount, currency: 'USD', counterpartyName: PERSON.name },
    ...over,
  });

describe('logs at DEBUG carry no personal data', () => {
  it('through ingest, dispatch and the sweeper on every path that logs', async () => {
    // Each address meets a different provider behaviour, once each, then is accepted.
    const faults: Record<string, Fault[]> = {};
    const script = (to: string, ...f: Fault[]) => {
      faults[to] = f;
    };
    const next = (_c: string, to: string): Fault => faults[to]?.shift() ?? 'ok';
    ses.fault = next;
    sns.fault = next;
    script(PERSON.email, 'throttle', 'accountPaused', 'acceptThen500');
    script(PERSON.phone, 'acceptThenReset', 'throttle');
    script(PUSH_ARN, 'reject');

    const kafka = new KafkaMapping(handlers.ingest);
    let offset = 0;
    const deliver = (values: (object | string)[]) =>
      kafka.deliver(
        mskEvent(values.map((value) => ({ topic: 'banking.transfers', partition: 0, offset: offset++, value }))),
      );
    await deliver([
      person('pii-1'),
      person('pii-1'), // a duplicate
      person('pii-1', { data: { amount: '1.00', currency: 'USD', counterpartyName: PERSON.name } }), // a conflict
      person('pii-2', { recipient: { email: `not an address ${PERSON.email}@`, locale: 'en' } }), // invalid email
      person('pii-3', { recipient: { phoneNumber: `tel:${PERSON.phone}x`, locale: 'en' } }), // invalid phone
      person('pii-4', { data: { amount: `${PERSON.amount}.5`, currency: 'USD', counterpartyName: PERSON.name } }),
      `{"eventId":"pii-5","recipient":{"email":"${PERSON.email}","phoneNumber":"${PERSON.phone}"`, // truncated JSON
    ]);
    const stream = new StreamMapping(reader, handlers.dispatch);
    await converge(stream, handlers, { dynamoEndpoint: table.endpoint, tableName: table.tableName });

    // The run went where it should: every logging path was taken, at DEBUG.
    const messages = lines.map((l) => /"message":"([^"]*)"/.exec(l)?.[1] ?? '');
    for (const m of [
      'batch ingested',
      'duplicate event acknowledged',
      'eventId reused with a different payload; quarantined',
      'record quarantined',
      'notifications sent',
      'notification failed',
      'send deferred',
      'provider refused the account, not the message: channel held, notification deferred',
      'send outcome unknown',
    ]) {
      expect(messages, m).toContain(m);
    }
    expect(ses.sends.length + sns.sends.length).toBeGreaterThan(2);
    // What an invocation did as it should is listed in its metric document, not in a line of its own.
    const listings = lines.filter((l) => /"message":"(batch ingested|notifications sent)"/.test(l));
    expect(listings.length).toBeGreaterThan(1);
    expect(listings.filter((l) => !l.startsWith('{"_aws"') && !l.includes('"part":'))).toEqual([]);

    // Plain, and base64 (a record value or an item logged as received is still the customer's data).
    const decoded = (l: string) =>
      (l.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? []).map((t) => Buffer.from(t, 'base64').toString('utf8')).join(' ');
    const leaks = lines.filter((l) => FORBIDDEN.some((f) => l.includes(f) || decoded(l).includes(f)));
    expect(leaks).toEqual([]);
    const email = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z.]{2,}/;
    const phone = /\+\d{8,15}/;
    expect(lines.filter((l) => email.test(l) || phone.test(l))).toEqual([]);
  });

  it('each sent notification’s trail is still in the lines: the runbook’s trace finds its event accepted and its send by the ids alone', () => {
    const sent = [...ses.sends, ...sns.sends];
    const trailOf = (eventId: string) => {
      const id = new RegExp(/@message like \/(.*)\/$/m.exec(traceQuery(eventId))?.[1] ?? '^$');
      return lines.filter((l) => id.test(l)).map((l) => JSON.parse(l) as Record<string, unknown>);
    };
    const trail = trailOf('pii-1');
    const accepted = trail.flatMap((l) => (l.message === 'batch ingested' ? ((l.events as string[]) ?? []) : []));
    expect(accepted.filter((e) => e.startsWith('pii-1 '))).toHaveLength(1);
    const listed = trail.flatMap((l) => (l.message === 'notifications sent' ? (l.sent as string[]) : []));
    expect(listed.filter((e) => e.startsWith('pii-1#')).length).toBeGreaterThan(0);
    for (const entry of listed)
      expect(
        sent.map((x) => x.messageId),
        entry,
      ).toContain(entry.split(' ')[2]);
  });
});
