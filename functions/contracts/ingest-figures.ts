/**
 * The ingest figures of one invocation and their EMF metric names: what the function reports of each batch
 * ("batch ingested"), what the stack's dashboard and alarms reference, and what the local run and the chaos suite
 * read back to check that every delivered record is accounted for. Plain data, no Powertools.
 */
import type { MetricName } from './telemetry.ts';

export interface IngestFigures {
  received: number;
  accepted: number;
  duplicates: number;
  conflicts: number;
  quarantined: number;
  requarantined: number;
  failed: number;
  /** Accepted events (part of `accepted`) that route to no channel: no contact point for any allowed channel. */
  withoutNotifications: number;
  /** Accepted events (part of `accepted`) recorded but not sent: older than MAX_EVENT_AGE_SECONDS. */
  tooOld: number;
  /** Accepted events (part of `accepted`) whose display text was cleaned. */
  displayTextSanitised: number;
  /** Accepted events (part of `accepted`) with a card number masked in a shown field (a producer sent a PAN). */
  cardNumbersMasked: number;
  /** Accepted events (part of `accepted`) with at least one channel REFUSED (its contact point had no reading). */
  withRefusedChannels: number;
  /** Accepted events (part of `accepted`) with at least one spelling normalised to its one reading. */
  spellingsNormalised: number;
  /** Accepted events (part of `accepted`) whose language tag named no language the brand writes: the default. */
  localeFallbacks: number;
  /** Accepted events (part of `accepted`) whose time zone the runtime does not know: the locale's default zone. */
  timeZoneFallbacks: number;
  /** Duplicates (part of `duplicates`) that were corrected resends repairing refused channels. */
  repairs: number;
}

/** The EMF metric of each figure: a contract the stack's dashboard and alarms reference. */
export const FIGURE_METRICS: Readonly<Record<keyof IngestFigures, MetricName>> = {
  received: 'EventsReceived',
  accepted: 'EventsAccepted',
  duplicates: 'DuplicateEvents',
  conflicts: 'EventIdConflicts',
  quarantined: 'RecordsQuarantined',
  requarantined: 'RecordsRequarantined',
  failed: 'RecordsFailed',
  withoutNotifications: 'EventsWithoutNotifications',
  tooOld: 'EventsTooOld',
  displayTextSanitised: 'DisplayTextSanitised',
  cardNumbersMasked: 'CardNumbersMasked',
  withRefusedChannels: 'EventsWithRefusedChannels',
  spellingsNormalised: 'SpellingsNormalised',
  localeFallbacks: 'LocaleFallbacks',
  timeZoneFallbacks: 'TimeZoneFallbacks',
  repairs: 'EventsRepaired',
};

/** What the delivered records add up to (the equation below). */
export const EQUATION_TERMS = [
  'accepted',
  'duplicates',
  'conflicts',
  'quarantined',
  'requarantined',
  'failed',
] as const;

/** The figures of the equation below: reported for every batch, zero or not (the runbook's reconciliation sums them). */
export const EQUATION_FIGURES: readonly (keyof IngestFigures)[] = ['received', ...EQUATION_TERMS];

/**
 * What a batch reports, as the metrics of its "batch ingested" document: the equation's figures always, each of their
 * parts (sanitised, masked, fallbacks …) only when it is not zero. At a million notifications a month an invocation is about
 * one event, and nine zero parts were about 450 bytes of CloudWatch Logs an event (a metric and a key each); a part's
 * alarm treats a missing datapoint as not breaching, and its sum is the same.
 */
export const reportedFigures = (f: IngestFigures): [keyof IngestFigures, number][] =>
  (Object.entries(f) as [keyof IngestFigures, number][]).filter(([k, v]) => v !== 0 || EQUATION_FIGURES.includes(k));

/** delivered = accepted + duplicates + conflicts + quarantined + requarantined + failed. */
export const reconciles = (f: IngestFigures): boolean =>
  f.received === f.accepted + f.duplicates + f.conflicts + f.quarantined + f.requarantined + f.failed;
