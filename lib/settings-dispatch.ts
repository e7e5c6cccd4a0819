/**
 * The dispatch function's capacity settings: how many invocations it may run, and how many environments are kept warm
 * for the urgent trigger (lib/dispatch.ts, lib/dispatch-triggers.ts).
 */
import { z } from 'zod';

export const dispatchCapacityShape = {
  /**
   * Optional cap on concurrent dispatch invocations. Unset by default: reserving needs account headroom. It caps
   * sends in flight, not the send rate: the rate is paced by sendRatePerSecond.
   */
  dispatchReservedConcurrency: z.coerce.number().int().min(1).max(1000).optional(),
  /**
   * Execution environments of dispatch kept initialised for the urgent trigger alone (Lambda provisioned
   * concurrency on an alias only that trigger invokes): during a backlog every other environment is busy, and a
   * critical notice would otherwise pay a cold start. 0 (the default): none, nothing is billed for it. Each
   * environment is billed while it is kept, whether used or not (docs/dispatch.md "The urgent trigger's warm
   * environments").
   */
  urgentWarmEnvironments: z.coerce.number().int().min(0).max(100).default(0),
};

/** What the two say together: the warm environments count within the reservation, and the routine trigger needs room. */
export function dispatchCapacityProblems(
  s: { readonly dispatchReservedConcurrency?: number | undefined; readonly urgentWarmEnvironments: number },
  problem: (key: string, message: string) => void,
): void {
  if (s.dispatchReservedConcurrency !== undefined && s.urgentWarmEnvironments >= s.dispatchReservedConcurrency) {
    problem(
      'urgentWarmEnvironments',
      `must be below dispatchReservedConcurrency (${s.dispatchReservedConcurrency}): the warm environments count within it and the routine trigger needs the rest`,
    );
  }
}
