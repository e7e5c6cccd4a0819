/**
 * What the stack hands each function's part (lib/ingest.ts, lib/dispatch.ts, lib/sweeper.ts): the settings, the
 * table, the keys, and the environment fragments several functions share — built once, as their contracts type them.
 *
 * Each part builds its function and what belongs to it (trigger, grants) in the stack's own scope, not in a construct
 * of its own: a construct would add a segment to every path below it, and so change the logical id of every resource
 * a deployed stack already has (a function, its role, its log group, the MSK mapping) — CloudFormation would replace
 * them. The parts keep the paths, and so the template, as they were.
 */
import type { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { DispatchTiming } from '../functions/contracts/dispatch-timing.ts';
import {
  DISPATCH_ENVIRONMENT,
  type PlacementEnvironment,
  type SendingEnvironment,
  sendRateEnvironment,
} from '../functions/contracts/environment.ts';
import { formatChannelPolicies } from '../functions/domain/delivery-policy.ts';
import { sweepShardsFor } from '../functions/domain/sweep-index.ts';
import type { EvidenceStore } from './evidence-store.ts';
import type { Settings } from './settings.ts';

export interface FunctionPartProps {
  readonly stack: Stack;
  readonly settings: Settings;
  /** The stack's name and the prefix of every fixed physical name. */
  readonly prefix: string;
  readonly metricNamespace: string;
  readonly timing: DispatchTiming;
  readonly table: ITable;
  /** The evidence index's own table (lib/evidence-index-table.ts). */
  readonly evidenceIndexTable: ITable;
  /** The evidence spool's own table (lib/evidence-spool-table.ts). */
  readonly evidenceSpoolTable: ITable;
  /** This region, as the `owner` its triggers take writes of: only in a stage with two regions (lib/regional.ts). */
  readonly owner?: string;
  /** The bank's customer key (settings `kmsKeyArn`), when given. */
  readonly key: IKey | undefined;
  readonly evidence: EvidenceStore;
  readonly placementEnv: PlacementEnvironment;
  readonly sendingEnv: SendingEnvironment;
}

/** Where a (re-)PENDING notification goes: ingest, dispatch and the sweeper all write sweep keys. */
export function placementEnvironment(s: Settings, timing: DispatchTiming): PlacementEnvironment {
  return {
    // A new notification is first due for the sweeper this long after creation.
    PENDING_THRESHOLD_SECONDS: String(timing.pendingThresholdSeconds),
    // The sweep index's shards, sized from the peak the stack is built for; every writer of a sweep key and the
    // sweeper get the same count.
    SWEEP_SHARDS: String(sweepShardsFor(s.peakNotificationsPerSecond)),
  };
}

/** What dispatch and the sweeper both judge a send by. */
export function sendingEnvironment(s: Settings, timing: DispatchTiming): SendingEnvironment {
  return {
    ...sendRateEnvironment(s.sendRatePerSecond),
    MAX_AGE_SECONDS: String(s.notificationMaxAgeHours * 3600),
    MAX_SEND_ATTEMPTS: String(DISPATCH_ENVIRONMENT.MAX_SEND_ATTEMPTS.default),
    CHANNEL_POLICIES: formatChannelPolicies(s.deliveryPolicy),
    DEADLINE_MARGIN_MS: String(timing.deadlineMarginMs),
  };
}
