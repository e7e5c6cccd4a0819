/** What the cost model's tests price: a run's density (tools/bench/cost-at-rate.ts RunDensity). */
import type { RunDensity } from '../../tools/bench/cost-at-rate.ts';

/** A small run in the bench's mix: 600 notifications of 300 events, every batch full. */
export const SMALL_RUN: RunDensity = {
  notifications: 600,
  events: 300,
  emails: 300,
  sesEvents: 300,
  snsDeliveryLogs: 300,
  criticalNotifications: 60,
  otpEvents: 30,
  invocations: { ingest: 3, dispatch: 6, feedback: 2, sweeper: 1 },
  emfLineBytes: 400,
  emfBytesPerNotification: 800,
  evidence: { puts: 8, gets: 0, lists: 0, records: 600, bytes: 600 * 1_000, bytesAlone: 600 * 1_500 },
  intentWru: 12,
  indexWru: 900,
  indexGbMonths: 0.001,
  tableGbMonths: 0.001,
};
