/**
 * The smoke producer (functions/smoke/): it writes the smoke event and nothing else to the topic, keyed by its
 * eventId, valid by the event contract; its Kafka client speaks TLS with IAM (OAUTHBEARER, a token signed per
 * authentication for the function's region).
 */
import { describe, expect, it } from 'vitest';
import { decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { SES_SIMULATOR_SUCCESS } from '../../functions/domain/smoke.ts';
import { kafkaConfig, type RecordProducer } from '../../functions/smoke/kafka-producer.ts';
import { produceSmokeEvent, SmokeRequestError } from '../../functions/smoke/produce-smoke-event.ts';

function recording() {
  const records: { topic: string; key: string; value: string }[] = [];
  const producer: RecordProducer = {
    produce: async (topic, key, value) => {
      records.push({ topic, key, value });
      return { topic, partition: 2, offset: 41 };
    },
  };
  const deps = {
    producer,
    topic: 'banking.transfers',
    // The settings' smokeContacts: the bank's own test phone and device.
    allowed: [
      '+819012345678',
      'arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/notifier/0b1c',
      'QA@bank.example',
    ],
    now: () => Date.parse('2026-12-02T01:00:00Z'),
    nonce: () => 'a1b2',
  };
  return { records, deps };
}

describe('the smoke producer', () => {
  it('writes one smoke event, keyed by its eventId, that the event contract accepts; answers where it went', async () => {
    const { records, deps } = recording();
    const r = await produceSmokeEvent({ phone: '+819012345678' }, deps);
    expect(r).toEqual({ eventId: 'smoke-20261202T010000Z-a1b2', topic: 'banking.transfers', partition: 2, offset: 41 });
    expect(records).toHaveLength(1);
    expect(records[0]?.key).toBe(r.eventId);
    const decoded = decodeRecordValue(Buffer.from(records[0]?.value ?? '').toString('base64'), 65_536);
    expect(decoded.ok).toBe(true);
    if (!isTransfer(decoded)) return;
    expect(decoded.event).toMatchObject({
      eventId: r.eventId,
      channels: ['EMAIL', 'SMS'],
      recipient: { userId: 'notifier-smoke', email: SES_SIMULATOR_SUCCESS, phoneNumber: '+819012345678' },
    });
  });

  it('writes nothing but the smoke event: unknown fields and bad contacts are refused before Kafka is touched', async () => {
    const { records, deps } = recording();
    await expect(produceSmokeEvent({ eventId: 'trf-1' }, deps)).rejects.toThrow(SmokeRequestError);
    await expect(produceSmokeEvent({ phone: '090-1234-5678' }, deps)).rejects.toThrow(/phone: must be an E.164/);
    await expect(produceSmokeEvent({ email: 'nobody' }, deps)).rejects.toThrow(/email/);
    await expect(produceSmokeEvent({ pushEndpointArn: 'arn:aws:sns:x:1:topic' }, deps)).rejects.toThrow(
      /pushEndpointArn/,
    );
    await expect(produceSmokeEvent('{"email":"a@b.c"}', deps)).rejects.toThrow(SmokeRequestError);
    expect(records).toEqual([]);
    // No request at all: the SES mailbox simulator.
    await produceSmokeEvent(undefined, deps);
    expect(JSON.parse(records[0]?.value ?? '{}').recipient.email).toBe(SES_SIMULATOR_SUCCESS);
  });

  it("refuses a contact point that is neither the SES mailbox simulator nor in the settings' smokeContacts, by name, before Kafka is touched", async () => {
    const { records, deps } = recording();
    await expect(produceSmokeEvent({ phone: '+819099999999' }, deps)).rejects.toThrow(
      /^phone \+819099999999: not a smoke contact\. .*SES mailbox simulator.*smokeContacts/,
    );
    await expect(produceSmokeEvent({ email: 'victim@customer.example' }, deps)).rejects.toThrow(
      /email victim@customer\.example: not a smoke contact/,
    );
    await expect(
      produceSmokeEvent(
        { pushEndpointArn: 'arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/notifier/ffff' },
        deps,
      ),
    ).rejects.toThrow(/pushEndpointArn arn:.*ffff: not a smoke contact/);
    // A listed contact with one that is not: nothing is written.
    await expect(produceSmokeEvent({ email: 'qa@bank.example', phone: '+15550100' }, deps)).rejects.toThrow(
      /^phone \+15550100: not a smoke contact/,
    );
    expect(records).toEqual([]);
  });

  it('sends to every SES mailbox simulator scenario, labelled or not, and to the listed contacts (e-mail without regard to case)', async () => {
    const { records, deps } = recording();
    for (const email of [
      'success@simulator.amazonses.com',
      'bounce+smoke-1@simulator.amazonses.com',
      'OOTO@Simulator.AmazonSES.com',
      'complaint@simulator.amazonses.com',
      'suppressionlist@simulator.amazonses.com',
      'qa@bank.example',
    ]) {
      await produceSmokeEvent({ email }, deps);
    }
    await produceSmokeEvent(
      {
        phone: '+819012345678',
        pushEndpointArn: 'arn:aws:sns:ap-northeast-1:123456789012:endpoint/APNS/notifier/0b1c',
      },
      deps,
    );
    expect(records).toHaveLength(7);
    // Not the simulator: another mailbox at a look-alike domain, or a scenario SES does not have.
    for (const email of ['success@simulator.amazonses.com.evil.example', 'anyone@simulator.amazonses.com']) {
      await expect(produceSmokeEvent({ email }, deps), email).rejects.toThrow(/not a smoke contact/);
    }
  });

  it('connects over TLS with IAM: a token signed for the region at each authentication', async () => {
    const signed: string[] = [];
    const config = kafkaConfig(['b-1.x:9098', 'b-2.x:9098'], 'ap-northeast-1', async (region) => {
      signed.push(region);
      return { token: `token-${signed.length}` };
    });
    expect(config).toMatchObject({
      brokers: ['b-1.x:9098', 'b-2.x:9098'],
      ssl: true,
      sasl: { mechanism: 'oauthbearer' },
    });
    const sasl = config.sasl as { oauthBearerProvider: () => Promise<{ value: string }> };
    expect(await sasl.oauthBearerProvider()).toEqual({ value: 'token-1' });
    expect(await sasl.oauthBearerProvider()).toEqual({ value: 'token-2' });
    expect(signed).toEqual(['ap-northeast-1', 'ap-northeast-1']);
  });
});
