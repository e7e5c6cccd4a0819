/**
 * AWS list prices the bench and the capacity model turn units into money with — named parameters, so a reader can
 * put in their own region's. Values: US East (N. Virginia), on-demand, as published on the AWS pricing pages in
 * 2025 (DynamoDB on-demand after the November 2024 price reduction; Lambda on arm64). They were not re-checked live
 * (the build machine has no web access): check https://aws.amazon.com/dynamodb/pricing/on-demand/,
 * https://aws.amazon.com/lambda/pricing/, https://aws.amazon.com/ses/pricing/, https://aws.amazon.com/sns/pricing/, https://aws.amazon.com/s3/pricing/,
 * https://aws.amazon.com/cloudwatch/pricing/, https://aws.amazon.com/xray/pricing/ and https://aws.amazon.com/sqs/pricing/.
 */
export interface Prices {
  readonly region: string;
  readonly asOf: string;
  readonly dynamodbWriteRequestUnitPerMillion: number;
  readonly dynamodbReadRequestUnitPerMillion: number;
  readonly dynamodbStorageGbMonth: number;
  readonly lambdaGbSecondArm: number;
  readonly lambdaRequestPerMillion: number;
  readonly sesEmailPerThousand: number;
  readonly snsMobilePushPerMillion: number;
  /** SMS is priced per destination country; this is a US-destination base price, carrier fees excluded. */
  readonly snsSmsPerMessage: number;
  /** Point-in-time recovery: per GB-month of the table (and its indexes' size is not included: the table's). */
  readonly dynamodbPitrGbMonth: number;
  /** S3 Standard (https://aws.amazon.com/s3/pricing/): PUT/COPY/POST/LIST, and GET, per 1,000 requests. */
  readonly s3PutPerThousand: number;
  readonly s3GetPerThousand: number;
  readonly s3StandardGbMonth: number;
  /** CloudWatch Logs (https://aws.amazon.com/cloudwatch/pricing/): ingested per GB (standard class), stored per GB-month. */
  readonly logsIngestPerGb: number;
  readonly logsStorageGbMonth: number;
  /** X-Ray (https://aws.amazon.com/xray/pricing/): per million traces recorded (beyond the free tier). */
  readonly xrayTracePerMillion: number;
  /** SQS standard queue (https://aws.amazon.com/sqs/pricing/): per million requests (64 KB chunks). */
  readonly sqsRequestPerMillion: number;
}

export const US_EAST_1_PRICES: Prices = {
  region: 'us-east-1',
  asOf: '2025 (AWS pricing pages; not re-checked live)',
  dynamodbWriteRequestUnitPerMillion: 0.625,
  dynamodbReadRequestUnitPerMillion: 0.125,
  dynamodbStorageGbMonth: 0.25,
  lambdaGbSecondArm: 0.0000133334,
  lambdaRequestPerMillion: 0.2,
  sesEmailPerThousand: 0.1,
  snsMobilePushPerMillion: 0.5,
  snsSmsPerMessage: 0.00581,
  dynamodbPitrGbMonth: 0.2,
  s3PutPerThousand: 0.005,
  s3GetPerThousand: 0.0004,
  s3StandardGbMonth: 0.023,
  logsIngestPerGb: 0.5,
  logsStorageGbMonth: 0.03,
  xrayTracePerMillion: 5,
  sqsRequestPerMillion: 0.4,
};

/** The money of a given amount of work. */
export interface Work {
  readonly wru: number;
  readonly rru: number;
  readonly lambdaGbSeconds: number;
  readonly lambdaRequests: number;
  readonly emails: number;
  readonly pushes: number;
  readonly sms: number;
}

export function costOf(w: Work, p: Prices = US_EAST_1_PRICES) {
  const dynamodb =
    (w.wru * p.dynamodbWriteRequestUnitPerMillion) / 1e6 + (w.rru * p.dynamodbReadRequestUnitPerMillion) / 1e6;
  const lambda = w.lambdaGbSeconds * p.lambdaGbSecondArm + (w.lambdaRequests * p.lambdaRequestPerMillion) / 1e6;
  const ses = (w.emails * p.sesEmailPerThousand) / 1e3;
  const sns = (w.pushes * p.snsMobilePushPerMillion) / 1e6 + w.sms * p.snsSmsPerMessage;
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    dynamodb: round(dynamodb),
    lambda: round(lambda),
    ses: round(ses),
    sns: round(sns),
    /** What notifier's own design decides: DynamoDB and Lambda. The providers' prices are the same for any design. */
    notifierOwn: round(dynamodb + lambda),
    total: round(dynamodb + lambda + ses + sns),
  };
}
