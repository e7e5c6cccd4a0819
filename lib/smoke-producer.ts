/**
 * The smoke producer: a small function in the MSK cluster's subnets that writes one smoke event to the topic, so
 * `npm run smoke` checks the whole path a bank's event takes — brokers, topic, the event source mapping, ingest,
 * dispatch, the providers and their feedback — from any operator's machine that may invoke it (docs/design-choices.md
 * "The smoke check goes through MSK"). Deployed when the settings name the subnets and security groups from which the
 * brokers are reached; it authenticates with IAM, as the mapping does, and may only write to the one topic.
 */
import { Duration } from 'aws-cdk-lib';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { SmokeEnvironment } from '../functions/contracts/environment.ts';
import { awsCall, sdkCall } from './aws-calls.ts';
import { acknowledgeSmokeProducerFindings } from './nag-acknowledgements.ts';
import { NotifierFunction } from './notifier-function.ts';

export interface SmokeProducerProps {
  readonly metricNamespace: string;
  readonly clusterArn: string;
  readonly topic: string;
  /** The cluster-side IAM ARNs (settings.ts kafkaResourceArns). */
  readonly kafka: { readonly cluster: string; readonly topic: string };
  readonly subnetIds: readonly string[];
  readonly securityGroupIds: readonly string[];
  /** The settings' smokeContacts: beside the SES mailbox simulator, the only contact points it sends to. */
  readonly contacts: readonly string[];
}

export class SmokeProducer extends Construct {
  readonly function: NotifierFunction;

  constructor(scope: Construct, id: string, props: SmokeProducerProps) {
    super(scope, id);
    // The brokers' IAM endpoint, read at deploy (the function reaches the brokers, not necessarily the MSK API).
    const brokers = awsCall(
      this,
      'BootstrapBrokers',
      sdkCall('Kafka', 'getBootstrapBrokers', { ClusterArn: props.clusterArn }, `${props.clusterArn}#brokers`, {
        outputPaths: ['BootstrapBrokerStringSaslIam'],
      }),
      [new PolicyStatement({ actions: ['kafka:GetBootstrapBrokers'], resources: [props.clusterArn] })],
    );
    const environment: SmokeEnvironment = {
      TOPIC: props.topic,
      BOOTSTRAP_BROKERS: brokers.getResponseField('BootstrapBrokerStringSaslIam'),
      ...(props.contacts.length === 0 ? {} : { SMOKE_CONTACTS: props.contacts.join(',') }),
    };
    this.function = new NotifierFunction(this, 'Function', {
      entry: 'smoke/index.ts',
      description: 'notifier: writes one smoke event to the topic through MSK (npm run smoke)',
      metricNamespace: props.metricNamespace,
      timeout: Duration.seconds(30),
      memorySize: 256,
      environment,
    });
    const fn = this.function;
    // In the cluster's subnets, with security groups the brokers accept (no IVpc needed: ids as given).
    fn.placeInSubnets(props.subnetIds, props.securityGroupIds);
    // IAM access control of MSK: connect, and write (idempotently) to this one topic.
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['kafka-cluster:Connect', 'kafka-cluster:WriteDataIdempotently'],
        resources: [props.kafka.cluster],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:WriteData'],
        resources: [props.kafka.topic],
      }),
    );
    acknowledgeSmokeProducerFindings(fn.role as Role, fn);
  }
}
