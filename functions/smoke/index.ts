/**
 * The smoke producer (deployed in the MSK cluster's subnets when the settings name them): invoked by
 * `npm run smoke`, it writes one smoke event to the topic through the brokers, so the check goes through MSK and the
 * event source mapping exactly as a bank's event does. Thin: the use case, a log line.
 */
import { randomBytes } from 'node:crypto';
import { loadSmokeProducerConfig } from '../commons/config.ts';
import { logger } from '../commons/powertools.ts';
import { KafkaRecordProducer, kafkaConfig } from './kafka-producer.ts';
import { produceSmokeEvent, type SmokeProduced } from './produce-smoke-event.ts';

const config = loadSmokeProducerConfig();
const producer = new KafkaRecordProducer(kafkaConfig(config.brokers, config.region));

export const handler = async (request: unknown): Promise<SmokeProduced> => {
  const produced = await produceSmokeEvent(request, {
    producer,
    topic: config.topic,
    allowed: config.contacts,
    now: Date.now,
    nonce: () => randomBytes(4).toString('hex'),
  });
  logger.info('smoke event produced', { ...produced });
  return produced;
};
