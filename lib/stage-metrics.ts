/**
 * The metrics the alarms and the dashboard read (lib/alarm-groups.ts, lib/dashboard.ts): the functions' EMF metrics
 * in the stage's namespace (dimension service=notifier, plus channel where the metric is per channel) and the MSK
 * mapping's own; and how an alarm evaluates them.
 */

import { Duration } from 'aws-cdk-lib';
import {
  type Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type MetricName, SERVICE_NAME } from '../functions/contracts/telemetry.ts';
import { CHANNELS } from '../functions/domain/channels.ts';

/** How an alarm evaluates: M of N datapoints, and what a missing datapoint counts as. */
export interface AlarmShape {
  readonly datapoints: number;
  readonly periods: number;
  readonly missing: TreatMissingData;
  readonly comparison?: ComparisonOperator;
}

export const PERIOD = Duration.minutes(1);
/** Each occurrence is a fact about a customer's message that needs a human; the metric exists only when it happens. */
export const EVERY_OCCURRENCE: AlarmShape = { datapoints: 1, periods: 1, missing: TreatMissingData.NOT_BREACHING };
/** Errors and lag: one transient retry must not page, a pattern over a few minutes must. */
export const SUSTAINED: AlarmShape = { datapoints: 3, periods: 5, missing: TreatMissingData.NOT_BREACHING };
/** A count that must keep coming: missing data breaches, fewer than one in each of `periods` alarms. */
export const SILENCE = (periods: number): AlarmShape => ({
  datapoints: periods,
  periods,
  missing: TreatMissingData.BREACHING,
  comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
});

/**
 * Who an alarm reaches (docs/operations.md "Who gets paged for what"): PAGE wakes a person — the pipeline or a channel
 * is failing for many; TICKET is read in working hours — one customer's message, one producer's record.
 */
export type AlarmTier = 'PAGE' | 'TICKET';

/**
 * What concerns one customer or one producer: every alarm of these names goes to the ticket topic, whatever its
 * threshold, and each has a rate alarm beside it that pages when it happens to many (lib/alarm-groups.ts).
 */
export const TICKET_ALARMS: ReadonlySet<string> = new Set([
  'RecordsQuarantined',
  'EventIdConflicts',
  'CardNumbersMasked',
  'SendFailures',
  'UnknownOutcomes',
  'NotificationsExpired',
  'NotificationsRefused',
  'LateAcceptances',
  'AcceptancesNotRecorded',
  'SweeperFoundStuck',
  'DeliveryFailures',
  'SnsNotificationsFailed',
]);

/** Where the alarm groups put their alarms: the page or the ticket topic, by tier (lib/observability.ts). */
export interface AlarmSink {
  alarm(name: string, m: IMetric, description: string, threshold?: number, shape?: AlarmShape): Alarm;
  alarmOnThrottles(name: string, fn: IFunction): Alarm;
}

export class StageMetrics {
  constructor(
    private readonly namespace: string,
    /** The MSK event source mapping's UUID: its own metrics carry it as the EventSourceMappingUUID dimension. */
    private readonly ingestMappingId: string,
  ) {}

  metric(name: MetricName, dims: Record<string, string> = {}): Metric {
    return new Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { service: SERVICE_NAME, ...dims },
      statistic: 'Sum',
      period: PERIOD,
    });
  }

  /** Sum of a per-channel metric over every channel: alarms cannot use SEARCH, metric math can add. */
  acrossChannels(name: MetricName, label: string): MathExpression {
    return new MathExpression({
      expression: CHANNELS.map((c) => c.toLowerCase()).join(' + '),
      usingMetrics: Object.fromEntries(CHANNELS.map((c) => [c.toLowerCase(), this.metric(name, { channel: c })])),
      label,
      period: PERIOD,
    });
  }

  /** A per-channel metric, one line per channel (the dashboard's). */
  perChannel(name: MetricName): IMetric[] {
    return CHANNELS.map((c) => this.metric(name, { channel: c }).with({ label: `${name} ${c}` }));
  }

  /** A metric of the MSK mapping itself (enabled by its MetricsConfig). */
  mapping(name: string): Metric {
    return new Metric({
      namespace: 'AWS/Lambda',
      metricName: name,
      dimensionsMap: { EventSourceMappingUUID: this.ingestMappingId },
      statistic: 'Sum',
      period: PERIOD,
    });
  }
}
