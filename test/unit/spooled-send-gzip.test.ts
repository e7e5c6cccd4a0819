/**
 * A one-time code's send keeps its redacted record's bytes, gzipped, on its SENT write for a rebuild
 * (record-evidence.ts sentWriteOf) — unless the record is already in the spool, where it is never rebuilt. The gzip is
 * then not made at all: it would be synchronous work in the send slot, thrown away (review 53-lead N2).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESClient } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { InvocationEvidence } from '../../functions/dispatch/record-evidence.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { uniformRetention } from '../../functions/domain/evidence.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import type { SpooledRecord } from '../../functions/stores/evidence-spool.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { documentClientMock, providerMocks } from '../support/aws-mocks.ts';
import {
  claimedNotification,
  DISPATCH_BUDGET,
  DISPATCH_NOW,
  dispatchDeps,
  pendingNotification,
} from '../support/dispatch-deps.ts';
import { MemoryGaps, MemoryIndex, MemoryIntents, MemoryStore } from '../support/evidence-memory.ts';

/** Every gzip dispatch makes, seen: the real one, counted. */
const gzipped = vi.hoisted(() => ({ inputs: [] as Buffer[] }));
vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof import('node:zlib')>();
  return {
    ...zlib,
    gzipSync: (input: Buffer, options?: import('node:zlib').ZlibOptions) => {
      gzipped.inputs.push(Buffer.from(input));
      return zlib.gzipSync(input, options);
    },
  };
});

const ddb = documentClientMock();
const { ses, sns } = providerMocks();
const NOW = DISPATCH_NOW;
const sender = new ProviderSender(new SESClient({}), new SNSClient({}), {
  senderEmail: 'notifications@example.com',
  configurationSet: 'notifier',
});

/** One OTP SMS sent by an invocation of few records, whose spool put lands (true) or is refused (false). */
async function sendOtp(putLands: boolean) {
  const n = { ...pendingNotification('SMS'), secrets: { code: '493021' } } as NotificationItem;
  let calls = 0;
  ddb.on(UpdateCommand).callsFake(() => (calls++ === 0 ? { Attributes: claimedNotification(n) } : {}));
  sns.on(PublishCommand).resolves({ MessageId: 'sns-otp' });
  const puts: SpooledRecord[] = [];
  const batch = new InvocationEvidence(
    {
      store: new MemoryStore(),
      gaps: new MemoryGaps(),
      intents: new MemoryIntents(),
      index: { index: new MemoryIndex(), retentionDays: 3650 },
      spool: {
        put: async (records) => {
          if (!putLands)
            throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
          puts.push(...records);
        },
      },
    },
    // The put answers at once either way: its wait is set far past it, so no timer decides which path is taken.
    { now: NOW, id: 'inv0000000000000054', dueMs: NOW + 90_000, spoolBelow: 25, putFirstMs: 60_000 },
  );
  const deps = dispatchDeps(
    {
      store: new DynamoNotificationStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), 'notifier-test'),
      sender,
      random: () => 0.5,
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
      evidence: { retention: uniformRetention(3650), requestOf: (m, msg) => sender.request(m, msg), batch },
    },
    NOW,
  );
  expect(await batch.open([n.notificationId])).toEqual({ kept: false, spooling: true });
  const result = await dispatchNotification({ key: { pk: n.pk, sk: n.sk }, retryAt: undefined }, deps, DISPATCH_BUDGET);
  expect(result).toMatchObject({ kind: 'sent', acceptance: 'recorded' });
  const sentWrite = ddb
    .commandCalls(UpdateCommand)
    .find((c) => c.args[0].input.ExpressionAttributeValues?.[':to'] === 'SENT')?.args[0]
    .input.ExpressionAttributeValues;
  return { puts, record: sentWrite?.[':evidenceRecord'] as Uint8Array | undefined };
}

beforeEach(() => {
  ddb.reset();
  ses.reset();
  sns.reset();
  gzipped.inputs.length = 0;
});

describe("a secret's send gzips its record for the SENT write only when the record is not in the spool", () => {
  it('spooled: nothing is gzipped in the send slot, and the SENT write keeps no record bytes', async () => {
    const { puts, record } = await sendOtp(true);
    expect(puts).toHaveLength(1);
    expect(record).toBeUndefined();
    expect(gzipped.inputs).toEqual([]);
  });

  it('not spooled (the put was refused): the record is gzipped once, and those bytes are what the SENT write keeps', async () => {
    const { puts, record } = await sendOtp(false);
    expect(puts).toEqual([]);
    expect(gzipped.inputs).toHaveLength(1);
    expect(record).toBeInstanceOf(Uint8Array);
    const { gunzipSync } = await vi.importActual<typeof import('node:zlib')>('node:zlib');
    expect(Buffer.from(gunzipSync(record as Uint8Array))).toEqual(gzipped.inputs[0]);
  });
});
