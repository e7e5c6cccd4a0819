/**
 * Evidence of every send (docs/evidence-and-privacy.md): what the provider received, byte for byte, written after the
 * acceptance is recorded; a store that fails or hangs never delays nor repeats the send — the record becomes a gap
 * with its exact bytes, which the sweeper's pass writes later; the stores write once.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { EVIDENCE_ENVIRONMENT } from '../../functions/contracts/environment.ts';
import { type DispatchDeps, dispatchNotification } from '../../functions/dispatch/dispatch-notification.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import {
  evidencePrefixOf,
  parseEvidence,
  type SendEvidence,
  sendKey,
  uniformRetention,
  userPointerKey,
} from '../../functions/domain/evidence.ts';
import { readFeedback } from '../../functions/domain/feedback.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import { recordFeedback } from '../../functions/feedback/record-feedback.ts';
import type { EvidenceGap, EvidenceGaps } from '../../functions/stores/evidence-gaps.ts';
import { type EvidenceStore, FileEvidenceStore, S3EvidenceStore } from '../../functions/stores/evidence-store.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { fillEvidenceGaps } from '../../functions/sweeper/fill-evidence.ts';
import { documentClientMock, providerMocks } from '../support/aws-mocks.ts';
import {
  claimedNotification,
  DISPATCH_BUDGET,
  DISPATCH_NOW,
  dispatchDeps,
  pendingNotification,
} from '../support/dispatch-deps.ts';
import { sesEvent } from '../support/ses-events.ts';

const ddb = documentClientMock();
const { ses, sns } = providerMocks();
const s3 = mockClient(S3Client);
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const NOW = DISPATCH_NOW;
const pending = pendingNotification;
const sending = (n: NotificationItem) => claimedNotification(n);

/** An in-memory store with S3's write-once answer; `fail` makes every put reject, `hang` never settle until aborted. */
class MemoryStore implements EvidenceStore {
  readonly objects = new Map<string, { body: Buffer; retainUntil: Date }>();
  constructor(private readonly mode: 'ok' | 'fail' | 'hang' = 'ok') {}
  async put(key: string, body: Uint8Array, retainUntil: Date, signal?: AbortSignal) {
    if (this.mode === 'fail') throw Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable' });
    if (this.mode === 'hang') {
      await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
    }
    if (this.objects.has(key)) return 'alreadyThere' as const;
    this.objects.set(key, { body: Buffer.from(body), retainUntil });
    return 'written' as const;
  }
  async list(prefix: string) {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
  async get(key: string) {
    return this.objects.get(key)?.body;
  }
  async history(prefix: string) {
    return (await this.list(prefix)).map((key) => ({
      key,
      versions: [{ versionId: undefined, at: undefined }],
      hidden: false,
    }));
  }
}
class MemoryGaps implements EvidenceGaps {
  readonly gaps = new Map<string, EvidenceGap>();
  constructor(private readonly failing = false) {}
  async add(gap: EvidenceGap) {
    if (this.failing) throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    this.gaps.set(gap.key, gap);
  }
  async list(limit: number) {
    return [...this.gaps.values()].slice(0, limit);
  }
  async close(key: string) {
    this.gaps.delete(key);
  }
}

const sender = new ProviderSender(new SESClient({}), new SNSClient({}), {
  senderEmail: 'notifications@example.com',
  configurationSet: 'notifier',
});
const deps = (store: EvidenceStore, gaps: EvidenceGaps = new MemoryGaps(), timeoutMs = 2_000): DispatchDeps =>
  dispatchDeps(
    {
      store: new DynamoNotificationStore(doc, 'notifier-test'),
      sender,
      random: () => 0.5,
      policies: { EMAIL: 'AT_MOST_ONCE', PUSH: 'AT_MOST_ONCE', SMS: 'AT_MOST_ONCE' },
      evidence: {
        store,
        gaps,
        retention: uniformRetention(3650),
        requestOf: (n, m) => sender.request(n, m),
        timeoutMs,
      },
    },
    NOW,
  );
const send = (n: NotificationItem, d: DispatchDeps) =>
  dispatchNotification({ key: { pk: n.pk, sk: n.sk }, retryAt: undefined }, d, DISPATCH_BUDGET);
const stored = (store: MemoryStore, key: string) =>
  parseEvidence(store.objects.get(key)?.body ?? Buffer.alloc(0)) as SendEvidence;
const marks = () => ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input.ExpressionAttributeValues?.[':to']);

beforeEach(() => {
  ddb.reset();
  ses.reset();
  sns.reset();
  s3.reset();
});

describe('the evidence of a send is what the provider received', () => {
  it('email: sender, recipient, subject, text and HTML exactly as in SendEmail, the message id, when, kept for the retention', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-1' });
    const store = new MemoryStore();
    const r = await send(n, deps(store));
    expect(r).toMatchObject({ kind: 'sent', evidence: { outcome: 'written' } });
    const key = sendKey({ eventId: n.eventId, channel: 'EMAIL', providerMessageId: 'ses-1' });
    const e = stored(store, key);
    const input = ses.commandCalls(SendEmailCommand)[0]!.args[0].input;
    expect(e.request).toMatchObject({
      channel: 'EMAIL',
      source: input.Source,
      to: input.Destination?.ToAddresses,
      subject: input.Message?.Subject?.Data,
      text: input.Message?.Body?.Text?.Data,
      html: input.Message?.Body?.Html?.Data,
      configurationSet: input.ConfigurationSetName,
      tags: input.Tags,
    });
    expect(e).toMatchObject({
      notificationId: n.notificationId,
      providerMessageId: 'ses-1',
      acceptedAt: new Date(NOW).toISOString(),
      retainUntil: new Date(NOW + 3650 * 86_400_000).toISOString(),
      attempt: 1,
      noticeType: 'TransferCompleted',
    });
    expect(store.objects.get(key)?.retainUntil.toISOString()).toBe(e.retainUntil);
  });

  it('SMS: the text as published and its encoding (Japanese is UCS-2); push: the exact JSON payload', async () => {
    for (const channel of ['SMS', 'PUSH'] as const) {
      ddb.reset();
      sns.reset();
      const n = pending(channel);
      ddb
        .on(UpdateCommand)
        .resolvesOnce({ Attributes: sending(n) })
        .resolves({});
      sns.on(PublishCommand).resolves({ MessageId: `sns-${channel}` });
      const store = new MemoryStore();
      await send(n, deps(store));
      const e = stored(store, sendKey({ eventId: n.eventId, channel, providerMessageId: `sns-${channel}` }));
      const input = sns.commandCalls(PublishCommand)[0]!.args[0].input;
      if (channel === 'SMS') {
        expect(e.request).toMatchObject({ phoneNumber: input.PhoneNumber, text: input.Message, encoding: 'UCS-2' });
      } else {
        expect(e.request).toMatchObject({ targetArn: input.TargetArn, payload: input.Message });
      }
    }
  });
});

describe('evidence never delays nor repeats a send', () => {
  it('a failing store: SENT stands, one send, the exact bytes kept as a gap; the later pass writes them and closes it', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-2' });
    const gaps = new MemoryGaps();
    const r = await send(n, deps(new MemoryStore('fail'), gaps));
    expect(r).toMatchObject({
      kind: 'sent',
      acceptance: 'recorded',
      evidence: { outcome: 'gap', error: 'ServiceUnavailable' },
    });
    expect(marks()).toEqual([undefined, 'SENT']);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
    const key = sendKey({ eventId: n.eventId, channel: 'EMAIL', providerMessageId: 'ses-2' });
    // The record and the customer's pointer to it, each as it would have been written.
    const pointer = userPointerKey(n.userId, key);
    expect([...gaps.gaps.keys()]).toEqual([key, pointer]);

    const store = new MemoryStore();
    const filled = await fillEvidenceGaps({ gaps, store, now: () => NOW, deadline: NOW + 1, limit: 10 });
    expect(filled).toEqual({ filled: 2, open: 0, errors: [] });
    expect(gaps.gaps.size).toBe(0);
    expect(stored(store, key).request).toMatchObject({ to: ['hanako@example.com'] });
    expect(String(store.objects.get(pointer)?.body)).toBe(key);
    // A pass against a store still failing leaves the gap open for the next run, and says so.
    const again = new MemoryGaps();
    await again.add({ key, body: Buffer.from('{}'), retainUntil: new Date(NOW), since: 'x' });
    expect(
      await fillEvidenceGaps({
        gaps: again,
        store: new MemoryStore('fail'),
        now: () => NOW,
        deadline: NOW + 1,
        limit: 10,
      }),
    ).toMatchObject({ filled: 0, open: 1 });
  });

  it('a store that hangs is given up at the evidence timeout: the record goes to the gaps', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-3' });
    const gaps = new MemoryGaps();
    const started = Date.now();
    const r = await send(n, deps(new MemoryStore('hang'), gaps, 50));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r).toMatchObject({ kind: 'sent', evidence: { outcome: 'gap' } });
    expect(gaps.gaps.size).toBe(2);
  });

  it('store and table both refusing: the evidence is lost (counted, alarmed), the send stays SENT and is not repeated', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-4' });
    const r = await send(n, deps(new MemoryStore('fail'), new MemoryGaps(true)));
    expect(r).toMatchObject({ kind: 'sent', evidence: { outcome: 'lost' } });
    expect(marks()).toEqual([undefined, 'SENT']);
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
  });

  it('a send the provider refused leaves no evidence (nothing was received)', async () => {
    const n = pending('EMAIL');
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: sending(n) })
      .resolves({});
    ses
      .on(SendEmailCommand)
      .rejects(Object.assign(new Error('bad'), { name: 'InvalidParameterValue', $metadata: { httpStatusCode: 400 } }));
    const store = new MemoryStore();
    const gaps = new MemoryGaps();
    expect(await send(n, deps(store, gaps))).toMatchObject({ kind: 'failed' });
    expect(store.objects.size + gaps.gaps.size).toBe(0);
  });
});

describe('the provider reports are appended to the send', () => {
  it('each report is a record of its own under the send, written once; a redelivered report changes nothing', async () => {
    const store = new MemoryStore();
    const read = readFeedback(sesEvent('Bounce', { notificationId: 'trf-2026-000123#EMAIL', to: 'gone@example.com' }));
    const deps = {
      store: {
        findByMessageId: async () => undefined,
        recordDelivery: async () => 'recorded' as const,
        suppressAddress: async () => 'suppressed' as const,
        recipientOf: async () => 'gone@example.com',
      },
      now: () => NOW,
      sleep: async () => undefined,
      evidence: { store, retentionDays: 3650 },
    };
    await recordFeedback([read], deps);
    await recordFeedback([read], deps);
    const messageId = read.ok ? read.feedback.messageId : '';
    const keys = await store.list(evidencePrefixOf('trf-2026-000123#EMAIL'));
    expect(keys).toHaveLength(1);
    expect(keys[0]).toContain(`${encodeURIComponent(messageId)}.feedback/`);
    expect(parseEvidence(store.objects.get(keys[0] as string)?.body as Buffer)).toMatchObject({
      kind: 'FEEDBACK',
      status: 'BOUNCED',
      bounceType: 'Permanent',
      providerMessageId: messageId,
    });
  });
});

describe('keys and stores', () => {
  it('an eventId holding "/", "#" or ".." cannot reach another event\'s prefix', () => {
    expect(evidencePrefixOf('a/b')).toBe('sends/a%2Fb/');
    expect(evidencePrefixOf('a#EMAIL')).toBe('sends/a/EMAIL/');
    expect(evidencePrefixOf('x#y')).toBe('sends/x%23y/');
    // "." and ".." are no folder names of ours: the local store could not write them.
    expect(sendKey({ eventId: '..', channel: 'SMS', providerMessageId: '../m' })).toBe('sends/%2E%2E/SMS/..%2Fm.json');
  });

  it("a long userId in another script is named by its hash: every evidence key stays under S3's 1,024 bytes", () => {
    const key = userPointerKey(
      '顧'.repeat(128),
      sendKey({ eventId: 'e'.repeat(128), channel: 'EMAIL', providerMessageId: 'm'.repeat(80) }),
    );
    expect(key).toMatch(/^users\/sha256-[0-9a-f]{64}\//);
    expect(Buffer.byteLength(key)).toBeLessThan(1024);
    expect(userPointerKey('u-42', 'sends/e/EMAIL/m.json')).toBe('users/u-42/e/EMAIL/m.json');
  });

  it('the local folder store writes once, lists by prefix, returns the same bytes, and refuses a key leaving the folder', async () => {
    const store = new FileEvidenceStore(mkdtempSync(join(tmpdir(), 'evidence-')));
    const bytes = Buffer.from('{"é":"😀"}\n');
    expect(await store.put('sends/e1/EMAIL/m1.json', bytes, new Date())).toBe('written');
    expect(await store.put('sends/e1/EMAIL/m1.json', Buffer.from('other'), new Date())).toBe('alreadyThere');
    await store.put('sends/e10/EMAIL/m2.json', bytes, new Date());
    expect(await store.list('sends/e1/')).toEqual(['sends/e1/EMAIL/m1.json']);
    expect(Buffer.from((await store.get('sends/e1/EMAIL/m1.json')) as Uint8Array).equals(bytes)).toBe(true);
    expect(await store.get('sends/none.json')).toBeUndefined();
    await expect(store.put('sends/../../x', bytes, new Date())).rejects.toThrow(/bad evidence key/);
  });

  it('S3: written once with Object Lock, its retain-until, a SHA-256 checksum and KMS; an existing key (412) is already there', async () => {
    const store = new S3EvidenceStore(new S3Client({}), 'evidence-bucket', 'COMPLIANCE');
    s3.on(PutObjectCommand)
      .resolvesOnce({})
      .rejects(
        Object.assign(new Error('At least one of the pre-conditions you specified did not hold'), {
          name: 'PreconditionFailed',
          $metadata: { httpStatusCode: 412 },
        }),
      );
    const until = new Date(NOW + EVIDENCE_ENVIRONMENT.EVIDENCE_RETENTION_DAYS.default * 86_400_000);
    expect(await store.put('sends/e/EMAIL/m.json', Buffer.from('x'), until)).toBe('written');
    expect(await store.put('sends/e/EMAIL/m.json', Buffer.from('x'), until)).toBe('alreadyThere');
    expect(s3.commandCalls(PutObjectCommand)[0]!.args[0].input).toMatchObject({
      Bucket: 'evidence-bucket',
      IfNoneMatch: '*',
      ObjectLockMode: 'COMPLIANCE',
      ObjectLockRetainUntilDate: until,
      ChecksumAlgorithm: 'SHA256',
      ChecksumSHA256: 'LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=',
      ServerSideEncryption: 'aws:kms',
    });
    s3.on(PutObjectCommand).rejects(
      Object.assign(new Error('denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }),
    );
    await expect(store.put('sends/e/EMAIL/m2.json', Buffer.from('x'), until)).rejects.toThrow('denied');
  });
});
