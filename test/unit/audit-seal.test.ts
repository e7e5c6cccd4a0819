/**
 * The seal of audit records (functions/stores/audit-seal.ts): every record and outcome the audit log writes carries a
 * MAC of its content under the stack's key; `ops audit` (the log's list) flags a record nobody sealed, one changed
 * after it was sealed and one sealed with another key, and an approval never relies on a record that does not verify.
 * The KMS seal asks KMS (GenerateMac, VerifyMac; a MAC that does not verify is KMS's KMSInvalidMacException).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenerateMacCommand, KMSClient, KMSInvalidMacException, VerifyMacCommand } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { auditOutcomeKey } from '../../functions/domain/audit.ts';
import { EvidenceAuditLog } from '../../functions/stores/audit-log.ts';
import { auditPlace, KmsAuditSeal, LocalAuditSeal } from '../../functions/stores/audit-seal.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';

const NOW = Date.parse('2026-12-02T05:00:00Z');
const ALICE = { principal: 'alice', verifiedBy: 'LOCAL_USER' as const, person: 'alice' };
const entry = {
  action: 'ERASE' as const,
  step: 'PROPOSE' as const,
  by: ALICE,
  reason: 'r',
  target: 'u-1',
  details: {},
};
const bytes = (doc: unknown) => Buffer.from(JSON.stringify(doc), 'utf8');

describe('sealed audit records', () => {
  it('a record written by the log verifies; one put straight into the store, one edited and one sealed with another key are flagged, and read() refuses to rely on them', async () => {
    const store = new FileEvidenceStore(mkdtempSync(join(tmpdir(), 'seal-')));
    const seal = new LocalAuditSeal(Buffer.from('the stack key'), 'stack-key');
    const log = new EvidenceAuditLog(store, seal);
    const honest = await log.record(entry, NOW);
    await log.recordOutcome(honest.key, { result: 'DONE', details: {} }, NOW + 1);
    const written = JSON.parse(Buffer.from((await store.get(honest.key)) as Uint8Array).toString('utf8'));
    // Someone the bucket let write: no seal; a copied seal over changed content; their own key.
    await store.put('audit/2026-12-02T05:00:01.000Z-forged.json', bytes({ ...written, seal: undefined }), undefined);
    await store.put('audit/2026-12-02T05:00:02.000Z-edited.json', bytes({ ...written, reason: 'other' }), undefined);
    const ownKey = 'audit/2026-12-02T05:00:03.000Z-ownkey.json';
    const own = await new LocalAuditSeal(Buffer.from('my key'), 'my-key').sealed(
      { ...written, seal: undefined },
      auditPlace(ownKey, false),
    );
    await store.put(ownKey, bytes(own), undefined);

    const listed = await log.list();
    expect(listed).toHaveLength(4);
    expect(listed.find((r) => r.warnings === undefined)).toMatchObject({ reason: 'r', outcome: { result: 'DONE' } });
    // Each forged copy keeps the honest record's time: listed in the order written.
    expect(listed.flatMap((r) => r.warnings ?? []).sort()).toEqual([
      expect.stringContaining('forged.json: not sealed'),
      expect.stringContaining('edited.json: its seal does not match its content'),
      expect.stringContaining('ownkey.json: sealed with another key (my-key)'),
    ]);
    expect(await log.read(honest.key)).toMatchObject({ reason: 'r', by: ALICE });
    expect(await log.read('audit/2026-12-02T05:00:02.000Z-edited.json')).toBeUndefined();
    expect(await log.read('audit/2026-12-02T05:00:01.000Z-forged.json')).toBeUndefined();
  });

  it("with KMS: the MAC is KMS's (HMAC_SHA_256, the stack's key), and a MAC KMS refuses reads as not matching", async () => {
    const kms = new KMSClient({});
    const mock = mockClient(kms);
    const KEY = 'arn:aws:kms:ap-northeast-1:123456789012:key/0a1b2c3d-0000-4000-8000-000000000000';
    mock.on(GenerateMacCommand).resolves({ Mac: new Uint8Array([1, 2, 3]) });
    const seal = new KmsAuditSeal(kms, KEY);
    const place = auditPlace('audit/2026-12-02T05:00:00.000Z-a1.json', false);
    const sealed = await seal.sealed({ kind: 'AUDIT', reason: 'r' }, place);
    expect(sealed.seal).toEqual({ keyId: KEY, mac: 'AQID' });
    const input = mock.commandCalls(GenerateMacCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ KeyId: KEY, MacAlgorithm: 'HMAC_SHA_256' });
    expect(Buffer.from(input?.Message as Uint8Array).toString('utf8')).toContain(place);
    mock.on(VerifyMacCommand).resolves({ MacValid: true });
    expect(await seal.broken(sealed, place)).toBeUndefined();
    mock.on(VerifyMacCommand).rejects(new KMSInvalidMacException({ message: 'invalid', $metadata: {} }));
    expect(await seal.broken(sealed, place)).toContain('does not match');
  });

  it('a sealed record copied whole to another key, and a sealed outcome copied to answer another record, do not verify there', async () => {
    const store = new FileEvidenceStore(mkdtempSync(join(tmpdir(), 'seal-')));
    const log = new EvidenceAuditLog(store, new LocalAuditSeal(Buffer.from('the stack key'), 'stack-key'));
    const refused = await log.record(entry, NOW);
    await log.recordOutcome(refused.key, { result: 'REFUSED', details: {} }, NOW + 1);
    const done = await log.record({ ...entry, reason: 'another' }, NOW + 2);
    await log.recordOutcome(done.key, { result: 'DONE', details: {} }, NOW + 3);
    // Someone who may put objects: the DONE outcome now also "answers" a record with none, and a record copied.
    const third = await log.record({ ...entry, reason: 'third' }, NOW + 4);
    await store.put(auditOutcomeKey(third.key), (await store.get(auditOutcomeKey(done.key))) as Uint8Array, undefined);
    const moved = 'audit/2026-12-02T05:00:09.000Z-moved000.json';
    await store.put(moved, (await store.get(done.key)) as Uint8Array, undefined);

    const listed = await log.list();
    expect(listed.find((r) => r.reason === 'third')?.warnings).toEqual([
      expect.stringContaining(`its seal does not match its content or its place (outcome of ${third.key})`),
    ]);
    expect(listed.flatMap((r) => r.warnings ?? []).filter((w) => w.startsWith(`${moved}:`))).toEqual([
      expect.stringContaining(`(record ${moved})`),
    ]);
    expect(listed.find((r) => r.reason === 'r')?.warnings).toBeUndefined();
    expect(await log.read(moved)).toBeUndefined();
    expect(await log.read(done.key)).toMatchObject({ reason: 'another' });
    // read() carries a record's own sealed outcome (an approval compares an old proposal's expiry with it), never
    // one copied from another record's.
    expect((await log.read(done.key))?.outcome).toMatchObject({ kind: 'AUDIT_OUTCOME', result: 'DONE', details: {} });
    expect((await log.read(done.key))?.outcome).not.toHaveProperty('seal');
    expect(await log.read(third.key)).toMatchObject({ reason: 'third' });
    expect((await log.read(third.key))?.outcome).toBeUndefined();
    const about = await log.listAbout(['u-1'], '2000-01-01');
    expect(about.find((r) => r.reason === 'third')?.warnings).toEqual([expect.stringContaining('outcome of')]);
  });
});
