/**
 * The names CloudWatch knows notifier by: the service, the metric namespace of a stage, and every metric the functions
 * emit. The functions emit through these names (powertools.ts accepts only a MetricName) and the stack's alarms and
 * dashboard read through them (lib/alarm-groups.ts, lib/dashboard.ts), so renaming a metric cannot silently orphan
 * its alarm: the compiler finds every use. Plain data: the runtime, the CDK app, the local run and the tests all import it.
 */

/** Powertools' `service` (a dimension on every metric, a key on every log line). */
export const SERVICE_NAME = 'notifier';

/** One namespace per stage, so two stages in one account keep their metrics apart. */
export const metricNamespaceOf = (stage: string) => `${SERVICE_NAME}/${stage}`;

/**
 * What every function's environment carries for Powertools and Node (they read it; our loaders do not): the house
 * construct sets it on each function (lib/notifier-function.ts), the local run and the tests as they need.
 */
export interface TelemetryEnvironment {
  readonly POWERTOOLS_SERVICE_NAME: typeof SERVICE_NAME;
  readonly POWERTOOLS_METRICS_NAMESPACE: string;
  readonly POWERTOOLS_LOG_LEVEL?: string;
  readonly POWERTOOLS_METRICS_DISABLED?: 'true' | 'false';
  readonly POWERTOOLS_TRACE_ENABLED?: 'true' | 'false';
  readonly NODE_OPTIONS?: string;
}

export const METRIC_NAMES = [
  // ingest: the figures of every batch (functions/contracts/ingest-figures.ts), and what it created
  'EventsReceived',
  'EventsAccepted',
  'DuplicateEvents',
  'EventIdConflicts',
  'RecordsQuarantined',
  'RecordsRequarantined',
  'RecordsFailed',
  'EventsWithoutNotifications',
  'EventsTooOld',
  'DisplayTextSanitised',
  /** Accepted events with a card number in a shown field, masked (docs/event.md "Card numbers"): alarmed. */
  'CardNumbersMasked',
  'EventsWithRefusedChannels',
  'SpellingsNormalised',
  'LocaleFallbacks',
  'TimeZoneFallbacks',
  'EventsRepaired',
  'NotificationsCreated',
  /** Per channel: notifications written REFUSED, and REFUSED ones a corrected resend moved to PENDING. */
  'NotificationsRefused',
  'NotificationsRepaired',
  'TransactionRetries',
  'InboxLookupFailures',
  'PreferencesUpdates',
  // dispatch
  'RecordsIgnored',
  'RecordsNotStarted',
  'DispatchSkipped',
  'NotificationsSent',
  'LateAcceptances',
  'AcceptancesNotRecorded',
  'ApplicationBlocked',
  'SendFailures',
  'SendFailuresByReason',
  'NotificationsExpired',
  /** The right moment (docs/dispatch.md): held outside a send window, released by the sweeper, and never sent. */
  'NotificationsHeld',
  'NotificationsReleased',
  'NotificationsPastValidity',
  'NotificationsSuperseded',
  'NotificationsFloodLimited',
  'SendsDeferred',
  'SendsThrottled',
  'ProviderBlocked',
  'ProviderBlockedByCode',
  'SendRetries',
  'UnknownOutcomes',
  'NotificationsSuppressed',
  // feedback
  'DeliveryFeedback',
  'AddressesSuppressed',
  'FeedbackIgnored',
  'FeedbackWithoutNotification',
  'FeedbackForOtherSend',
  'FeedbackFailed',
  // sweeper
  'SweeperRedriven',
  'SweeperWoken',
  'SweeperResolvedUnknown',
  'SweeperResolvedSent',
  'SweeperExamined',
  'SweeperItemsPerSecond',
  'SweeperUnfinished',
  'SweeperLeasePassUnfinished',
  'SweeperLeaseCursorsDropped',
  // partitions whose lease-pass or due-round Query failed in a run, each once (throttling, a 5xx, a timeout; any other
  // error fails the run): kept for the next run, 0 every run when none
  'SweeperLeasePartitionsFailed',
  // evidence (docs/evidence-and-privacy.md): a send whose evidence could not be written at once, and what became of it
  'EvidenceGaps',
  'EvidenceLost',
  'EvidenceGapsFilled',
  'EvidenceGapsOpen',
  'EvidenceIntentsNotWritten',
  'EvidenceUnindexed',
  'EvidenceIntentOldestAge',
  // index items DynamoDB left unprocessed after the retries: the batch is then left to the sweeper to index
  'EvidenceIndexUnprocessed',
  // two regions (docs/regions.md): a send the fence stopped; the keeper fencing this region, or seeing both active
  'FencedSendAttempts',
  'SelfDemoted',
  'RegionsBothActive',
  // the keeper: 1 when the other region's heartbeat has not reached this replica lately, else 0 (every minute)
  'PeerHeartbeatStale',
  // ingest in two regions: events held because the other region's look-up went unanswered (down, slow, not fenced),
  // and records replicated from the other cluster that this region does not take (quarantined)
  'PeerLookupsUnanswered',
  'ReplicatedRecordsNotTaken',
  // the evidence spool (few records per invocation): records put in it, slices rolled into objects, its oldest slice
  'EvidenceSpooled',
  'EvidenceSlicesRolled',
  'EvidenceSpoolOldestAge',
  // spool items set apart by the roll-up: a body that does not unzip, or bytes that are not the digest its key names
  'EvidenceSpoolSetAside',
  // reads of the spool table (its cursor, a partition, its oldest slice) that failed in a run: 0 every run when none did
  'EvidenceSpoolUnreadable',
  // spooled sends the roll-up found missing from the customers' index (their writer died or was refused), indexed then
  'EvidenceIndexFilled',
  // the sweeper's look-ups of an expired lease's spooled record: decided by policy because a refused read, or the
  // run's cap or deadline 5 minutes after the lease's end, left part of the holder's minutes unread; found, but its
  // SENT write failed (the next run's)
  'SpoolLookupsSkipped',
  'SpoolSendsLeftForNextRun',
  // look-ups the run's cap or deadline cut short: the lease left for the next run (counts look-ups: 5 for a lease
  // that waited 5 runs)
  'SpoolLookupsDeferred',
  // a dead holder's send SENT from the message id on its item naming no record (its lease extended by an earlier
  // version) whose evidence record no index named when its lease was resolved (sweeper/sent-from-item.ts): lost with
  // the holder, or not yet indexed. One that names its record is kept or counted EvidenceLost instead
  'EvidenceUnconfirmed',
  // such a send whose record the run could not check (a read refused, a rebuild's write failed): neither kept nor
  // lost, and no later run checks it again — its log line ("could not be checked") names it. Not alarmed: it says
  // "not checked", never "lost" (a page would claim what nothing found)
  'EvidenceUnchecked',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/**
 * The listings of what an invocation did to many records, once an invocation (commons/powertools.ts infoListing:
 * the metadata of its closing metric document), and the key of their list: each entry begins with the event's or the
 * notification's id. The runbook's trace finds an id in them; the cost bench prices the document once an invocation
 * and the entries once a record.
 */
export const LOG_LISTINGS = {
  'batch ingested': 'events',
  'notifications sent': 'sent',
  'deliveries recorded': 'reports',
} as const;
export type LogListing = keyof typeof LOG_LISTINGS;
