/**
 * The settings a bank turns on to keep its records beyond one account and one region, and its functions off the
 * internet (docs/deploy.md "Protection a production stage turns on"): evidence replication to a log-archive account,
 * AWS Backup of the table with a locked vault and a copy to another account, and a VPC of the stack's own. Each is a
 * JSON object, validated at synth with a message naming the key; lib/settings.ts composes them.
 */
import { z } from 'zod';

const ARN_KMS_KEY = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):(\d{12}):key\/[A-Za-z0-9-]+$/;
/** A general purpose bucket: arn:aws:s3:::<name> (S3 bucket ARNs carry neither region nor account). */
const ARN_BUCKET = /^arn:aws[a-z-]*:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** arn:aws:backup:<region>:<account>:backup-vault:<name> */
const ARN_BACKUP_VAULT = /^arn:aws[a-z-]*:backup:([a-z0-9-]+):(\d{12}):backup-vault:[A-Za-z0-9_.-]{2,50}$/;
/** A PrivateLink endpoint service another party offers (Confluent Cloud's registry): com.amazonaws.vpce.<region>.vpce-svc-… */
const ENDPOINT_SERVICE = /^com\.amazonaws\.vpce\.([a-z0-9-]+)\.vpce-svc-[0-9a-f]{8,17}$/;
const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
/**
 * An IAM role, by ARN: the account, the path as written, and the role's name, which may end in one `*` (after at
 * least one character of its own) because AWS IAM Identity Center names its roles with a suffix it chooses
 * (`AWSReservedSSO_<permission set>_<16 hex>`). No wildcard in the account, the path or the middle of a name: a
 * pattern that matches more than the team it names would give the account back what the setting takes away.
 */
export const ROLE_PATTERN = /^arn:aws[a-z-]*:iam::(\d{12}):role\/(?:[\w+=,.@-]+\/)*[\w+=,.@-]+\*?$/;
/** Another account's EventBridge event bus: arn:aws:events:<region>:<account>:event-bus/<name>. */
const ARN_EVENT_BUS = /^arn:aws[a-z-]*:events:([a-z0-9-]+):(\d{12}):event-bus\/[A-Za-z0-9._-]{1,256}$/;
const days = (min: number, max: number, fallback?: number) => {
  const n = z.coerce.number().int().min(min).max(max);
  return fallback === undefined ? n : n.default(fallback);
};

/**
 * Every evidence object replicated, as written, to a bucket of a log-archive account: under that account's own key
 * and Object Lock (the replica keeps the source's retention), owned by that account.
 */
export const evidenceReplicationSchema = z.object({
  destinationBucketArn: z.string().regex(ARN_BUCKET, 'must be an S3 bucket ARN (arn:aws:s3:::<name>)'),
  /** The log-archive account that owns the destination bucket: replicas become its objects. */
  destinationAccount: z.string().regex(/^\d{12}$/, 'must be a 12-digit AWS account id'),
  /** The log-archive account's key in the destination bucket's region: replicas are encrypted with it. */
  destinationKmsKeyArn: z.string().regex(ARN_KMS_KEY, 'must be a KMS key ARN (arn:aws:kms:...:key/<id>)'),
});

/**
 * AWS Backup of the table (preferences and suppressions never expire; point-in-time recovery keeps 35 days only): a
 * daily backup into a vault of the stack's own under a compliance-mode lock, copied to a vault of another account.
 */
export const backupSchema = z.object({
  /** How long each daily recovery point is kept, and the lock's minimum and maximum: nobody keeps one shorter or longer. */
  retentionDays: days(7, 36_500, 35),
  /** The vault of another account (a backup or log-archive account) every recovery point is copied to. */
  copyToVaultArn: z
    .string()
    .regex(ARN_BACKUP_VAULT, 'must be a backup vault ARN (arn:aws:backup:...:backup-vault:<name>)'),
  /** How long the copy is kept there; default: as long as the original. */
  copyRetentionDays: days(7, 36_500).optional(),
  /**
   * The vault lock's grace period: for these days the lock can still be removed, then it is permanent (compliance
   * mode; AWS Backup's minimum is 3).
   */
  lockChangeableDays: days(3, 36_500, 3),
});

/**
 * A VPC of the stack's own for the functions that hold customers' contact points: isolated subnets (no internet
 * gateway, no NAT: no route to the internet) and a VPC endpoint for each AWS service the functions call.
 */
export const networkSchema = z.object({
  /** The VPC's address range, /16 to /24, one /26 subnet per availability zone. */
  cidr: z.string().regex(CIDR, 'must be an IPv4 CIDR block (10.80.0.0/24)'),
  /** Two or more zones of the cluster's region (ap-northeast-1a, …): the functions and endpoints span them. */
  availabilityZones: z.array(z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d[a-z]$/, 'must be zone names (ap-northeast-1a)')),
  /**
   * The PrivateLink endpoint service of a Confluent schema registry (from Confluent's private networking): ingest
   * reaches the registry through it. Required with a Confluent registry: there is no other way out of the VPC.
   */
  schemaRegistryEndpointService: z
    .string()
    .regex(ENDPOINT_SERVICE, 'must be a PrivateLink endpoint service name (com.amazonaws.vpce.<region>.vpce-svc-…)')
    .optional(),
});

/** One principal allowed to assume the evidence-reader or the break-glass role (lib/named-principals.ts). */
export const rolePatternSchema = z
  .string()
  .regex(
    ROLE_PATTERN,
    "must be IAM role ARNs (arn:aws:iam::<account>:role/<path/><name>), a name ending in * at most (an IAM Identity Center role's suffix)",
  );

/** The security account's event bus every protection report is also sent to (lib/protection-watch.ts). */
export const eventBusArnSchema = z
  .string()
  .regex(ARN_EVENT_BUS, 'must be an EventBridge event bus ARN (arn:aws:events:<region>:<account>:event-bus/<name>)');

export type EvidenceReplication = z.infer<typeof evidenceReplicationSchema>;
export type BackupSettings = z.infer<typeof backupSchema>;
export type NetworkSettings = z.infer<typeof networkSchema>;

/** The parts of the protection settings a schema alone cannot judge: the cluster's account and region decide them. */
export function protectionProblems(
  s: {
    evidenceReplication?: EvidenceReplication | undefined;
    backup?: BackupSettings | undefined;
    vpc?: NetworkSettings | undefined;
    schemaRegistry?: { kind: string } | undefined;
    securityEventBusArn?: string | undefined;
  },
  account: string,
  region: string,
): [key: string, message: string][] {
  const problems: [string, string][] = [];
  const r = s.evidenceReplication;
  if (r !== undefined) {
    // The point is a copy an attacker in this account cannot reach: another account, never this one.
    if (r.destinationAccount === account) {
      problems.push([
        'evidenceReplication.destinationAccount',
        `must be another account than the stack's (${account})`,
      ]);
    }
    const key = ARN_KMS_KEY.exec(r.destinationKmsKeyArn);
    if (key !== null && key[2] !== r.destinationAccount) {
      problems.push([
        'evidenceReplication.destinationKmsKeyArn',
        `must be a key of the destination account (${r.destinationAccount})`,
      ]);
    }
  }
  const bus = ARN_EVENT_BUS.exec(s.securityEventBusArn ?? '');
  // A copy the account's own administrators can delete is no copy: the reports leave for another account.
  if (bus !== null && bus[2] === account) {
    problems.push(['securityEventBusArn', `must be a bus of another account than the stack's (${account})`]);
  }
  const vault = s.backup === undefined ? null : ARN_BACKUP_VAULT.exec(s.backup.copyToVaultArn);
  if (vault !== null && vault[2] === account) {
    problems.push(['backup.copyToVaultArn', `must be a vault of another account than the stack's (${account})`]);
  }
  const v = s.vpc;
  if (v !== undefined) {
    const [, a = '0', b = '0', c = '0', d = '0', bits = '0'] = CIDR.exec(v.cidr) ?? [];
    if ([a, b, c, d].some((o) => Number(o) > 255) || Number(bits) < 16 || Number(bits) > 24) {
      problems.push(['vpc.cidr', 'must be an IPv4 block from /16 to /24']);
    } else if (Number(bits) + Math.ceil(Math.log2(v.availabilityZones.length)) > 26) {
      problems.push(['vpc.cidr', `is too small for a /26 subnet in each of ${v.availabilityZones.length} zones`]);
    }
    if (v.availabilityZones.length < 2 || new Set(v.availabilityZones).size !== v.availabilityZones.length) {
      problems.push([
        'vpc.availabilityZones',
        'must name two or more different zones: one zone down must not stop sending',
      ]);
    }
    for (const zone of v.availabilityZones) {
      if (!zone.startsWith(region) || zone.length !== region.length + 1) {
        problems.push(['vpc.availabilityZones', `${zone} is not a zone of the cluster's region (${region})`]);
      }
    }
    const service = v.schemaRegistryEndpointService;
    if (s.schemaRegistry?.kind === 'confluent' && service === undefined) {
      problems.push([
        'vpc.schemaRegistryEndpointService',
        "is required with a Confluent registry: the VPC has no route to the internet, so ingest reaches the registry only through the registry's PrivateLink service",
      ]);
    }
    if (service !== undefined && s.schemaRegistry?.kind !== 'confluent') {
      problems.push(['vpc.schemaRegistryEndpointService', 'is only used with a Confluent schemaRegistry']);
    }
    const serviceRegion = service === undefined ? undefined : ENDPOINT_SERVICE.exec(service)?.[1];
    if (serviceRegion !== undefined && serviceRegion !== region) {
      problems.push(['vpc.schemaRegistryEndpointService', `must be in the cluster's region (${region})`]);
    }
  }
  return problems;
}
