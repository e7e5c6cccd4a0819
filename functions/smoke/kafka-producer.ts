/**
 * Kafka adapter of the smoke producer: kafkajs over TLS with IAM authentication (SASL OAUTHBEARER, a token signed by
 * the AWS MSK IAM SASL signer from the function's own credentials — no network call to sign), idempotent, all
 * in-sync replicas acknowledging. One connection per invocation: the producer runs a few times a deploy.
 */
import { generateAuthToken } from 'aws-msk-iam-sasl-signer-js';
import { Kafka, type KafkaConfig, logLevel, Partitioners } from 'kafkajs';
import { UnexpectedResponseError } from '../commons/errors.ts';

/** Where a record landed: what tools/ops/smoke.ts needs to find its quarantine item, should it be quarantined. */
export interface Produced {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

export interface RecordProducer {
  produce(topic: string, key: string, value: string): Promise<Produced>;
}

export function kafkaConfig(
  brokers: readonly string[],
  region: string,
  sign: (region: string) => Promise<{ token: string }> = (r) => generateAuthToken({ region: r }),
): KafkaConfig {
  return {
    clientId: 'notifier-smoke-producer',
    brokers: [...brokers],
    ssl: true,
    sasl: {
      mechanism: 'oauthbearer',
      // A fresh token (valid 15 minutes) at each (re)authentication.
      oauthBearerProvider: async () => ({ value: (await sign(region)).token }),
    },
    connectionTimeout: 5_000,
    requestTimeout: 10_000,
    logLevel: logLevel.WARN,
  };
}

export class KafkaRecordProducer implements RecordProducer {
  constructor(private readonly config: KafkaConfig) {}

  async produce(topic: string, key: string, value: string): Promise<Produced> {
    const producer = new Kafka(this.config).producer({
      idempotent: true,
      maxInFlightRequests: 1,
      // Keyed records go where the Java client puts them (murmur2), as a bank's own producers' would.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    try {
      const [sent] = await producer.send({
        topic,
        acks: -1,
        messages: [{ key, value, headers: { 'content-type': 'application/json' } }],
      });
      const offset = Number(sent?.baseOffset ?? sent?.offset);
      if (sent === undefined || !Number.isSafeInteger(offset)) {
        throw new UnexpectedResponseError(`Kafka acknowledged the smoke record without an offset`);
      }
      return { topic: sent.topicName, partition: sent.partition, offset };
    } finally {
      await producer.disconnect();
    }
  }
}
