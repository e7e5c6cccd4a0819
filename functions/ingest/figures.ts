/**
 * The ingest figures of one invocation and their EMF metric names. Plain data, no Powertools: the local run and the
 * chaos suite read the metrics back by these names without loading the handlers' modules early.
 */

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
}

/** The EMF metric of each figure: a contract the stack's dashboard and alarms reference. */
export const FIGURE_METRICS: Readonly<Record<keyof IngestFigures, string>> = {
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
};

/** delivered = accepted + duplicates + conflicts + quarantined + requarantined + failed. */
export const reconciles = (f: IngestFigures): boolean =>
  f.received === f.accepted + f.duplicates + f.conflicts + f.quarantined + f.requarantined + f.failed;
