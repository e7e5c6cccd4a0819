/**
 * The provider's reports on sends, as evidence (docs/evidence-and-privacy.md): a feedback invocation writes all its
 * reports as one batch, named by an item per send batch it holds reports on; a reader finds a send's reports by those
 * items; a batch the store refused waits as a gap the sweeper fills, one whose item the table refused fails its
 * feedback for a retry. And the gap filler, which checks a batch's records one by one.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { evidencePrefixOf, parseEvidence, type SendEvidence } from '../../functions/domain/evidence.ts';
import { batchName, batchObjectKey, encodeBatch } from '../../functions/domain/evidence-batch.ts';
import { readFeedback } from '../../functions/domain/feedback.ts';
import { recordFeedback } from '../../functions/feedback/record-feedback.ts';
import { readSends } from '../../functions/stores/evidence-reader.ts';
import { fillEvidenceGaps } from '../../functions/sweeper/fill-evidence.ts';
import { DISPATCH_NOW, pendingNotification } from '../support/dispatch-deps.ts';
import { MemoryGaps, MemoryIndex, MemoryReports, MemoryStore } from '../support/evidence-memory.ts';
import { sesEvent } from '../support/ses-events.ts';

const NOW = DISPATCH_NOW;
const pending = pendingNotification;

/** A send batch of one record in the store, as dispatch wrote it. */
const storeSendBatch = (store: MemoryStore, name: string, record: SendEvidence) =>
  store.put(
    batchObjectKey(name),
    encodeBatch(name, 'dispatch', [{ record, bytes: Buffer.from(JSON.stringify(record)) }]),
    new Date(NOW),
  );

describe('the provider reports are appended to the send', () => {
  const reportDeps = (store: MemoryStore, sendBatch: string | undefined, reports = new MemoryReports()) => ({
    store: {
      findByMessageId: async () => undefined,
      recordDelivery: async () => ({ kind: 'recorded' as const, ...(sendBatch === undefined ? {} : { sendBatch }) }),
      suppressAddress: async () => 'suppressed' as const,
      recipientOf: async () => 'gone@example.com',
    },
    now: () => NOW,
    sleep: async () => undefined,
    evidence: {
      store,
      gaps: new MemoryGaps(),
      reports,
      retentionDays: 3650,
      newId: (() => {
        let i = 0;
        return () => `rep${String(i++).padStart(10, '0')}`;
      })(),
      timeoutMs: 1_000,
    },
  });

  it("each report is a record of its own in the invocation's feedback batch, which its send's batch names; a redelivered report changes nothing", async () => {
    const store = new MemoryStore();
    const sendBatch = batchName('dispatch', NOW, 'sendbatch0000001');
    // The send, as dispatch stored it.
    const send = pending('EMAIL');
    const record = {
      evidenceVersion: 1,
      kind: 'SEND',
      notificationId: 'trf-2026-000123#EMAIL',
      eventId: 'trf-2026-000123',
      channel: 'EMAIL',
      userId: send.userId,
      noticeType: send.template,
      locale: send.locale,
      attempt: 1,
      acceptedAt: new Date(NOW).toISOString(),
      retainUntil: new Date(NOW + 86_400_000).toISOString(),
    } as const;
    const read = readFeedback(sesEvent('Bounce', { notificationId: 'trf-2026-000123#EMAIL', to: 'gone@example.com' }));
    const messageId = read.ok ? read.feedback.messageId : '';
    const sendRecord = { ...record, providerMessageId: messageId, request: {} } as unknown as SendEvidence;
    await storeSendBatch(store, sendBatch, sendRecord);
    const reports = new MemoryReports();
    const deps = reportDeps(store, sendBatch, reports);
    await recordFeedback([read], deps);
    await recordFeedback([read], deps);
    const named = await reports.of(sendBatch);
    expect(named).toHaveLength(2);
    for (const name of named) expect(name).toMatch(/^batches\/\d{4}-\d{2}-\d{2}\/\d{6}-feedback-rep\d{10}$/);
    const [proof] = await readSends(store, [{ batch: sendBatch, notificationId: 'trf-2026-000123#EMAIL' }], {
      locator: { reportsOf: (b) => reports.of(b) },
    });
    expect(proof?.feedback).toHaveLength(1);
    expect(proof?.feedback[0]).toMatchObject({
      kind: 'FEEDBACK',
      status: 'BOUNCED',
      bounceType: 'Permanent',
      providerMessageId: messageId,
    });
  });

  it("a feedback batch the store refused is kept as a gap, still named by its send batch: shown as not in the store yet, then found once the sweeper wrote it; a send batch's item the table refused fails the feedback for a retry", async () => {
    const sendBatch = batchName('dispatch', NOW, 'sendbatch0000002');
    const read = readFeedback(sesEvent('Delivery', { notificationId: 'trf-2026-000124#EMAIL', to: 'a@example.com' }));
    const messageId = read.ok ? read.feedback.messageId : '';
    const send = pending('EMAIL');
    const sendRecord = {
      evidenceVersion: 1,
      kind: 'SEND',
      notificationId: 'trf-2026-000124#EMAIL',
      eventId: 'trf-2026-000124',
      channel: 'EMAIL',
      userId: send.userId,
      providerMessageId: messageId,
      acceptedAt: new Date(NOW).toISOString(),
      retainUntil: new Date(NOW + 86_400_000).toISOString(),
      request: {},
    } as unknown as SendEvidence;
    const store = new MemoryStore();
    await storeSendBatch(store, sendBatch, sendRecord);
    const reports = new MemoryReports();
    const deps = reportDeps(store, sendBatch, reports);
    store.mode = 'fail';
    await recordFeedback([read], deps);
    const [named] = await reports.of(sendBatch);
    const gaps = deps.evidence.gaps;
    expect([...gaps.gaps.keys()]).toEqual([batchObjectKey(named as string)]);
    store.mode = 'ok';
    const ref = [{ batch: sendBatch, notificationId: 'trf-2026-000124#EMAIL' }];
    const locator = {
      reportsOf: (b: string) => reports.of(b),
      stateOf: async (b: string) => ({ ...(gaps.gaps.has(batchObjectKey(b)) ? { gap: { since: 'then' } } : {}) }),
    };
    const [waiting] = await readSends(store, ref, { locator });
    expect(waiting?.feedback).toEqual([]);
    expect(waiting?.warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^reports in ${named} are not in the store yet: its bytes wait in the table as an evidence gap`),
      ),
    ]);
    expect(await fillEvidenceGaps({ gaps, store, now: () => NOW, deadline: NOW + 60_000, limit: 10 })).toMatchObject({
      filled: 1,
    });
    const [found] = await readSends(store, ref, { locator });
    expect(found?.feedback.map((f) => f.status)).toEqual(['DELIVERED']);
    expect(found?.warnings).toBeUndefined();

    // The table refuses the send batch's item: the report would be unfindable, so its feedback fails and is retried.
    await expect(recordFeedback([read], reportDeps(store, sendBatch, new MemoryReports(true)))).rejects.toMatchObject({
      name: 'EvidenceLost',
    });
  });

  it('a report on a send from before batches is written once under that send, as it was then', async () => {
    const store = new MemoryStore();
    const read = readFeedback(sesEvent('Bounce', { notificationId: 'trf-2026-000123#EMAIL', to: 'gone@example.com' }));
    const deps = reportDeps(store, undefined);
    await recordFeedback([read], deps);
    await recordFeedback([read], deps);
    const messageId = read.ok ? read.feedback.messageId : '';
    const keys = await store.list(evidencePrefixOf('trf-2026-000123#EMAIL'));
    expect(keys).toHaveLength(1);
    expect(keys[0]).toContain(`${encodeURIComponent(messageId)}.feedback/`);
    expect(parseEvidence(store.objects.get(keys[0] as string)?.body as Buffer)).toMatchObject({
      kind: 'FEEDBACK',
      status: 'BOUNCED',
      providerMessageId: messageId,
    });
  });
});

describe('the gap filler', () => {
  it('a gap whose batch holds a record that does not match its hash is written and closed once, its other sends indexed, the damaged record said', async () => {
    const name = batchName('dispatch', NOW, 'damaged000000001');
    const sendOf = (userId: string, notificationId: string) =>
      ({
        evidenceVersion: 1,
        kind: 'SEND',
        notificationId,
        eventId: notificationId.split('#')[0],
        channel: 'SMS',
        userId,
        providerMessageId: `m-${userId}`,
        acceptedAt: new Date(NOW).toISOString(),
        retainUntil: new Date(NOW + 86_400_000).toISOString(),
        request: {},
      }) as unknown as SendEvidence;
    const records = [sendOf('good', 'g-1#SMS'), sendOf('bad', 'b-1#SMS')].map((record) => ({
      record,
      bytes: Buffer.from(JSON.stringify(record)),
    }));
    const plain = gunzipSync(encodeBatch(name, 'dispatch', records));
    // A bit of the last record flipped.
    plain.writeUInt8((plain.at(-5) ?? 0) ^ 0x01, plain.length - 5);
    const gaps = new MemoryGaps();
    await gaps.add({ key: batchObjectKey(name), body: gzipSync(plain), retainUntil: new Date(NOW), since: 'then' });
    const store = new MemoryStore();
    const index = new MemoryIndex();
    const fill = () =>
      fillEvidenceGaps({
        gaps,
        store,
        index: { index, retentionDays: 3650 },
        now: () => NOW,
        deadline: NOW + 60_000,
        limit: 10,
      });
    const filled = await fill();
    expect(filled).toMatchObject({ filled: 1, open: 0, errors: [] });
    expect(filled.damaged).toEqual([`${batchObjectKey(name)}: record 1 (b-1#SMS): its bytes do not match its hash`]);
    expect((await index.sendsOf('good')).map((s) => s.notificationId)).toEqual(['g-1#SMS']);
    expect(gaps.gaps.size).toBe(0);
    expect(await fill()).toMatchObject({ filled: 0, damaged: [] });
  });
});
