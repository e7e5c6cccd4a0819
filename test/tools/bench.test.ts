/** Smoke test of `npm run bench` on tiny sizes: it runs end to end and reports every figure. The full run stays out. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('npm run bench (smoke)', () => {
  it('reports ingest, latency, CPU, dispatch, bundle and complete cost figures as one JSON document', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'tools/bench/run.ts', '--events', '40', '--rounds', '1', '--json'],
      {
        timeout: 420_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const report = JSON.parse(stdout);
    expect(report.ingest.notifier.eventsPerSec).toBeGreaterThan(0);
    // One TransactWriteItems per new event plus one look-up per batch (at most 1.05 requests per new event); the
    // baseline needs at least the idempotency record and one put per channel.
    expect(report.ingest.notifier.requestsPerEvent).toBeLessThanOrEqual(1.05);
    expect(report.ingest.powertools.requestsPerEvent).toBeGreaterThan(2);
    expect(report.ingest.withDuplicates.map((d: { duplicateShare: number }) => d.duplicateShare)).toEqual([
      0.1, 0.5, 1,
    ]);
    // A batch redelivered whole: one look-up, no write (at most 0.05 requests per duplicate).
    const redelivered = report.ingest.withDuplicates.find((d: { duplicateShare: number }) => d.duplicateShare === 1);
    expect(redelivered.notifier.requestsPerEvent).toBeLessThanOrEqual(0.05);
    expect(redelivered.notifier.wruPerEvent).toBe(0);
    expect(report.latency.map((l: { concurrency: number }) => l.concurrency)).toEqual([1, 4, 16, 64]);
    expect(report.latencyWithDuplicates).toHaveLength(12);
    for (const l of report.latencyWithDuplicates) {
      expect(l).toMatchObject({ duplicateShare: expect.any(Number), concurrency: expect.any(Number) });
      expect(l.eventsPerSec).toBeGreaterThan(0);
    }
    expect(report.costPerMillionNotifications.byDuplicateShare).toHaveLength(3);
    expect(report.costPerMillionNotifications.prices.region).toBe('us-east-1');
    // The capacity model at 10,000 notifications per second, no hot key.
    expect(report.capacity).toMatchObject({ notificationsPerSec: 10_000, sweepShards: 64 });
    expect(report.capacity.hottestKeyWritesPerSec).toBeLessThan(1_000);
    expect(report.capacity.lambdaConcurrency.ingest).toBeGreaterThan(0);
    expect(report.cpuMicrosPerEvent).toBeGreaterThan(0);
    expect(report.dispatch.sends).toBe(500);
    expect(report.bundles.map((b: { name: string }) => b.name)).toEqual(['ingest', 'dispatch', 'sweeper', 'feedback']);
    for (const b of report.bundles) {
      // Split into chunks: what only some records need (the codecs and registry clients, one notice type's
      // templates, the phone number rules, the X-Ray SDK) is not loaded at init (docs/measurements.md, "Bundles").
      expect(b.initBytes).toBeLessThan(b.totalBytes);
      expect(b.initBytes).toBeLessThan(900_000);
      expect(b.floorBytes).toBeGreaterThan(0);
      // Timed on the Lambda runtime's Node (package.json's engines), whatever Node ran the bench.
      expect(Number(/^v(\d+)\./.exec(b.node)?.[1])).toBeGreaterThanOrEqual(24);
      expect(b.floorInitMs).toBeGreaterThan(0);
      // The CPU of each init beside its wall time, and both again with Node's compile cache warm.
      expect(b.initCpuMs).toBeGreaterThan(0);
      expect(b.floorInitCpuMs).toBeGreaterThan(0);
      expect(b.initMsCompileCache).toBeGreaterThan(0);
      expect(b.floorInitMsCompileCache).toBeGreaterThan(0);
    }
    // Dispatch with and without evidence, side by side: both send every notification.
    expect(report.dispatch.slotSendsPerSec.withEvidence).toBeGreaterThan(0);
    expect(report.dispatch.slotSendsPerSec.withoutEvidence).toBeGreaterThan(0);
    expect(report.dispatch.cpuMicrosPerSend.withEvidence).toBeGreaterThan(0);
    // At a low rate's density the evidence path is the spool's, as deployed: every record spooled, none lost.
    expect(report.dispatch.lowRate.spooled).toBe(report.dispatch.lowRate.sends);
    expect(report.dispatch.busyLowRate.spooled).toBe(report.dispatch.busyLowRate.sends);
    expect(report.dispatch.busyLowRate.outcomeSendsPerSec.withEvidence).toBeGreaterThan(0);
    expect(report.dispatch.spooled).toBe(0);
    // The complete cost: every part priced for each channel alone and the mix, as the run ran and at the two rates,
    // beside the floor; evidence in batches, fewer objects than notifications at 10,000/s, at most 0.1 objects a
    // notification at a million a month (the spool).
    const cost = report.completeCost;
    // Spooled reports are priced on the run's own report items (far smaller than a send's), the pacer once: the run's
    // unpaced token writes are measured to be taken out.
    expect(cost.mix.density.evidence.reportItem.bytes).toBeLessThan(cost.mix.density.evidence.spoolItem.bytes);
    expect(cost.mix.density.pacerWru).toBeGreaterThan(0);
    expect(Object.keys(cost.byChannel)).toEqual(['EMAIL', 'PUSH', 'SMS']);
    for (const r of [...Object.values(cost.byChannel), cost.mix] as {
      perMillion: { total: number };
      perNotification: { evidenceObjects: number; wru: number };
      atRates: {
        name: string;
        withPacing: { cost: number; floor: number };
        perNotification: { evidenceObjects: number; sendObjects: number; spoolObjects: number; spoolWru: number };
      }[];
    }[]) {
      expect(r.perNotification.evidenceObjects).toBeLessThan(1);
      expect(r.perNotification.wru).toBeGreaterThan(0);
      expect(r.atRates.map((a) => a.name)).toEqual(['1M a month', '10,000/s']);
      for (const a of r.atRates) expect(a.withPacing.cost).toBeGreaterThan(a.withPacing.floor);
      const [month, peak] = r.atRates;
      // A million a month: an invocation holds about one record, so its records go through the spool, a minute's in
      // one object; at 10,000/s invocations are full and write their own.
      expect(month?.perNotification.sendObjects).toBeLessThan(0.05);
      expect(month?.perNotification.spoolWru).toBeGreaterThan(0);
      expect(month?.perNotification.evidenceObjects).toBeLessThanOrEqual(0.1);
      expect(peak?.perNotification.evidenceObjects).toBeLessThan(0.2);
    }
    // Pacing never takes more than the quota in any window, whatever the load (counted on the windows' items, not by
    // when grants resolved: a loaded machine resolves some late); the sweeper drained its whole backlog.
    for (const p of report.quota.pacing) {
      expect(p.maxTakenInAnyWindow).toBeLessThanOrEqual(p.quotaPerSecond);
      expect(p.maxTakenInAnyWindow).toBeGreaterThan(0);
      expect(p.sends).toBeGreaterThan(0);
    }
    expect(report.quota.sweeper).toMatchObject({ items: 200, handled: 200 });
    // A held backlog leaves at the window's opening at most the quota's share per sweeper run, all of it released,
    // and the critical notices due then are woken in the first run, before any held one.
    const held = report.quota.heldRelease;
    expect(held).toMatchObject({ held: 1_000, critical: 5, criticalWokenInRun: 1, heldReleasedBeforeCritical: 0 });
    for (const run of held.runs) expect(run.released + run.woken).toBeLessThanOrEqual(held.capPerRun);
    expect(held.runs.reduce((s: number, r: { released: number }) => s + r.released, 0)).toBe(1_000);
  }, 480_000);
});

describe('npm run bench -- --e2e (smoke)', () => {
  const PHASES = ['ingest', 'stream', 'dispatchQueue', 'claim', 'pacingWait', 'audience', 'provider'];
  const e2e = async (...flags: string[]) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'tools/bench/run.ts', '--e2e', ...flags], {
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout).endToEnd;
  };
  const expectBreakdown = (b: { totalMs: object; phasesMs: Record<string, object> }, count: number) => {
    const figure = { count, p50: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) };
    expect(b.totalMs).toEqual(figure);
    expect(Object.keys(b.phasesMs)).toEqual(PHASES);
    for (const p of PHASES) expect(b.phasesMs[p]).toEqual(figure);
  };

  it('traces every notice of the mixed workload from delivery to the provider, per channel and class', async () => {
    const r = await e2e('--events', '6', '--rate', '20', '--json');
    // 6 events: CardPayment (EMAIL, PUSH, SMS), LoginFromNewDevice (EMAIL, PUSH, SMS), StatementReady (EMAIL, PUSH).
    expect(r).toMatchObject({ workload: { kind: 'mixed', events: 6 }, events: 6, allSent: true, notTraced: 0 });
    expect(Object.keys(r.byChannelAndClass).sort()).toEqual([
      'EMAIL bulk',
      'EMAIL critical',
      'EMAIL normal',
      'PUSH bulk',
      'PUSH critical',
      'PUSH normal',
      'SMS critical',
      'SMS normal',
    ]);
    for (const b of Object.values(r.byChannelAndClass)) expectBreakdown(b as never, 2);
    expect(r.load).toMatchObject({ start: expect.any(Number), end: expect.any(Number), max: expect.any(Number) });
  }, 300_000);

  it('under a backlog at the SES quota: the critical emails, the drain rate, every notification SENT', async () => {
    const r = await e2e('--critical', '--backlog', '20', '--critical-count', '2', '--sweep-every', '5', '--json');
    expect(r.workload).toEqual({ kind: 'backlog', backlog: 20, critical: 2, sesRatePerSecond: 14 });
    // Nothing lost: the warm-up's 8 notifications, the backlog's 20 and the 2 critical emails, every one SENT.
    expect(r).toMatchObject({ notifications: 30, byStatus: { SENT: 30 }, allSent: true, notTraced: 0, onFailure: 0 });
    expectBreakdown(r.byChannelAndClass['EMAIL critical'], 2);
    expectBreakdown(r.byChannelAndClass['EMAIL normal'], 20);
    expect(r.drain).toMatchObject({ normalEmailsSent: 20, perSecond: expect.any(Number), ofQuota: expect.any(Number) });
    const figure = { count: 2, p50: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) };
    expect(r.criticalBehindInStream).toEqual({ notifications: figure, atQuotaMs: figure });
  }, 300_000);
});
