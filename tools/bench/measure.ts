/**
 * What a measurement counts: a middleware on the DynamoDB client counts the requests and the units DynamoDB bills for
 * each (tools/bench/billing.ts); a measure is events per second and those counts per event, a summary the median of
 * the rounds.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MSKEvent } from 'aws-lambda';
import { noUnits, requestUnits, type Units } from './billing.ts';
import { median, round2, SIZES } from './workload.ts';

export interface Usage extends Units {
  requests: number;
}
export function instrument(client: DynamoDBClient): Usage {
  const usage: Usage = { requests: 0, ...noUnits() };
  client.middlewareStack.add(
    (next, context) => async (a) => {
      usage.requests++;
      const input = a.input as Record<string, unknown>;
      let output: Record<string, unknown> | undefined;
      let error: string | undefined;
      try {
        const out = await next(a);
        output = out.output as unknown as Record<string, unknown>;
        return out;
      } catch (e) {
        error = (e as Error).name;
        throw e;
      } finally {
        const u = requestUnits(String(context.commandName), input, output, error, { inboxBytes: SIZES.inboxBytes });
        usage.rru += u.rru;
        usage.wru += u.wru;
        usage.indexWru += u.indexWru;
      }
    },
    { step: 'initialize', name: 'benchUsage' },
  );
  return usage;
}

export interface Measure {
  eventsPerSec: number;
  requestsPerEvent: number;
  /** Billed write request units per record, sweep index included. */
  wruPerEvent: number;
  /** Billed read request units per record. */
  rruPerEvent: number;
}

export async function measure(usage: Usage, batches: MSKEvent[], work: () => Promise<unknown>): Promise<Measure> {
  const events = batches.reduce((n, b) => n + Object.values(b.records).flat().length, 0);
  const before = { ...usage };
  const t = performance.now();
  await work();
  const seconds = (performance.now() - t) / 1000;
  return {
    eventsPerSec: events / seconds,
    requestsPerEvent: (usage.requests - before.requests) / events,
    wruPerEvent: (usage.wru - before.wru) / events,
    rruPerEvent: (usage.rru - before.rru) / events,
  };
}
export function summarize(ms: Measure[]): Measure {
  return {
    eventsPerSec: Math.round(median(ms.map((m) => m.eventsPerSec))),
    requestsPerEvent: round2(median(ms.map((m) => m.requestsPerEvent))),
    wruPerEvent: round2(median(ms.map((m) => m.wruPerEvent))),
    rruPerEvent: round2(median(ms.map((m) => m.rruPerEvent))),
  };
}
