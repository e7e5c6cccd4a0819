/**
 * The stack's outputs, by name: the stack creates exactly these, and the operator tools in ops/ read them (README
 * "Operations" refers to them by these names). Plain data: ops/ must not load the CDK.
 */
export const STACK_OUTPUTS = {
  Stage: 'The stage this stack serves',
  TableName: 'The table: inbox, notification and quarantine items',
  IngestFunctionName: 'The ingest function',
  IngestLogGroupName: "The ingest function's log group",
  DispatchFunctionName: 'The dispatch function',
  DispatchLogGroupName: "The dispatch function's log group",
  SweeperFunctionName: 'The sweeper function',
  SweeperLogGroupName: "The sweeper function's log group",
  MskClusterArn: 'The MSK cluster ingest reads from',
  IngestKafkaMappingId: 'The MSK event source mapping (its UUID)',
  FailedIngestBatchesBucketName: 'Batches the MSK mapping gave up on',
  DispatchOnFailureQueueUrl: 'Stream records dispatch gave up on',
  AlarmTopicArn: 'Pages: the alarms of what fails for many (wire the on-call pager here)',
  TicketTopicArn: 'Tickets: the alarms of what concerns one customer or one producer (wire the ticket queue here)',
  FeedbackFunctionName: 'The SES delivery feedback function',
  FeedbackLogGroupName: "The feedback function's log group",
  FeedbackDeadLetterQueueUrl: 'SES feedback events that could not be recorded',
  SesConfigurationSetName: 'The SES configuration set every email is sent through',
  EvidenceBucketName: 'The evidence store: the exact message of every send and the reports on it, under Object Lock',
  EvidenceReaderRoleArn:
    'The only role that may decrypt evidence: ops evidence, customer, export and audit read with it',
  EvidenceBreakGlassRoleArn:
    'Break glass only: may disable the evidence key or change its protections; every use is reported',
  DashboardUrl: 'The CloudWatch dashboard',
  OperatorApiUrl:
    'The operator API (IAM authorization on every route): every operator action of npm run ops, done by the operator function and audited with the caller AWS verified',
} as const;

/** Outputs only some stacks have: the smoke producer exists when the settings name the cluster's subnets. */
export const OPTIONAL_STACK_OUTPUTS = {
  SmokeProducerFunctionName: 'Writes the smoke event to the topic from inside the cluster VPC (npm run smoke)',
  AuditSealKeyArn: 'The KMS key every audit record is sealed with: ops audit verifies each record with it',
  OperatorFunctionName:
    'The operator function: invoked by the operator API only (npm run smoke checks that a trail records any other invoke)',
  EvidenceIndexTableName:
    "The evidence index's own table: where each send's record is, by customer and by event (read by ops customer, export and evidence)",
  ConsoleApiFunctionName:
    "The support console's API function: invoked by its API only (npm run smoke checks that a trail records any other invoke)",
  EvidenceSpoolTableName:
    "The evidence spool's own table: a low-rate minute's records before the sweeper rolls them into one object (read by ops evidence meanwhile)",
} as const;

/**
 * Outputs of each stack of a stage in two regions (lib/regional.ts): what `ops promote`, `demote` and `reconcile` read
 * to find both regions from either stack (the other's may be the one that is lost).
 */
export const REGION_STACK_OUTPUTS = {
  RegionName: "This stack's region",
  RegionKind: 'primary or recovery: which side of the stage this stack is',
  FenceTableName: "This region's fence table",
  FenceShards: 'How many FENCE#<n> items each fence table has (dispatch reads one before every send)',
  SweepShards:
    "How many partitions the table's sweep index has per key: the region commands list unfinished items in each",
  PeerRegionName: "The other region's name",
  PeerStackName: "The other region's stack",
  PeerFenceTableName: "The other region's fence table",
} as const;
export type RegionStackOutputName = keyof typeof REGION_STACK_OUTPUTS;

export type StackOutputName = keyof typeof STACK_OUTPUTS;
export type OptionalStackOutputName = keyof typeof OPTIONAL_STACK_OUTPUTS;
export type StackOutputs = Readonly<Record<StackOutputName, string>> &
  Readonly<Partial<Record<OptionalStackOutputName, string>>>;
export const STACK_OUTPUT_NAMES = Object.keys(STACK_OUTPUTS) as StackOutputName[];
export const OPTIONAL_STACK_OUTPUT_NAMES = Object.keys(OPTIONAL_STACK_OUTPUTS) as OptionalStackOutputName[];
