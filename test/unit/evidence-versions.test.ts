/**
 * The readers of the evidence store see versions: a record superseded by a later PUT on its key, or hidden behind a
 * delete marker, is still found as first written and flagged — for `ops evidence`, `export` (a customer's pointers)
 * and `audit`. The bucket policy denies both (test/infra/evidence.test.ts); this is what an operator sees if either
 * ever happened anyway. S3 is the real SDK client behind aws-sdk-client-mock.
 */
import { GetObjectCommand, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  evidenceBody,
  evidenceKey,
  sendEvidence,
  smsRequest,
  uniformRetention,
  userPointerKey,
} from '../../functions/domain/evidence.ts';
import { evidenceOf, userEvidence } from '../../functions/operator/index.ts';
import { EvidenceAuditLog } from '../../functions/stores/audit-log.ts';
import { S3EvidenceStore } from '../../functions/stores/evidence-store.ts';
import { evidenceText } from '../../tools/ops/text/evidence.ts';
import { auditText } from '../../tools/ops/text/lists.ts';

const s3 = mockClient(S3Client);
const store = () => new S3EvidenceStore(new S3Client({}), 'evidence-bucket', 'GOVERNANCE');
const at = (s: string) => new Date(`2026-12-0${s}T00:00:00Z`);

const facts = {
  notificationId: 'e-1#SMS',
  eventId: 'e-1',
  channel: 'SMS' as const,
  userId: 'u-1',
  template: 'TransferCompleted',
  locale: 'en-US',
  attempt: 1,
};
const record = (text: string) =>
  sendEvidence(facts, smsRequest('+14255550100', text), 'msg-1', at('1').getTime(), uniformRetention(2557));
const ORIGINAL = record('Example Bank: your transfer is complete.');
const FORGED = record('Example Bank: nothing happened.');
const KEY = evidenceKey(ORIGINAL);
/** GetObject's body, as far as the store reads it. */
const body = (bytes: Uint8Array) => ({ Body: { transformToByteArray: async () => new Uint8Array(bytes) } }) as never;

/** S3 answering with these versions (listed newest first, as S3 does) and these bodies per version id. */
function bucket(
  versions: { key: string; id: string; at: Date; latest: boolean }[],
  markers: { key: string; id: string; latest: boolean }[],
  bodies: Record<string, Uint8Array>,
) {
  s3.on(ListObjectVersionsCommand).resolves({
    Versions: versions.map((v) => ({ Key: v.key, VersionId: v.id, LastModified: v.at, IsLatest: v.latest })),
    DeleteMarkers: markers.map((m) => ({ Key: m.key, VersionId: m.id, IsLatest: m.latest })),
    IsTruncated: false,
  });
  for (const [id, bytes] of Object.entries(bodies)) {
    s3.on(GetObjectCommand, { VersionId: id }).resolves(body(bytes));
  }
}

beforeEach(() => s3.reset());

describe('the evidence readers see versions', () => {
  it('a record overwritten by a later PUT is shown as first written, and the later version is named', async () => {
    bucket(
      [
        { key: KEY, id: 'v2', at: at('3'), latest: true },
        { key: KEY, id: 'v1', at: at('1'), latest: false },
      ],
      [],
      { v1: evidenceBody(ORIGINAL), v2: evidenceBody(FORGED) },
    );
    const [proof] = await evidenceOf(store(), 'e-1');
    expect(proof?.send.request).toMatchObject({ text: 'Example Bank: your transfer is complete.' });
    expect(proof?.warnings).toEqual([
      expect.stringMatching(/written again after its first version: 1 later version\(s\) \(v2 at 2026-12-03/),
    ]);
    expect(evidenceText(proof ? [proof] : [])).toContain('WARNING:');
    // Read by version id, never "the current one".
    expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input.VersionId)).toEqual(['v1']);
  });

  it('a record behind a delete marker is still found, and flagged as hidden', async () => {
    bucket([{ key: KEY, id: 'v1', at: at('1'), latest: false }], [{ key: KEY, id: 'dm', latest: true }], {
      v1: evidenceBody(ORIGINAL),
    });
    const [proof] = await evidenceOf(store(), 'e-1');
    expect(proof?.send.providerMessageId).toBe('msg-1');
    expect(proof?.warnings).toEqual([expect.stringMatching(/hidden behind a delete marker/)]);
  });

  it('a record written once and current carries no warning', async () => {
    bucket([{ key: KEY, id: 'v1', at: at('1'), latest: true }], [], { v1: evidenceBody(ORIGINAL) });
    const [proof] = await evidenceOf(store(), 'e-1');
    expect(proof).not.toHaveProperty('warnings');
  });

  it("export: a customer's hidden pointer still leads to the send, flagged", async () => {
    const pointer = userPointerKey('u-1', KEY);
    s3.on(ListObjectVersionsCommand, { Prefix: 'users/u-1/' }).resolves({
      Versions: [{ Key: pointer, VersionId: 'p1', LastModified: at('1'), IsLatest: false }],
      DeleteMarkers: [{ Key: pointer, VersionId: 'pdm', IsLatest: true }],
    });
    s3.on(ListObjectVersionsCommand, { Prefix: 'sends/e-1/SMS/msg-1.json' }).resolves({
      Versions: [{ Key: KEY, VersionId: 'v1', LastModified: at('1'), IsLatest: true }],
    });
    s3.on(GetObjectCommand, { VersionId: 'p1' }).resolves(body(Buffer.from(KEY)));
    s3.on(GetObjectCommand, { VersionId: 'v1' }).resolves(body(evidenceBody(ORIGINAL)));
    const proofs = await userEvidence(store(), 'u-1');
    expect(proofs.map((p) => p.key)).toEqual([KEY]);
    expect(proofs[0]?.warnings).toEqual([expect.stringMatching(/^users\/u-1\/.* is hidden behind a delete marker/)]);
  });

  it('audit: a superseded audit record is listed as first written, flagged; pages of versions are followed', async () => {
    const audit = (reason: string) =>
      Buffer.from(
        JSON.stringify({
          kind: 'AUDIT',
          action: 'ERASE',
          by: 'ana',
          at: '2026-12-01T00:00:00.000Z',
          reason,
          target: 'u-1',
          details: {},
        }),
      );
    s3.on(ListObjectVersionsCommand)
      .resolvesOnce({
        Versions: [
          { Key: 'audit/2026-12-01T00:00:00.000Z-a.json', VersionId: 'a2', LastModified: at('2'), IsLatest: true },
        ],
        IsTruncated: true,
        NextKeyMarker: 'audit/2026-12-01T00:00:00.000Z-a.json',
        NextVersionIdMarker: 'a2',
      })
      .resolvesOnce({
        Versions: [
          { Key: 'audit/2026-12-01T00:00:00.000Z-a.json', VersionId: 'a1', LastModified: at('1'), IsLatest: false },
        ],
        IsTruncated: false,
      });
    s3.on(GetObjectCommand, { VersionId: 'a1' }).resolves(body(audit('court order 12/2026')));
    s3.on(GetObjectCommand, { VersionId: 'a2' }).resolves(body(audit('nothing to see')));
    const [entry] = await new EvidenceAuditLog(store()).list();
    expect(entry?.reason).toBe('court order 12/2026');
    expect(entry?.warnings).toEqual([
      expect.stringMatching(/1 later version\(s\) \(a2/),
      // Handwritten here, as a record from before records were sealed: flagged too.
      expect.stringMatching(/not sealed/),
    ]);
    expect(auditText(entry ? [entry] : [])).toMatch(/WARNING: audit\/.*written again/);
    expect(s3.commandCalls(ListObjectVersionsCommand)[1]?.args[0].input).toMatchObject({
      KeyMarker: 'audit/2026-12-01T00:00:00.000Z-a.json',
      VersionIdMarker: 'a2',
    });
  });
});
