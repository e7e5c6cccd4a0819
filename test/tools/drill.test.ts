/**
 * The region drill in the default test run (docs/regions.md "The drill"): a few seeded schedules of two local regions
 * failing over pass the verdict — no second send on an at-most-once channel, every notice accounted for — and the
 * planted fault, the fence removed, fails it by name. Each run starts its own two DynamoDB Local instances.
 * The 1,000-schedule run is by hand: `npm run drill -- --schedules 1000 --seed 1 --json` (docs/measurements.md).
 */
import { describe, expect, it } from 'vitest';
import { runDrill } from '../../tools/drill/drill.ts';

describe('the region drill', () => {
  it('a schedule of each scenario fails over with no duplicate and no notice lost', async () => {
    const verdict = await runDrill(4, 20261205, {}, () => undefined, { cycle: true });
    expect(verdict.failures).toEqual([]);
    expect(verdict).toMatchObject({ pass: true, schedules: 4, passed: 4, duplicates: { atMostOnce: 0 } });
    expect(verdict.accounted.lost).toBe(0);
    expect(verdict.fence).toMatchObject({ sendsWhileFenced: 0, writesToForeignItems: 0 });
    expect(verdict.accounted.sent + verdict.accounted.sentLate).toBeGreaterThan(0);
  }, 300_000);

  it('with the fence removed, the passive region sends what the active one sends: the verdict fails on duplicates', async () => {
    const verdict = await runDrill(2, 20261205, { plant: 'no-fence' });
    expect(verdict.pass).toBe(false);
    expect(verdict.duplicates.atMostOnce).toBeGreaterThan(0);
    expect(verdict.failures.every((f) => f.broken.some((b) => b.startsWith('duplicates.atMostOnce')))).toBe(true);
  }, 300_000);
});
