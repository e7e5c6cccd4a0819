/**
 * What an operator needs, by name (docs/operations.md): the stack's outputs, each described as lib/stack-outputs.ts
 * lists them for the operator tools (which must not load the CDK, so the names live there and the CfnOutputs here).
 */
import { CfnOutput, type Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { DeliveryFeedback } from './delivery-feedback.ts';
import type { EvidenceStore } from './evidence-store.ts';
import type { NotifierFunction } from './notifier-function.ts';
import type { Observability } from './observability.ts';
import { OPTIONAL_STACK_OUTPUTS, STACK_OUTPUTS, type StackOutputName } from './stack-outputs.ts';

export interface NotifierOutputsProps {
  readonly stage: string;
  readonly mskClusterArn: string;
  readonly table: ITable;
  readonly ingest: NotifierFunction;
  readonly ingestMappingId: string;
  readonly failedBatches: Bucket;
  readonly dispatch: NotifierFunction;
  readonly dispatchFailures: Queue;
  readonly sweeper: NotifierFunction;
  readonly feedback: DeliveryFeedback;
  readonly evidence: EvidenceStore;
  readonly observability: Observability;
  readonly smoke: NotifierFunction | undefined;
  readonly operatorApi: RestApi;
  readonly operator: NotifierFunction;
}

export function addOutputs(stack: Stack, p: NotifierOutputsProps): void {
  const output = (id: StackOutputName, value: string) =>
    new CfnOutput(stack, id, { value, description: STACK_OUTPUTS[id] });
  output('Stage', p.stage);
  output('TableName', p.table.tableName);
  output('IngestFunctionName', p.ingest.functionName);
  output('IngestLogGroupName', p.ingest.logGroup.logGroupName);
  output('DispatchFunctionName', p.dispatch.functionName);
  output('DispatchLogGroupName', p.dispatch.logGroup.logGroupName);
  output('SweeperFunctionName', p.sweeper.functionName);
  output('SweeperLogGroupName', p.sweeper.logGroup.logGroupName);
  output('MskClusterArn', p.mskClusterArn);
  output('IngestKafkaMappingId', p.ingestMappingId);
  output('FailedIngestBatchesBucketName', p.failedBatches.bucketName);
  output('DispatchOnFailureQueueUrl', p.dispatchFailures.queueUrl);
  output('AlarmTopicArn', p.observability.topic.topicArn);
  output('TicketTopicArn', p.observability.ticketTopic.topicArn);
  output('FeedbackFunctionName', p.feedback.function.functionName);
  output('FeedbackLogGroupName', p.feedback.function.logGroup.logGroupName);
  output('FeedbackDeadLetterQueueUrl', p.feedback.deadLetters.queueUrl);
  output('SesConfigurationSetName', p.feedback.configurationSetName);
  output('EvidenceBucketName', p.evidence.bucket.bucketName);
  output('EvidenceReaderRoleArn', p.evidence.readerRole.roleArn);
  output('EvidenceBreakGlassRoleArn', p.evidence.breakGlassRole.roleArn);
  output('OperatorApiUrl', p.operatorApi.url);
  new CfnOutput(stack, 'AuditSealKeyArn', {
    value: p.evidence.auditSealKey.keyArn,
    description: OPTIONAL_STACK_OUTPUTS.AuditSealKeyArn,
  });
  new CfnOutput(stack, 'OperatorFunctionName', {
    value: p.operator.functionName,
    description: OPTIONAL_STACK_OUTPUTS.OperatorFunctionName,
  });
  if (p.smoke !== undefined) {
    new CfnOutput(stack, 'SmokeProducerFunctionName', {
      value: p.smoke.functionName,
      description: OPTIONAL_STACK_OUTPUTS.SmokeProducerFunctionName,
    });
  }
  output(
    'DashboardUrl',
    `https://${stack.region}.console.aws.amazon.com/cloudwatch/home?region=${stack.region}#dashboards/dashboard/${p.observability.dashboardName}`,
  );
}
