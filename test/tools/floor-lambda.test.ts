/**
 * The floor counts Lambda's requests at the rate's density, as it counts Lambda's log lines: the functions' shape is
 * the customer's (an MSK-triggered and a stream-triggered function), so at a million notifications a month each is
 * invoked about once per event or notification whatever is built. Lambda's time stays as the run measured it.
 */
import { describe, expect, it } from 'vitest';
import { costAtRate } from '../../tools/bench/cost-at-rate.ts';
import { floorAtRate } from '../../tools/bench/floor-at-rate.ts';
import { US_EAST_1_PRICES } from '../../tools/bench/prices.ts';
import { SMALL_RUN as RUN } from '../support/run-density.ts';

const MEASURED = { lambda: 0.4, dynamodbStorageAndPitr: 1, feedbackQueue: 0.2 };
const ONE_MILLION_A_MONTH = 1e6 / (30.44 * 86_400);

describe("the floor's Lambda", () => {
  it('at a million a month: the measured time plus a request per invocation at the rate, as the cost counts it', () => {
    const floor = floorAtRate(MEASURED, RUN, ONE_MILLION_A_MONTH, 1, US_EAST_1_PRICES);
    const ours = costAtRate(MEASURED, RUN, ONE_MILLION_A_MONTH, 1, US_EAST_1_PRICES);
    const runInvocations = 12 / 600;
    const atRate = ours.perNotification.invocations;
    // About one invocation per event and per notification, and the feedback's: far more than the burst's 0.02.
    expect(atRate).toBeGreaterThan(2);
    expect(floor.lambda).toBeCloseTo(
      MEASURED.lambda + 1e6 * (atRate - runInvocations) * (US_EAST_1_PRICES.lambdaRequestPerMillion / 1e6),
      1,
    );
    expect(floor.lambda).toBeCloseTo(ours.perMillion.lambda, 1);
  });

  it('never below the time the run measured, and at 10,000/s close to it (full batches)', () => {
    const floor = floorAtRate(MEASURED, RUN, 10_000, 16, US_EAST_1_PRICES);
    expect(floor.lambda).toBeGreaterThanOrEqual(MEASURED.lambda - 0.01);
    expect(floor.lambda).toBeLessThan(floorAtRate(MEASURED, RUN, ONE_MILLION_A_MONTH, 1, US_EAST_1_PRICES).lambda);
  });
});
