/**
 * How a banking service publishes one event to notifier's MSK topic with IAM authentication: kafkajs as the Kafka
 * client, the AWS MSK IAM SASL signer for the OAUTHBEARER token. The event contract is in README.md beside this file.
 * Not run by the tests (there is no broker here); it type-checks and lints with the repo.
 *
 *   npx tsx examples/producer/produce.ts --brokers <bootstrap:9098,...> --region ap-northeast-1 \
 *     --topic banking.transfers [--event event.json]
 *
 * The brokers are the cluster's IAM bootstrap string (`aws kafka get-bootstrap-brokers`, BootstrapBrokerStringSaslIam,
 * port 9098). Credentials come from the default AWS chain; the role needs kafka-cluster:Connect on the cluster and
 * kafka-cluster:DescribeTopic and kafka-cluster:WriteData on the topic.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateAuthToken } from 'aws-msk-iam-sasl-signer-js';
import { Kafka, logLevel } from 'kafkajs';

const { values } = parseArgs({
  options: {
    brokers: { type: 'string' },
    region: { type: 'string' },
    topic: { type: 'string', default: 'banking.transfers' },
    event: { type: 'string' },
  },
});
if (values.brokers === undefined || values.region === undefined) {
  console.error(
    'usage: produce.ts --brokers <host:9098,...> --region <region> [--topic <topic>] [--event <file.json>]',
  );
  process.exit(64);
}
const region = values.region;

/** The producer's business id for the transfer: stable across its own resends, never the Kafka offset. */
const event =
  values.event === undefined
    ? {
        eventId: `trf-${randomUUID()}`,
        type: 'TransferCompleted',
        occurredAt: new Date().toISOString(),
        recipient: { userId: 'u-42', locale: 'en', email: 'success@simulator.amazonses.com' },
        data: { transferId: 't-99', amount: '125.50', currency: 'USD', counterpartyName: 'Jordan Lee' },
        channels: ['EMAIL'],
      }
    : (JSON.parse(readFileSync(values.event, 'utf8')) as { eventId: string });

const kafka = new Kafka({
  clientId: 'notifier-example-producer',
  brokers: values.brokers.split(','),
  ssl: true,
  sasl: {
    mechanism: 'oauthbearer',
    // A fresh signed token (valid 15 minutes) at each (re)authentication, from the default credential chain.
    oauthBearerProvider: async () => ({ value: (await generateAuthToken({ region })).token }),
  },
  logLevel: logLevel.WARN,
});

// Idempotent: a retry inside the producer cannot write the record twice. A resend by the service itself still
// writes a new record at a new offset, which notifier recognises by its eventId.
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();
try {
  const [sent] = await producer.send({
    topic: values.topic,
    acks: -1,
    // Keyed by eventId: a resend lands on the same partition, after the original.
    messages: [{ key: event.eventId, value: JSON.stringify(event), headers: { 'content-type': 'application/json' } }],
  });
  console.log(
    `published ${event.eventId} to ${values.topic} partition ${sent?.partition} offset ${sent?.baseOffset ?? sent?.offset}`,
  );
} finally {
  await producer.disconnect();
}
