/**
 * The CloudTrail event sources the protection watch's rules read (lib/protection-watch.ts and
 * lib/protection-watch-functions.ts), in this module of its own because `npm run smoke` checks that a trail records
 * them (tools/ops/trail-check.ts) without loading the CDK. IAM's events are read by a stack in us-east-1 alone:
 * EventBridge delivers them there only (docs/deploy.md "What the bank's organisation must provide").
 */
export const WATCHED_EVENT_SOURCES = [
  's3.amazonaws.com',
  'kms.amazonaws.com',
  'sts.amazonaws.com',
  'events.amazonaws.com',
  'sns.amazonaws.com',
  'sqs.amazonaws.com',
  'cloudtrail.amazonaws.com',
  'lambda.amazonaws.com',
  'dynamodb.amazonaws.com',
] as const;
/** IAM's event source, and the one region whose rules receive its events. */
export const IAM_EVENT_SOURCE = 'iam.amazonaws.com';
export const IAM_EVENTS_REGION = 'us-east-1';

/** What a trail must record for the watch of a stack in `region`. */
export const watchedEventSources = (region: string): readonly string[] =>
  region === IAM_EVENTS_REGION ? [...WATCHED_EVENT_SOURCES, IAM_EVENT_SOURCE] : WATCHED_EVENT_SOURCES;
