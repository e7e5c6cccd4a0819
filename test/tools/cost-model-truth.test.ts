/**
 * The complete cost counts what the stack is billed for, once each, and the floor what the guarantees need at the
 * least: the sweeper's fixed Queries in ours; the pacer once (the run's unpaced token writes out, the rate's in);
 * spooled reports on their own items; a listing log line once an invocation at the rate; a two-region stage's global
 * table in what the settings add. The floor: byUser at ingest, the flood guard's conditional write, strongly
 * consistent audience reads, the message index only for the channels whose reports need it, and no sweep-index re-key
 * at the claim.
 */
import { describe, expect, it, vi } from 'vitest';
import { EQUATION_FIGURES, FIGURE_METRICS } from '../../functions/contracts/ingest-figures.ts';
import { sweepPartitions } from '../../functions/sweeper/sweep.ts';
import {
  costAtRate,
  DEFAULT_LAYOUTS,
  EXTRA_PRICES,
  emfBytesAt,
  pacerWritesPerSendAt,
  perNotificationAt,
  RATE_ASSUMPTIONS,
  type RunDensity,
  SWEEPER_RUNS_A_MONTH,
} from '../../tools/bench/cost-at-rate.ts';
import { directiveDocumentBytes, type EmfTally, functionOfStack, tallyEmf } from '../../tools/bench/emf-tally.ts';
import { FLOOR, floorAtRate } from '../../tools/bench/floor-at-rate.ts';
import { emfOf, listingBytesOf } from '../../tools/bench/full-cost.ts';
import { US_EAST_1_PRICES as P } from '../../tools/bench/prices.ts';
import { spoolCostAt } from '../../tools/bench/spool-cost.ts';
import { SMALL_RUN } from '../support/run-density.ts';

const MONTH = 1e6 / (30.44 * 86_400);
const WRU = P.dynamodbWriteRequestUnitPerMillion;
const RRU = P.dynamodbReadRequestUnitPerMillion;
const MEASURED = { dynamodbWrites: 5, dynamodbReads: 0.3, lambda: 0.4, dynamodbStorageAndPitr: 1, feedbackQueue: 0.2 };
const runsPerNotification = (rate: number) => 1 / 60 / rate;

describe('our cost: what the run cannot see, and nothing twice', () => {
  it("counts the sweeper's reads a run — 96 Queries at 8 shards and the lease pass's cursor item at a million a month, about $0.26 — whether or not the run invoked it", () => {
    const withSweeper = costAtRate(MEASURED, SMALL_RUN, MONTH, 1, P);
    const { sweeper: _, ...others } = SMALL_RUN.invocations;
    const without = costAtRate(MEASURED, { ...SMALL_RUN, invocations: others }, MONTH, 1, P);
    expect(sweepPartitions(8)).toHaveLength(96);
    expect(withSweeper.perNotification.sweeperQueriesPerRun).toBe(97);
    expect(withSweeper.perMillion.sweeperReads).toBeCloseTo(97 * 0.5 * RRU * runsPerNotification(MONTH), 2);
    expect(withSweeper.perMillion.sweeperReads).toBeCloseTo(0.26, 1);
    expect(without.perMillion.sweeperReads).toBe(withSweeper.perMillion.sweeperReads);
    // Its invocations at a minute's cadence, in the requests and the log lines either way.
    expect(without.perNotification.invocations).toBeGreaterThan(
      costAtRate(MEASURED, { ...SMALL_RUN, invocations: others }, 10_000, 16, P).perNotification.invocations,
    );
    expect(without.perMillion.lambda).toBeCloseTo(withSweeper.perMillion.lambda, 1);
    // At 10,000/s the 768 Queries of 64 shards are spread over 26 billion notifications a month: nothing.
    const peak = costAtRate(MEASURED, SMALL_RUN, 10_000, 16, P);
    expect(peak.perNotification.sweeperQueriesPerRun).toBe(769);
    expect(peak.perMillion.sweeperReads).toBeLessThan(0.01);
  });

  it("prices the pacer once: the run's unpaced token writes leave the measured writes, the rate's come in", () => {
    const pacerWru = 0.8 * SMALL_RUN.notifications;
    const measured = { ...MEASURED, dynamodbWrites: MEASURED.dynamodbWrites + 0.8 * WRU };
    const counted = costAtRate(measured, { ...SMALL_RUN, pacerWru }, MONTH, 1, P, undefined, undefined, 0.64);
    const none = costAtRate(MEASURED, SMALL_RUN, MONTH, 1, P, undefined, undefined, 0.64);
    expect(counted.perMillion.dynamodbWrites).toBeCloseTo(none.perMillion.dynamodbWrites, 2);
    // About one record a dispatch invocation: each send takes its own chunk, one write (not 0.64 + 0.8).
    expect(counted.pacing).toEqual({ writesPerSend: 1, perMillion: Math.round(WRU * 100) / 100 });
    // At 10,000/s full invocations share chunks: the quota's figure, with a backlog, is the more.
    expect(costAtRate(MEASURED, SMALL_RUN, 10_000, 16, P, undefined, undefined, 0.64).pacing.writesPerSend).toBe(0.64);
  });

  it("prices a listing line once an invocation at the rate, not once the run's: a million a month is about an invocation a send", () => {
    const listing = { ingest: 300, dispatch: 200, feedback: 200 };
    const GIB = 1024 ** 3;
    const logsPerByte = (P.logsIngestPerGb + P.logsStorageGbMonth * RATE_ASSUMPTIONS.logRetentionMonths) / GIB;
    for (const [rate, shards] of [
      [MONTH, 1],
      [10_000, 16],
    ] as const) {
      const without = costAtRate(MEASURED, SMALL_RUN, rate, shards, P);
      const withListing = costAtRate(MEASURED, { ...SMALL_RUN, listingBytesPerInvocation: listing }, rate, shards, P);
      const inv = without.perNotification.invocations;
      // The rate's invocations less the run's, each function's line at its own invocations.
      const added = withListing.perMillion.cloudWatchLogs - without.perMillion.cloudWatchLogs;
      const runInvocations = (f: keyof typeof listing) => (SMALL_RUN.invocations[f] ?? 0) / SMALL_RUN.notifications;
      const atMost = 1e6 * logsPerByte * (inv * 300 - 200 * (runInvocations('dispatch') + runInvocations('feedback')));
      if (rate === MONTH) {
        // About two and a half invocations a notification (ingest per event, dispatch and feedback per record).
        expect(inv).toBeGreaterThan(1.5);
        expect(added).toBeGreaterThan(1e6 * logsPerByte * 200 * (inv - 1));
        expect(added).toBeLessThan(atMost + 0.01);
      } else {
        // Full batches: the lines are a few bytes a notification, the run's own less than a burst's.
        expect(Math.abs(added)).toBeLessThan(0.02);
      }
    }
  });

  it("measures a listing line's own bytes from the run's log: the line less its entries, a further part not at all", () => {
    const sent = ['e-1#SMS 1 m-1', 'e-2#SMS 1 m-2'];
    const head = { level: 'INFO', message: 'notifications sent', function_name: 'notifier-dispatch' };
    const line = JSON.stringify({ ...head, sent });
    const lines = [
      line,
      JSON.stringify({ ...head, part: 2, sent }),
      JSON.stringify({ level: 'WARN', message: 'send deferred', function_name: 'notifier-dispatch' }),
      // A report with more to say is a line of its own, per record: not the feedback's listing line.
      JSON.stringify({ level: 'WARN', message: 'delivery feedback', function_name: 'notifier-feedback', status: 'x' }),
      JSON.stringify({ level: 'INFO', message: 'delivery feedback', function_name: 'notifier-feedback', status: 'y' }),
      '{"_aws":{}}',
    ];
    expect(listingBytesOf(lines)).toEqual({
      dispatch: Buffer.byteLength(line) + 1 - Buffer.byteLength(JSON.stringify(sent)),
    });
  });

  it('a send in an invocation of its own is a write; full batches share chunks of ten per channel', () => {
    expect(pacerWritesPerSendAt(0, 1)).toBe(1);
    expect(pacerWritesPerSendAt(0, 100)).toBeCloseTo((3 + 10) / 100, 5);
    expect(pacerWritesPerSendAt(0.64, 100)).toBe(0.64);
  });

  it('prices spooled reports on their own measured items, not as sends', () => {
    const writers = [
      { recordsPerInvocation: 1, recordsPerNotification: 1 },
      { recordsPerInvocation: 1, recordsPerNotification: 1, item: { bytes: 320, wru: 1 } },
    ];
    const send = { bytes: 1_780, wru: 2.15 };
    const split = spoolCostAt({ ratePerSec: MONTH, writers, gzippedRecordBytes: 1_500, item: send });
    const asSends = spoolCostAt({
      ratePerSec: MONTH,
      writers: writers.map(({ recordsPerInvocation, recordsPerNotification }) => ({
        recordsPerInvocation,
        recordsPerNotification,
      })),
      gzippedRecordBytes: 1_500,
      item: send,
    });
    expect(split.wru - asSends.wru).toBeCloseTo(1 - 2.15, 5);
    expect(split.itemBytes).toBeCloseTo((1_780 + 320) / 2, 5);
    expect(split.storageGbMonths).toBeLessThan(asSends.storageGbMonths);
    expect(split.rru).toBeLessThan(asSends.rru);
    // Through the rate model: the run's report item lowers the spool's units at a million a month.
    const reportItem = { bytes: 320, wru: 1 };
    const run = { ...SMALL_RUN, evidence: { ...SMALL_RUN.evidence, spoolItem: send } };
    const withReports = costAtRate(MEASURED, { ...run, evidence: { ...run.evidence, reportItem } }, MONTH, 1, P);
    expect(withReports.perNotification.spoolWru).toBeLessThan(
      costAtRate(MEASURED, run, MONTH, 1, P).perNotification.spoolWru,
    );
  });

  it("adds a two-region stage's global table to what the settings add: replicated writes, index writes, storage", () => {
    const c = costAtRate(MEASURED, SMALL_RUN, MONTH, 1, P);
    expect(RATE_ASSUMPTIONS.regions.two).toBe(true);
    const floorOfIt = c.perMillion.dynamodbWrites + c.perMillion.dynamodbIndexWrites + MEASURED.dynamodbStorageAndPitr;
    expect(c.withSettings.globalTable).toBeGreaterThan(floorOfIt - c.perNotification.spoolWru * WRU - 0.01);
  });

  it("prices a second region's stack: its alarms, keys and dashboard every month, and its fenced sweeper's runs", () => {
    const c = costAtRate(MEASURED, SMALL_RUN, MONTH, 1, P);
    const { alarms, kmsKeys, dashboards } = RATE_ASSUMPTIONS.regions.fixed;
    const X = EXTRA_PRICES;
    expect(c.fixedMonthly.secondRegion).toBeCloseTo(
      alarms * X.alarmMonth + kmsKeys * X.kmsKeyMonth + dashboards * X.dashboardMonth,
    );
    expect(c.fixedMonthly.totalPerMonth).toBeCloseTo(
      c.fixedMonthly.alarms +
        c.fixedMonthly.kmsKeys +
        c.fixedMonthly.dashboards +
        c.fixedMonthly.warmUrgentLane +
        c.fixedMonthly.secondRegion,
    );
    // Fenced, the recovery region's sweeper reads no sweep index: a run is the keeper's few units and its request, a
    // minute — about 2.5 cents a month at list prices, whatever the rate, spread over the rate's notifications.
    const runs = SWEEPER_RUNS_A_MONTH;
    const f = RATE_ASSUMPTIONS.regions.fencedRun;
    const perRun =
      f.readUnits * (P.dynamodbReadRequestUnitPerMillion / 1e6) +
      (f.writeUnits + f.replicatedWriteUnits) * (WRU / 1e6) +
      P.lambdaRequestPerMillion / 1e6;
    const notifications = MONTH * RATE_ASSUMPTIONS.secondsPerMonth;
    expect(c.withSettings.secondRegionKeeper).toBeCloseTo((runs * perRun * 1e6) / notifications, 2);
    expect(c.withSettings.secondRegionKeeper).toBeLessThan(c.perMillion.sweeperReads);
  });
});

describe('the floor: what the guarantees need at the least', () => {
  const run: RunDensity = { ...SMALL_RUN, emails: 270, criticalNotifications: 60 };
  const at = (r: RunDensity) => floorAtRate(MEASURED, r, MONTH, 1, P);
  const round2 = (n: number) => Math.round(n * 100) / 100;

  it('index writes: the sweep put and delete keyed once (no re-key at the claim), the message index for SNS only, byUser per event', () => {
    const events = run.events / run.notifications;
    const sns = 1 - run.emails / run.notifications;
    expect(at(run).dynamodbIndexWrites).toBeCloseTo(round2(WRU * (2 + sns + events)), 2);
    // Every notification an email: no message-index write at all (its report finds it by the SES tag).
    const allEmail = { ...run, emails: run.notifications };
    expect(at(allEmail).dynamodbIndexWrites).toBeCloseTo(round2(WRU * (2 + events)), 2);
  });

  it("writes: the flood guard's conditional write for every non-critical send", () => {
    const none = { ...run, criticalNotifications: run.notifications };
    expect(at(run).dynamodbWrites - at(none).dynamodbWrites).toBeCloseTo(
      WRU * (1 - run.criticalNotifications / run.notifications),
      1,
    );
  });

  it("reads: the audience check's two strongly consistent reads, and half a unit per report", () => {
    const reports = (run.sesEvents + run.snsDeliveryLogs) / run.notifications;
    expect(at(run).dynamodbReads).toBeCloseTo(round2(RRU * (2 + reports / 2)), 2);
  });

  it("the sweeper's reads: a Query a run and the in-flight leases, far below our 96 Queries a run", () => {
    const f = at(run);
    expect(f.sweeperReads).toBeCloseTo(
      RRU * (FLOOR.sweepQueriesPerRun * 0.5 * runsPerNotification(MONTH) + FLOOR.sweepLeaseReadUnitsPerNotification),
      2,
    );
    expect(f.sweeperReads).toBeLessThan(costAtRate(MEASURED, run, MONTH, 1, P).perMillion.sweeperReads);
  });

  it("its minute buffer is the table's stream read by a roller once a minute: the roller's requests are counted", () => {
    expect(FLOOR.evidenceBufferSeconds).toBe(60);
    // At a slow stage (0.05/s) a run a minute is a third of an invocation a notification: visible in the requests.
    const slow = 0.05;
    const ours = costAtRate(MEASURED, run, slow, 1, P);
    const roller = 1e6 * runsPerNotification(slow) * FLOOR.rollerRunsPerMinute * (P.lambdaRequestPerMillion / 1e6);
    expect(floorAtRate(MEASURED, run, slow, 1, P).lambda).toBeCloseTo(ours.perMillion.lambda + roller, 1);
    expect(floorAtRate(MEASURED, run, slow, 1, P).lambda).toBeGreaterThan(ours.perMillion.lambda);
  });
});

describe('metric (EMF) documents at the rate', () => {
  type Powertools = typeof import('../../functions/commons/powertools.ts');
  /** The EMF lines an invocation writes with the product's own powertools (metrics on, a stage's namespace). */
  async function emfLines(invocations: ((p: Powertools) => void)[]): Promise<string[][]> {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'notifier/prod');
    // At INFO, as deployed: the listing is an INFO part of the closing document (vitest.config.ts runs SILENT).
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
    vi.resetModules();
    const p = (await import('../../functions/commons/powertools.ts')) as Powertools;
    const out: string[][] = [];
    const write = process.stdout.write;
    try {
      for (const invocation of invocations) {
        const lines: string[] = [];
        process.stdout.write = ((c: string | Uint8Array) => lines.push(String(c)) > 0) as typeof process.stdout.write;
        try {
          invocation(p);
          p.publishMetrics();
        } finally {
          process.stdout.write = write;
        }
        out.push(lines.flatMap((l) => l.split('\n')).filter((l) => l.startsWith('{"_aws"')));
      }
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
    return out;
  }
  const bytesOf = (lines: string[]) => lines.reduce((a, l) => a + Buffer.byteLength(l) + 1, 0);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  // The reconciliation's seven figures, as ingest's report counts every batch's.
  const EQUATION = EQUATION_FIGURES.map((f) => FIGURE_METRICS[f]);
  const CHANNEL_SETS = [['EMAIL'], ['EMAIL', 'PUSH'], ['EMAIL', 'PUSH', 'SMS']] as const;
  /** An ingest invocation of these events (each its channels), a dispatch one of these sends, a feedback one. */
  // And each lists its records, as the handlers do (an SES message id is the longest a provider gives).
  const MESSAGE_ID = '0100018c2d3e4f5a-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901-000000';
  const ingest = (events: readonly (readonly string[])[]) => (p: Powertools) => {
    for (const m of EQUATION) p.count(m, events.length);
    for (const e of events) for (const c of e) p.countBy('NotificationsCreated', { channel: c });
    p.infoListing(
      'batch ingested',
      events.map((e, i) => `trf-2026-${i} ${e.join(',')}`),
      { reconciled: true },
    );
  };
  const dispatch = (channels: readonly string[], spooled: boolean) => (p: Powertools) => {
    for (const c of channels) p.countBy('NotificationsSent', { channel: c });
    if (spooled) p.count('EvidenceSpooled', channels.length);
    p.infoListing(
      'notifications sent',
      channels.map((c, i) => `trf-2026-${i}#${c} 1 ${MESSAGE_ID}`),
    );
  };
  const feedback = (channels: readonly string[]) => (p: Powertools) => {
    for (const c of channels) p.countBy('DeliveryFeedback', { channel: c, status: 'DELIVERED' });
    p.infoListing(
      'deliveries recorded',
      channels.map((c, i) => `trf-2026-${i}#${c} DELIVERED ${MESSAGE_ID}`),
    );
  };

  it('a document names no function: the probe attributes it by the stack of the code that wrote it', () => {
    expect(
      functionOfStack(
        'Error\n    at Metrics.publish (/r/node_modules/x.js:1:1)\n    at async handler (file:///r/functions/dispatch/index.ts:180:5)',
      ),
    ).toBe('dispatch');
    expect(
      functionOfStack(
        'at countNow (/r/functions/commons/powertools.ts:1:1)\n at x (/r/functions/ingest/regional-store.ts:27:7)',
      ),
    ).toBe('ingest');
    expect(functionOfStack('at main (/r/tools/local/run.ts:1:1)')).toBeUndefined();
  });

  it('at a million a month prices what one-record invocations write (ingest 2 channels, a spooling send, a report), from the documents a run of full batches wrote', async () => {
    // The run: 60 events of 1, 2 and 3 channels in one ingest invocation, 120 sends in 4, 120 reports in 3 (SES, logs).
    const events = Array.from({ length: 60 }, (_, i) => CHANNEL_SETS[i % 3] ?? []);
    const sends = events.flat();
    const [ingestRun, ...rest] = await emfLines([
      ingest(events),
      ...[0, 1, 2, 3].map((i) => dispatch(sends.slice(i * 30, i * 30 + 30), false)),
      feedback(sends.filter((c) => c === 'EMAIL')),
      feedback(sends.filter((c) => c !== 'EMAIL').slice(0, 33)),
      feedback(sends.filter((c) => c !== 'EMAIL').slice(33)),
    ]);
    const tallies: Record<string, EmfTally> = {};
    for (const l of ingestRun ?? []) tallyEmf(tallies, 'ingest', l);
    for (const l of rest.slice(0, 4).flat()) tallyEmf(tallies, 'dispatch', l);
    for (const l of rest.slice(4).flat()) tallyEmf(tallies, 'feedback', l);
    const figures = { notifications: 120, events: 60, sesEvents: 60, snsDeliveryLogs: 60 };
    const emf = emfOf({
      ...figures,
      invocations: { ingest: 1, dispatch: 4, feedback: 3 },
      probe: { emf: tallies, emfSample: ingestRun?.[0] },
    });
    const runBytes = bytesOf([...(ingestRun ?? []), ...rest.flat()]);
    const run: RunDensity = {
      ...SMALL_RUN,
      ...figures,
      emails: 60,
      invocations: { ingest: 1, dispatch: 4, feedback: 3 },
      emfLineBytes: mean([...(ingestRun ?? []), ...rest.flat()].flatMap(directiveDocumentBytes)),
      emfBytesPerNotification: runBytes / 120,
      ...(emf === undefined ? {} : { emf }),
    };
    // What one-record invocations write, as the product writes it.
    const [one, sent, report] = await emfLines([
      ingest([['EMAIL', 'SMS']]),
      dispatch(['EMAIL'], true),
      feedback(['SMS']),
    ]);
    const alone = { ingest: bytesOf(one ?? []), dispatch: bytesOf(sent ?? []), feedback: bytesOf(report ?? []) };
    expect(alone.ingest).toBeGreaterThan(1_000);
    expect(alone.dispatch).toBeGreaterThan(400);
    expect(alone.feedback).toBeGreaterThan(250);
    const m = perNotificationAt(MONTH, run, DEFAULT_LAYOUTS, 1);
    expect(m.spooledDispatch).toBeGreaterThan(0.9);
    // Every dispatch invocation spools at this rate. The sweeper, which the run did not invoke, apart.
    const real =
      (m.byFunction.ingest ?? 0) * alone.ingest +
      (m.byFunction.dispatch ?? 0) * alone.dispatch +
      (m.byFunction.feedback ?? 0) * alone.feedback;
    const logsPerByte = (P.logsIngestPerGb + P.logsStorageGbMonth * RATE_ASSUMPTIONS.logRetentionMonths) / 1024 ** 3;
    const logs = (r: RunDensity) => costAtRate({}, r, MONTH, 1, P).perMillion.cloudWatchLogs;
    const noEmf: RunDensity = {
      ...run,
      emfLineBytes: 0,
      emfBytesPerNotification: 0,
      emf: { byFunction: {}, spoolDocBytes: 0 },
    };
    const priced = run.emfBytesPerNotification + (logs(run) - logs(noEmf)) / (1e6 * logsPerByte);
    const sweeper = (m.byFunction.sweeper ?? 0) * run.emfLineBytes;
    expect(priced - sweeper).toBeGreaterThanOrEqual(real * 0.97);
    expect(priced - sweeper).toBeLessThanOrEqual(real * 1.1);
    // The model's own figure, and what its logs cost says (rounded to the cent: about 12 B).
    expect(Math.abs(costAtRate({}, run, MONTH, 1, P).perNotification.emfBytes - priced)).toBeLessThan(15);
    // At 10,000/s invocations are full: a few documents an invocation of a hundred records, not one a record; the
    // listing's entries, one a record whatever the batching, are in the documents.
    const peak = costAtRate({}, run, 10_000, 16, P).perNotification.emfBytes;
    const entries = Object.values(emf?.byFunction ?? {}).reduce((a, e) => a + (e.entryBytesPerNotification ?? 0), 0);
    expect(entries).toBeGreaterThan(100);
    expect(peak).toBeLessThan(run.emfBytesPerNotification * 2);
    expect(peak - entries).toBeLessThan((priced - entries) / 10);
  });

  it('the floor’s metric line weighs a directive as Powertools writes one alone, without a listing: what notifier puts in one line moves no floor', async () => {
    const [lines, single] = await emfLines([dispatch(['EMAIL'], true), (p) => p.countNow('EvidenceSpooled', 1)]);
    const [merged] = lines ?? [];
    const [alone] = single ?? [];
    const sizes = directiveDocumentBytes(merged ?? '');
    expect(sizes).toHaveLength(2);
    expect(sizes[0]).toBe(Buffer.byteLength(alone ?? '') + 1);
  });

  it('prices a document written outside every function the rate invokes as the run wrote it, never drops it', () => {
    const fn = { plainPerInvocation: 300, setBytes: 250, setsPerInvocation: 1, setsPerRecord: 1 };
    const run = (extra: boolean) =>
      ({
        notifications: 100,
        emfLineBytes: 265,
        invocations: { dispatch: 10 },
        emf: {
          spoolDocBytes: 0,
          byFunction: {
            dispatch: fn,
            ...(extra ? { 'outside functions/': { ...fn, plainPerInvocation: 5_000 } } : {}),
          },
        },
      }) as unknown as RunDensity;
    const at = { byFunction: { dispatch: 1 }, spooledDispatch: 0 };
    // 5,000 + 250 bytes the run wrote once, over its 100 notifications.
    expect((emfBytesAt(run(true), at) ?? 0) - (emfBytesAt(run(false), at) ?? 0)).toBeCloseTo(52.5, 5);
  });
});
