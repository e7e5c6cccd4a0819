/**
 * The chaos suite's vocabulary: the provider modes and what each is expected to do, a run's options and report, and
 * the generated events and records. Shared by generating (generate.ts), running (scenario.ts) and judging (analyse.ts).
 */

import type { IngestFigures } from '../../functions/contracts/ingest-figures.ts';
import type { Channel } from '../../functions/domain/channels.ts';

/**
 * What each provider mode does to one notification, and the outcome the suite expects:
 * - ok: SENT, one send.
 * - reject: FAILED with the provider's reason, no send.
 * - throttleOnce: deferred, then SENT: one send.
 * - throttleMany: throttled six times — more than MAX_SEND_ATTEMPTS — then accepted: SENT, one send (throttling never
 *   uses the attempt budget).
 * - clockSkew: RequestExpired once (nothing sent), then SENT: one send.
 * - acceptThenHang: accepted, no answer: UNKNOWN with one send (at most once); resent, SENT with two sends, counted as
 *   a duplicate after an unknown outcome (at least once).
 * - acceptThen500 / acceptThenReset: accepted (ledger), then a 500 / a reset connection: as acceptThenHang. On an
 *   at-most-once channel there must never be a second send (resentAfterAcceptAtMostOnce).
 * - slow: accepted after the lease expired and the sweeper took over: as acceptThenHang, and the late SENT is fenced.
 * - acceptThenStoreFails: accepted, then DynamoDB fails the SENT write 1–3 times (throttling, a 500, a timeout), each
 *   failure taking seconds (the lease may run out meanwhile): SENT, one send — the acceptance is never lost, and never
 *   resent by the sweeper, even on an at-least-once channel.
 * - foreignEndpoint (push): the endpoint belongs to another account, which our role may not publish to (SNS answers
 *   403 AuthorizationError for that ARN): FAILED (FOREIGN_ENDPOINT), no send, and the PUSH channel is never held.
 * Account-level and quota faults are not per address: the scenario pauses a channel's account for a window (every
 * send refused with AccountSendingPaused / AuthorizationError), and shrinks the providers' quotas for a burst.
 * Neither may end anything FAILED (failedByQuotaOrAccount). Likewise one push platform application is disabled for a
 * window (PlatformApplicationDisabled): its pushes wait, nothing FAILED, the other application's pushes go on and the
 * PUSH channel is never held for it (heldTooWide).
 */
export const PROVIDER_MODES = [
  'ok',
  'reject',
  'throttleOnce',
  'throttleMany',
  'clockSkew',
  'acceptThenHang',
  'acceptThen500',
  'acceptThenReset',
  'slow',
  'acceptThenStoreFails',
  'foreignEndpoint',
] as const;
export type ProviderMode = (typeof PROVIDER_MODES)[number];

export interface ChaosOptions {
  readonly events: number;
  readonly seed: number;
  readonly partitions?: number;
  readonly batchSize?: number;
  /** Share of DynamoDB calls given a random fault (kinds of faults.ts DYNAMO_FAULTS and crash points). */
  readonly dynamoFaultRate?: number;
  readonly providerFaultRate?: number;
  readonly dropRate?: number;
  /** Arm one of every DynamoDB fault and crash point up front, so a short run still meets each of them. */
  readonly armEveryFault?: boolean;
}

export interface ChaosReport {
  seed: number;
  events: number;
  /** sha256 of the run's records and its schedule of deliveries and faults (ChaosRun.schedule): equal for equal seeds. */
  scheduleDigest: string;
  records: number;
  deliveries: number;
  redeliveries: number;
  faults: Record<string, number>;
  expectedSends: number;
  sentOnce: number;
  /**
   * A second accepted send is legitimate only on an at-least-once channel, made by a later attempt than the one
   * before it, that one having ended with an unknown outcome; anything else — two sends of one attempt, a resend
   * after a known outcome, a send no attempt can be tied to — is a bug.
   */
  duplicates: { bug: number; afterUnknownOutcome: number };
  /** Transitions a stale holder got applied after a newer claim: fencing failed. Must be 0. */
  staleWrites: number;
  lost: number;
  unknown: number;
  failed: number;
  quarantined: number;
  quarantineMismatches: number;
  conflicts: number;
  piiLeaks: number;
  illegalTransitions: number;
  inboxWithoutNotifications: number;
  headerInjections: number;
  unescapedMarkup: number;
  /** Sends whose text holds a control, line separator, bidi or other format character, or ill-formed text. */
  unsafeText: number;
  /** Display-text cases run, and those whose stored text is not the cleaned text (or that were not accepted). */
  displayText: { cases: number; mismatches: number };
  /**
   * Producers' input cases run (INPUT_CASES), and those not read as the rule says: a spelling not accepted, or a
   * refused channel not REFUSED with its reason, or sent.
   */
  inputCases: { cases: number; mismatches: number };
  /** Events older than the max event age: recorded, never sent. `mismatches`: not recorded as TOO_OLD, or sent. */
  tooOld: { events: number; mismatches: number };
  /** Events whose original (the inbox's record) is not the lowest offset of that eventId on its partition. */
  laterOffsetWon: number;
  prototypePolluted: boolean;
  /**
   * Sends the providers received from a holder that could not finish them: started with less than the send timeout
   * left before the dispatch invocation's deadline, or before the end of its lease. Must be 0.
   */
  sendsWithoutTime: number;
  /** A channel held for a failure of one endpoint or one platform application (not the account). Must be 0. */
  heldTooWide: number;
  /**
   * Transfers of a customer who published a PreferencesUpdated before them (lower offset, same partition): `cases`,
   * and `mismatches` — a notification sent on an opted-out channel, or suppressed on one not opted out, judged by the
   * preference in force under admission's own rules (a future-dated one admitted or not as admission decides).
   */
  preferences: { cases: number; mismatches: number };
  /** FAILED for a throttle, a quota, an account state or age: must be 0. */
  failedByQuotaOrAccount: number;
  /** A second send after a 500 or reset following an accept, on an at-most-once channel: must be 0. */
  resentAfterAcceptAtMostOnce: number;
  /** The ingest function's own figures (EMF metrics) over the run, and whether they reconcile with the deliveries. */
  figures: IngestFigures;
  reconciled: boolean;
  problems: string[];
}

/** occurredAt of the run's too-old events: older than the world's MAX_EVENT_AGE_SECONDS, forever. */
export const TOO_OLD_OCCURRED_AT = '1990-01-01T00:00:00Z';

export interface EventSpec {
  i: number;
  eventId: string;
  value: Record<string, unknown>;
  modes: Record<Channel, ProviderMode>;
  /** Index into DISPLAY_TEXT_CASES when this event carries one. */
  display?: number;
  /** Index into INPUT_CASES when this event is written as that case writes it. */
  input?: number;
  tooOld?: boolean;
}
export type RecordSpec =
  | { kind: 'event'; spec: EventSpec; value: Record<string, unknown> }
  | { kind: 'poison'; poison: number; value: string | Buffer | null }
  /** A customer's PreferencesUpdated (the whole opt-out set), published before one of their transfers. */
  | { kind: 'preferences'; eventId: string; userId: string; value: Record<string, unknown> };
