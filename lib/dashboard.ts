/**
 * The stage's one dashboard: events in → notifications created → sent, failures, lag, the functions' errors and the
 * MSK mapping. Other parts add their rows (lib/delivery-feedback.ts).
 */
import { Dashboard, GraphWidget, TextWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import type { AlarmedParts } from './alarm-groups.ts';
import type { StageMetrics } from './stage-metrics.ts';

export function createDashboard(scope: Construct, name: string, m: StageMetrics, parts: AlarmedParts): Dashboard {
  const dashboard = new Dashboard(scope, 'Dashboard', { dashboardName: name });
  dashboard.addWidgets(
    new TextWidget({
      markdown: `# ${name}\nEvents in → notifications created → sent. Runbook: docs/operations.md.`,
      width: 24,
      height: 2,
    }),
  );
  dashboard.addWidgets(
    new GraphWidget({
      title: 'Events in',
      left: (
        [
          'EventsReceived',
          'EventsAccepted',
          'DuplicateEvents',
          'EventsTooOld',
          'RecordsQuarantined',
          'EventIdConflicts',
        ] as const
      ).map((n) => m.metric(n)),
      width: 12,
    }),
    new GraphWidget({
      title: 'Notifications created per channel',
      left: m.perChannel('NotificationsCreated'),
      right: m.perChannel('NotificationsRefused'),
      width: 12,
    }),
  );
  dashboard.addWidgets(
    new GraphWidget({ title: 'Sent per channel', left: m.perChannel('NotificationsSent'), width: 12 }),
    new GraphWidget({
      title: 'Failures, unknown outcomes, retries',
      left: [
        ...m.perChannel('SendFailures'),
        ...m.perChannel('UnknownOutcomes'),
        ...m.perChannel('SendsThrottled'),
        ...m.perChannel('ProviderBlocked'),
        ...m.perChannel('NotificationsExpired'),
        ...m.perChannel('NotificationsPastValidity'),
        ...m.perChannel('NotificationsHeld'),
        ...m.perChannel('NotificationsSuperseded'),
        ...m.perChannel('NotificationsFloodLimited'),
        m.metric('SendRetries'),
        m.metric('SweeperRedriven'),
        m.metric('SweeperWoken'),
      ],
      width: 12,
    }),
  );
  dashboard.addWidgets(
    new GraphWidget({
      title: 'Lag',
      left: [parts.ingest.metric('OffsetLag', { statistic: 'Maximum' })],
      right: [parts.dispatch.metric('IteratorAge', { statistic: 'Maximum' })],
      width: 12,
    }),
    new GraphWidget({
      title: 'Function errors',
      left: [parts.ingest, parts.dispatch, parts.sweeper].map((f) => f.metricErrors()),
      width: 12,
    }),
  );
  dashboard.addWidgets(
    new GraphWidget({
      title: 'MSK mapping',
      left: ['PolledEventCount', 'InvokedEventCount', 'FailedInvokeEventCount'].map((n) =>
        m.mapping(n).with({ label: n }),
      ),
      right: [
        m.mapping('OnFailureDestinationDeliveredEventCount').with({ label: 'parked in S3' }),
        m.mapping('DroppedEventCount').with({ label: 'dropped' }),
        parts.ingest.metric('DestinationDeliveryFailures', { statistic: 'Sum' }).with({ label: 'not parked' }),
      ],
      width: 24,
    }),
  );
  return dashboard;
}
