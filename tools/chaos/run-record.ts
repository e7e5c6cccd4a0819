/**
 * What one chaos run hands its analysis, and what the analysis reads back: the run's inputs, what the table holds,
 * what the providers accepted. Its own module so the analysis and its checks both read it without a circle.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import type { runItems } from './converge.ts';
import type { ChaosOptions, EventSpec, ProviderMode, RecordSpec } from './model.ts';
import type { World } from './world.ts';

/** Records handed to ingest (every try), of which redeliveries; invocations that failed. */
export interface DeliveryStats {
  deliveries: number;
  redeliveries: number;
  failedInvocations: number;
}

/** What the stream side did: every record it produced, and what the mapping dropped, bisected, gave up. */
export interface StreamFigures {
  seen: DynamoDBRecord[];
  dropped: number;
  trimmed: number;
  onFailure: DynamoDBRecord[];
  unfilteredDeliveries: number;
  bisections: number;
}

export interface AnalysisInput {
  prefix: string;
  topic: string;
  parts: RecordSpec[][];
  specs: EventSpec[];
  stats: DeliveryStats;
  stream: StreamFigures;
  logStart: number;
  ledgerStart: { ses: number; sns: number };
  faultsBefore: Record<string, number>;
  providerBefore: { quotaThrottled: number; accountRefusals: number };
  applicationRefusalsBefore: number;
  modeByAddress: Map<string, ProviderMode>;
  metricsBefore: Record<string, number>;
  options: ChaosOptions;
  schedule: string[];
}

export type Item = Awaited<ReturnType<typeof runItems>>[number];

/** What the run left in the table, by what it is. */
export interface Stored {
  readonly inbox: Map<string, Item>;
  readonly notifications: Map<string, Item>;
  readonly quarantine: Map<string, Item>;
}

/** What the providers accepted, tied back to (eventId, channel) by the run's unique addresses. */
export interface Witnessed {
  readonly sends: ReturnType<typeof sendsOf>;
  readonly sendCount: Map<string, number>;
  readonly sendAttempts: Map<string, (number | undefined)[]>;
  /** The address each notification was for. */
  readonly addressOf: Map<string, string>;
}

export const sendsOf = (w: World, a: AnalysisInput) => [
  ...w.ses.sends.slice(a.ledgerStart.ses),
  ...w.sns.sends.slice(a.ledgerStart.sns),
];
