/** `npm start`'s command line, and the records it runs: the built-in sample or a file, as batches. */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXIT, intOption, parseCommandLine, UsageError } from './cli.ts';
import type { DynamoDbStorage } from './dynamodb-local.ts';
import { type EventSource, openEventSource } from './event-source.ts';
import { sampleScenario } from './sample.ts';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

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
  --keep               keep everything up after the run (outbox page, support console, email viewer, DynamoDB Local,
                       the pipeline itself: npm run ops -- --endpoint … works against it) until Ctrl-C
  --outbox-port P      the outbox page's port (default: a free one)
  --console-port P     the support console's port (default: a free one); sign in as a local user
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

export function parseOptions(argv: string[]) {
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
        'console-port': { type: 'string' },
        'dynamodb-storage': { type: 'string', default: 'auto' },
      },
    },
    argv,
  );
  const port = (name: 'dynamodb-port' | 'ses-port' | 'sns-port' | 'viewer-port' | 'outbox-port' | 'console-port') =>
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
      'console-port': port('console-port'),
    },
  };
}

export type RunOptions = ReturnType<typeof parseOptions>;

export function requireJava(): void {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) {
    throw new UsageError(
      'Java 17+ is required: DynamoDB Local runs on it. Install a JRE (e.g. apt-get install openjdk-17-jre-headless).',
    );
  }
}

/** The records to run, as batches: the built-in sample (with its scripted redelivery) or a streamed file. */
export interface Input {
  readonly batches: AsyncIterable<{ offset: number; values: string[]; redeliver: boolean }>;
  /** Records in the input when known in advance (the sample); a file reports progress by bytes. */
  readonly records: number | undefined;
  readonly source: EventSource | undefined;
  readonly maxEventAgeSeconds: number;
  /** Settle sends and feedback after each batch (the sample: always). */
  readonly settle: boolean;
  /** The sample's events happen now: their moment is judged (ENFORCED); a file's dated events are replayed (REPLAY). */
  readonly timing: 'ENFORCED' | 'REPLAY';
}

export async function openInput(file: string | undefined, batchSize: number | undefined): Promise<Input> {
  if (file === undefined) {
    const sample = sampleScenario(Date.now());
    const size = batchSize ?? sample.batchSize;
    return {
      records: sample.values.length,
      source: undefined,
      maxEventAgeSeconds: sample.maxEventAgeSeconds,
      settle: sample.settle,
      timing: sample.timing,
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
    timing: 'REPLAY',
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
