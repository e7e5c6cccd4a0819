/**
 * Deployment settings from CDK context (`cdk.json` or `-c key=value`), validated at synth with a message naming the
 * key. cdk.json carries example values so `npm run synth` works offline on a fresh clone; a deploy passes the real ones.
 */
import { z } from 'zod';

const ARN_MSK_CLUSTER = /^arn:aws[a-z-]*:kafka:[a-z0-9-]+:\d{12}:cluster\/[A-Za-z0-9-]+\/[A-Za-z0-9-]+$/;
const ARN_SECRET = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:AmazonMSK_[A-Za-z0-9/_+=.@-]+$/;
const policy = z.enum(['AT_MOST_ONCE', 'AT_LEAST_ONCE']).default('AT_MOST_ONCE');
/** Context given on the command line arrives as a string: accept "100" for 100 and JSON for objects. */
const num = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);
const json = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim().startsWith('{') ? JSON.parse(v) : v), schema);

export const settingsSchema = z.object({
  mskClusterArn: z
    .string()
    .regex(ARN_MSK_CLUSTER, 'must be an MSK cluster ARN (arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>)'),
  topic: z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'must be a Kafka topic name'),
  consumerGroupId: z.string().regex(/^[a-zA-Z0-9-/*:_+=.@]{1,200}$/, 'must be a Kafka consumer group id'),
  startingPosition: z.enum(['TRIM_HORIZON', 'LATEST']).default('TRIM_HORIZON'),
  batchSize: num(1, 10_000, 100),
  batchingWindowSeconds: num(0, 300, 1),
  /** Absent: IAM auth (the default and the recommendation). Present: SASL/SCRAM with this secret. */
  kafkaScramSecretArn: z
    .string()
    .regex(ARN_SECRET, 'must be a Secrets Manager ARN whose name starts with AmazonMSK_')
    .optional(),
  kafkaMaxPollers: num(1, 200, 4),
  senderEmail: z.email('must be the verified SES identity to send from'),
  sesConfigurationSet: z.string().min(1).optional(),
  alarmEmail: z.email().optional(),
  inboxRetentionDays: num(1, 3650, 35),
  deliveryPolicy: json(
    z.object({ EMAIL: policy, PUSH: policy, SMS: policy }).default({
      EMAIL: 'AT_MOST_ONCE',
      PUSH: 'AT_MOST_ONCE',
      SMS: 'AT_MOST_ONCE',
    }),
  ),
  /**
   * Caps concurrent dispatch invocations. It caps sends in flight, not the send rate: the rate is paced by
   * sendRatePerSecond (a token bucket shared by every invocation).
   */
  dispatchReservedConcurrency: num(1, 1000, 5),
  /**
   * Sends per second per channel, all dispatch invocations together: set them to the account's quotas (SES
   * MaxSendRate from `aws ses get-send-quota`; the SNS SMS and push rates of the account and region). Sending above a
   * quota is not lost (throttled sends wait and retry), only slower and noisier.
   */
  sendRatePerSecond: json(
    z.object({ EMAIL: num(1, 100_000, 14), PUSH: num(1, 100_000, 100), SMS: num(1, 100_000, 20) }).default({
      EMAIL: 14,
      PUSH: 100,
      SMS: 20,
    }),
  ),
  /** A notification not sent within this many hours of its creation ends FAILED: EXPIRED (alarmed), never late. */
  notificationMaxAgeHours: num(1, 720, 24),
});

export type Settings = z.infer<typeof settingsSchema>;

export class SettingsError extends Error {
  override name = 'SettingsError';
}

export function parseSettings(read: (key: string) => unknown): Settings {
  const raw = Object.fromEntries(Object.keys(settingsSchema.shape).map((key) => [key, read(key)]));
  const result = settingsSchema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = issue.path.join('.');
    return raw[String(issue.path[0])] === undefined
      ? `context key "${key}" is required (cdk deploy -c ${key}=...)`
      : `context key "${key}" is invalid: ${issue.message}`;
  });
  throw new SettingsError(`notifier settings: ${problems.join('; ')}`);
}

/** The ARNs IAM authorizes Kafka data-plane actions on, derived from the cluster ARN. */
export function kafkaResourceArns(clusterArn: string, topic: string, group: string) {
  const [, prefix = '', name = '', uuid = ''] =
    /^(arn:[^:]+:kafka:[^:]+:\d{12}):cluster\/([^/]+)\/(.+)$/.exec(clusterArn) ?? [];
  return {
    cluster: clusterArn,
    topic: `${prefix}:topic/${name}/${uuid}/${topic}`,
    group: `${prefix}:group/${name}/${uuid}/${group}`,
  };
}
