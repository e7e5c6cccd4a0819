/**
 * `ops trace`: every log line about one event across the functions — the Logs Insights query over their log
 * groups, run and printed; locally, the lines of that run's log file (.local/runs/<run>/run.log) that name it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { type CloudWatchLogsClient, GetQueryResultsCommand, StartQueryCommand } from '@aws-sdk/client-cloudwatch-logs';
import { LOG_LISTINGS, type LogListing } from '../../functions/contracts/telemetry.ts';

/**
 * A JSON string in a line that is the event's id, or begins with it and a notification's `#` or a listed entry's space
 * (an eventId is letters, digits and `._:-`, never a quote, `#` or space): the lines that list what an invocation did
 * to many records (ingest's "batch ingested", dispatch's "notifications sent", feedback's "deliveries recorded",
 * carried by the invocation's metric document) name the event only inside their list.
 */
const idInLine = (eventId: string) => `"${eventId.replace(/[.]/g, '\\.')}[#" ]`;

/** The Logs Insights query that follows one event through the three functions. */
export const traceQuery = (eventId: string) =>
  [
    'fields @timestamp, @log, level, message, notificationId, channel, attempt, status, reason, code, @message',
    `| filter eventId = ${JSON.stringify(eventId)} or notificationId like ${JSON.stringify(`${eventId}#`)}`,
    `    or @message like /${idInLine(eventId)}/`,
    '| sort @timestamp asc',
    '| limit 1000',
  ].join('\n');

/** A listing line's entries about the event (ops trace prints them instead of the whole line). */
function entriesAbout(eventId: string, message: string | undefined): string[] {
  if (message === undefined) return [];
  try {
    const line = JSON.parse(message) as Record<string, unknown>;
    const key = LOG_LISTINGS[line.message as LogListing];
    const entries = key === undefined ? undefined : line[key];
    if (!Array.isArray(entries)) return [];
    return entries.filter(
      (e): e is string => typeof e === 'string' && new RegExp(`^${idInLine(eventId).slice(1)}`).test(`${e} `),
    );
  } catch {
    return [];
  }
}

export async function traceEvent(
  deps: { logs: CloudWatchLogsClient; logGroups: string[]; sleep: (ms: number) => Promise<void>; now: () => number },
  eventId: string,
  sinceMs: number,
  timeoutMs = 60_000,
): Promise<Record<string, string>[]> {
  const now = deps.now();
  const started = await deps.logs.send(
    new StartQueryCommand({
      logGroupNames: deps.logGroups,
      startTime: Math.floor((now - sinceMs) / 1000),
      endTime: Math.ceil(now / 1000),
      queryString: traceQuery(eventId),
    }),
  );
  if (started.queryId === undefined) throw new Error('StartQuery returned no queryId');
  const deadline = now + timeoutMs;
  for (;;) {
    const r = await deps.logs.send(new GetQueryResultsCommand({ queryId: started.queryId }));
    if (r.status === 'Complete') {
      return (r.results ?? []).map((row) =>
        withoutDocumentFields(
          Object.fromEntries(row.filter((f) => f.field !== '@ptr').map((f) => [f.field ?? '', f.value ?? ''])),
        ),
      );
    }
    if (r.status === 'Failed' || r.status === 'Cancelled' || r.status === 'Timeout') {
      throw new Error(`the Logs Insights query ended ${r.status}`);
    }
    if (deps.now() > deadline) throw new Error('the Logs Insights query did not complete in time');
    await deps.sleep(1000);
  }
}

/** Fields a metric document's row holds as its first dimension set's, not as the listed event's: left out. */
const DOCUMENT_FIELDS = ['channel', 'status', 'notificationId', 'attempt', 'reason', 'code'];
const isDocument = (r: Readonly<Record<string, string>>) => (r['@message'] ?? '').startsWith('{"_aws"');
function withoutDocumentFields(r: Record<string, string>): Record<string, string> {
  if (!isDocument(r)) return r;
  return Object.fromEntries(Object.entries(r).filter(([k]) => !DOCUMENT_FIELDS.includes(k)));
}

/**
 * A row's own fields: none for a listing carried by an invocation's metric document (it begins `{"_aws"`), whose
 * `channel` and `status` are its first dimension set's, not the event's: its entries say the event's.
 */
const fieldsOf = (r: Readonly<Record<string, string>>) =>
  isDocument(r)
    ? []
    : Object.entries(r)
        .filter(([k]) => !['@timestamp', '@log', 'level', 'message', '@message'].includes(k))
        .map(([k, v]) => `${k}=${v}`);

export const traceText = (rows: readonly Record<string, string>[], eventId = '') =>
  rows
    .map(
      (r) =>
        `${r['@timestamp']}  ${(r['@log'] ?? '').split(':').pop()}  ${r.level ?? ''} ${r.message ?? ''}  ${fieldsOf(r)
          .concat(entriesAbout(eventId, r['@message']))
          .join(' ')}`,
    )
    .join('\n');

/** Locally: the lines of the run's log file that name the event. */
export function localTrace(eventId: string, logPath: string | undefined): string[] {
  if (logPath === undefined || !existsSync(logPath)) return [];
  return readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((l) => [`"${eventId}"`, `"${eventId}#`, `"${eventId} `].some((id) => l.includes(id)));
}
