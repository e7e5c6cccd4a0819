/**
 * The evidence index in the cost model (tools/bench/cost-at-rate.ts): the compact layout is priced from the items the
 * product writes (their bytes as DynamoDB bills them), and the floor carries, beside an entry per send by customer, the
 * least entry that finds a notification without knowing its customer — one per event.
 */
import { describe, expect, it } from 'vitest';
import { batchName, indexEntriesOf } from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { indexItemsOf } from '../../functions/stores/evidence-index.ts';
import { itemBytes } from '../../tools/bench/billing.ts';
import {
  compactIndexBytes,
  costAtRate,
  DEFAULT_LAYOUTS,
  EXTRA_PRICES,
  INDEX_SAMPLE,
  RATE_ASSUMPTIONS,
  type RunDensity,
} from '../../tools/bench/cost-at-rate.ts';
import { FLOOR, floorAtRate } from '../../tools/bench/floor-at-rate.ts';
import { US_EAST_1_PRICES as P } from '../../tools/bench/prices.ts';
import { SMALL_RUN } from '../support/run-density.ts';

/** A run of `events` events on `perEvent` channels each: the small run's density otherwise. */
const run = (events: number, perEvent: number): RunDensity => ({
  ...SMALL_RUN,
  notifications: events * perEvent,
  events,
  emails: events,
  sesEvents: events,
  snsDeliveryLogs: 0,
  criticalNotifications: 0,
  otpEvents: 0,
  indexWru: 600,
});
const LOW = 1e6 / (30.44 * 86_400);
const GB = 1024 ** 3;
/** Per million notifications: `bytes` kept the evidence's retention (Standard-IA and PITR), and `wru` writes. */
const priced = (bytes: number, wru: number) =>
  1e6 *
  (wru * (EXTRA_PRICES.dynamodbIaWriteRequestUnitPerMillion / 1e6) +
    (bytes / GB) *
      RATE_ASSUMPTIONS.evidenceRetentionMonths *
      (EXTRA_PRICES.dynamodbIaStorageGbMonth + P.dynamodbPitrGbMonth));

describe('the evidence index in the cost model', () => {
  it("prices the compact layout on the product's own items: an event's customer item of two sends and its event item", () => {
    expect(DEFAULT_LAYOUTS.index).toBe('compact');
    const slice = sliceBatchName(Date.parse('2026-12-05T09:15:00Z'), 2_557);
    const items = indexItemsOf(
      indexEntriesOf(
        slice,
        ['EMAIL', 'PUSH'].map((channel) => ({
          userId: INDEX_SAMPLE.userId,
          acceptedAt: '2026-12-05T09:15:00.000Z',
          notificationId: `${INDEX_SAMPLE.eventId}#${channel}`,
          sha256: 'f'.repeat(64),
          attempt: 1,
        })),
      ).map((entry) => ({ entry, expiresAt: INDEX_SAMPLE.expiresAt })),
    );
    const billed = items.map((i) => itemBytes(i) + 100);
    expect(compactIndexBytes(slice, 2)).toEqual({ customer: billed[0], event: billed[1] });
    // A batch's own name (10,000/s) is longer than a spool slice's (0.38/s).
    const own = batchName('dispatch', Date.parse('2026-12-05T09:15:00Z'), 'f'.repeat(20));
    expect(compactIndexBytes(own, 2).customer).toBeGreaterThan(compactIndexBytes(slice, 2).customer);
    // The mix at 0.38/s: per notification half an event's two items, 1.25 writes — the customer item once per lane
    // of the shard its two channels meet (1.5 an event over two lanes), the event item once.
    const cost = costAtRate({}, run(300, 2), LOW, 1, P);
    expect(cost.perNotification.indexWru).toBe(1.25);
    const { customer, event } = compactIndexBytes(slice, 2);
    // Spooled, each send's index is checked by the roll-up: the event's two items read at half a unit each (Standard-IA
    // reads), shared by its two notifications.
    expect(cost.perNotification.indexCheckRru).toBe(0.5);
    const checked = 0.5 * EXTRA_PRICES.dynamodbIaReadRequestUnitPerMillion;
    expect(cost.perMillion.evidenceIndex).toBeCloseTo(priced((customer + event) / 2, 1.25) + checked, 1);
    // At 10,000/s nothing spools: no check.
    expect(costAtRate({}, run(300, 2), 10_000, 4, P).perNotification.indexCheckRru).toBe(0);
  });

  it('prices no evidence intent where dispatch spools (each record put before its SENT write), and the intents of full batches', () => {
    expect(costAtRate({}, run(300, 2), LOW, 1, P).perNotification.intentWru).toBe(0);
    expect(costAtRate({}, run(300, 2), 10_000, 4, P).perNotification.intentWru).toBeGreaterThan(0);
  });

  it('prices the writes an event meets: one a lane its channels are read in, one where a full batch ends between them', () => {
    // One channel an event: its customer item and its event item, one write each.
    expect(costAtRate({}, run(600, 1), LOW, 1, P).perNotification.indexWru).toBe(2);
    // Three channels over two lanes: 1.75 customer writes an event, and the event item: (1.75 + 1) / 3.
    expect(costAtRate({}, run(200, 3), LOW, 1, P).perNotification.indexWru).toBeCloseTo(2.75 / 3, 3);
    // At 10,000/s every batch is full (100 records): at most one more write a batch, where it ends inside an event.
    expect(costAtRate({}, run(300, 2), 10_000, 4, P).perNotification.indexWru).toBeCloseTo(1.26, 3);
  });

  it('the floor finds a notification without its customer: an entry per event naming the customer, beside one per send', () => {
    const mix = floorAtRate({}, run(300, 2), LOW, 1, P);
    const alone = floorAtRate({}, run(600, 1), LOW, 1, P);
    // Per notification: the send's 60 B entry, and per event (half a notification here) an item per customer and
    // event (100 B) and the event's entry (40 B + 100 B), each written once.
    const perEvent = 100 + FLOOR.eventEntryBytes + 100;
    expect(mix.evidenceIndex).toBeCloseTo(priced(FLOOR.indexEntryBytes + perEvent / 2, 1), 1);
    expect(alone.evidenceIndex).toBeCloseTo(priced(FLOOR.indexEntryBytes + perEvent, 2), 1);
    expect(mix.evidenceIndex).toBeGreaterThan(priced(FLOOR.indexEntryBytes + 100, 1));
  });
});
