/**
 * A drill schedule, drawn from the seed (docs/regions.md "The drill"): the events and their channels, the background
 * faults (replication lag with a long tail, reordering, the offset sync's lag, producers' clocks within the margin),
 * one scenario at a random instant, and when the operator promotes and the old region returns. The same seed draws the
 * same schedule.
 */
import type { Channel } from '../../functions/domain/channels.ts';
import { seededRandom } from '../chaos/generate.ts';

/** The region lost (or cut off) at the scenario's instant: a failover. */
export const FAILURES = ['lost-mid-batch', 'lost-mid-send', 'lost-after-accept', 'forced-while-old-runs'] as const;
export type FailureName = (typeof FAILURES)[number];
export const SCENARIOS = [...FAILURES, 'switchover-under-load', 'failback', 'cluster-destroyed'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export const T0 = Date.parse('2026-12-01T00:00:00Z');
export const TICK_MS = 1_000;

export interface DrillEvent {
  readonly eventId: string;
  /** When the producer publishes it. */
  readonly at: number;
  readonly channels: readonly Channel[];
  readonly value: Record<string, unknown>;
}

export interface Schedule {
  readonly seed: number;
  readonly events: readonly DrillEvent[];
  readonly scenario: ScenarioName;
  /**
   * How the old region fails at the scenario's instant: the scenario's own failure; for `failback`, the failover it
   * fails back from; for `cluster-destroyed`, lost mid-batch (its cluster never returns); none for a switchover.
   */
  readonly failure: FailureName | undefined;
  /** The scenario's instant: the failure, or the switchover's demotion. */
  readonly failAt: number;
  readonly promoteAfterMs: number;
  /** After the promotion: when the old region answers again (and replication resumes). */
  readonly healAfterMs: number;
  /** For failback: after the reconciliation, when the operator switches back to the original region. */
  readonly failbackAfterMs: number;
  /** Per-write replication lag: a draw. */
  readonly dbLagMs: () => number;
  readonly kafkaLagMs: () => number;
  readonly offsetSyncMs: number;
  readonly ingestBatch: number;
  /** For lost-mid-batch: the writes the region still makes in the batch it dies in. */
  readonly writesBeforeDeath: number;
  /** For lost-mid-send: whether the provider accepted before the region died. */
  readonly acceptedBeforeDeath: boolean;
  readonly random: () => number;
}

const CONTACT: Record<Channel, [string, (n: number) => string]> = {
  EMAIL: ['email', (n) => `customer${n}@example.com`],
  PUSH: [
    'pushEndpointArn',
    (n) =>
      `arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/bank-app/${String(n).padStart(8, '0')}-0000-0000-0000-000000000000`,
  ],
  SMS: ['phoneNumber', (n) => `+8190${String(10_000_000 + n).slice(0, 8)}`],
};

/** The schedule of a seed; `scenario` names one instead of drawing it (the test suite covers each). */
export function drawSchedule(seed: number, scenario?: ScenarioName): Schedule {
  const random = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const count = int(20, 40);
  const spanMs = int(20, 40) * TICK_MS;
  const events: DrillEvent[] = [];
  for (let i = 0; i < count; i++) {
    const channels = (['EMAIL', 'PUSH', 'SMS'] as const).filter(() => random() < 0.6);
    const chosen: Channel[] = channels.length === 0 ? [pick(['EMAIL', 'PUSH', 'SMS'] as const)] : [...channels];
    const at = T0 + Math.floor(random() * spanMs);
    const eventId = `drill-${seed}-${i}`;
    // A producer's clock within the margin (docs/regions.md "The cut and the clock margin"): behind, or a little ahead.
    const skewMs = int(-30_000, 5_000);
    const contact = Object.fromEntries(chosen.map((c) => [CONTACT[c][0], CONTACT[c][1](seed * 100 + i)]));
    events.push({
      eventId,
      at,
      channels: chosen,
      value: {
        eventId,
        type: 'TransferCompleted',
        occurredAt: new Date(at + skewMs).toISOString(),
        recipient: { userId: `u-${seed}-${i % 7}`, locale: pick(['en', 'ja'] as const), ...contact },
        data: {
          transferId: `t-${i}`,
          amount: String(int(1, 99) * 1000),
          currency: 'JPY',
          counterpartyName: 'Taro Yamada',
        },
      },
    });
  }
  events.sort((a, b) => a.at - b.at);
  const tail = () => (random() < 0.1 ? int(5_000, 30_000) : int(100, 2_000));
  const chosen = scenario ?? pick(SCENARIOS);
  return {
    seed,
    events,
    scenario: chosen,
    failure: failureOf(chosen, pick(FAILURES)),
    failAt: T0 + int(2, Math.floor(spanMs / TICK_MS)) * TICK_MS,
    promoteAfterMs: int(1, 10) * TICK_MS,
    healAfterMs: int(5, 40) * TICK_MS,
    dbLagMs: tail,
    kafkaLagMs: () => int(100, 3_000),
    offsetSyncMs: int(2, 10) * TICK_MS,
    ingestBatch: int(1, 8),
    writesBeforeDeath: int(0, 4),
    acceptedBeforeDeath: random() < 0.5,
    failbackAfterMs: int(0, 30) * TICK_MS,
    random,
  };
}

function failureOf(scenario: ScenarioName, drawn: FailureName): FailureName | undefined {
  if (scenario === 'switchover-under-load') return undefined;
  if (scenario === 'failback') return drawn;
  if (scenario === 'cluster-destroyed') return 'lost-mid-batch';
  return scenario;
}
