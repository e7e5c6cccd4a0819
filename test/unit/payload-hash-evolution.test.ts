/**
 * Changing a type that is in use. A deploy that adds optional fields to a type — of every kind, anywhere in its
 * definition — and reorders its fields must leave the meaning, and so the payloadHash, of every event without the new
 * fields as it was: a producer's resend of an event recorded before the deploy is then a duplicate, never an
 * EVENT_ID_CONFLICT (quarantined and alarmed, for a notice the customer already has).
 *
 * Here every shipped type gets such fields in a copy of templates/, compiled by the real compiler in a child process
 * (test/support/add-fields.ts), and its generated modules stand in for the shipped ones. The events of
 * test/fixtures/main-*-hashes.json, with the hashes main stored for them, are then resent.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';

const compiled = await vi.hoisted(async () => {
  // vi.hoisted runs before the static imports: what it needs it imports itself.
  const { execFileSync } = await import('node:child_process');
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const out = mkdtempSync(join(tmpdir(), 'notifier-added-fields-'));
  execFileSync(process.execPath, ['--import', 'tsx', 'test/support/add-fields.ts', out], { stdio: 'inherit' });
  return { out };
});
vi.mock('../../functions/domain/catalogue.generated.ts', () => import(`${compiled.out}/catalogue.generated.ts`));
vi.mock('../../functions/domain/templates.generated.ts', () => import(`${compiled.out}/templates.generated.ts`));

import { admitRecord } from '../../functions/domain/admission.ts';
import { definitionOf, EVENT_TYPES } from '../../functions/domain/catalogue.ts';
import type { InboxItem } from '../../functions/domain/notification.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { ADDED_FIELDS, ADDED_SHARED_MONEY } from '../support/add-fields.ts';
import { b64 } from '../support/events.ts';
import { MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';
import { storedHashOf } from '../support/secret-mac.ts';

type Pinned = { value: string; payloadHash: string };
const fixture = (name: string) =>
  (JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as { events: Pinned[] }).events;
const PINNED = [
  ...fixture('main-v2-hashes.json'),
  ...fixture('main-v2-catalogue-hashes.json'),
  ...fixture('secret-types-hashes.json'),
];

const hashOf = (value: string | object) => {
  const a = admitRecord(
    b64(typeof value === 'string' ? value : JSON.stringify(value)),
    { maxEventBytes: 65_536, maxEventAgeSeconds: 0 },
    Date.parse('2026-12-01T00:00:00Z'),
  );
  // A type with a secret field is stored with its secret's MAC under the key (the tests' own here).
  return a.ok ? (storedHashOf(a) as string) : `${a.rejection.reason}: ${a.rejection.detail}`;
};

/** A pinned event of each shipped type, as an object to change. */
const pinnedOf = (type: string) => {
  const pinned = PINNED.find((p) => (JSON.parse(p.value) as { type: string }).type === type);
  if (pinned === undefined) throw new Error(`no pinned event of ${type}`);
  return { ...pinned, event: JSON.parse(pinned.value) as { data: Record<string, unknown> } & Record<string, unknown> };
};
const withData = (event: { data: Record<string, unknown> }, data: Record<string, unknown>) => ({
  ...event,
  data: { ...event.data, ...data },
});

describe('a type in use, changed by adding optional fields', () => {
  it('the copy really has them: every type has every added field, its own fields reordered', () => {
    for (const type of EVENT_TYPES) {
      const names = definitionOf(type)?.data.map((f) => f.name) ?? [];
      expect(names.slice(0, ADDED_FIELDS.length), type).toEqual(ADDED_FIELDS.map((f) => f.name));
    }
    expect(definitionOf('LowBalance')?.data.map((f) => f.name)).toContain(ADDED_SHARED_MONEY);
    expect(definitionOf('TransferCompleted')?.data.at(-1)?.name).toBe('transferId');
  });

  it('every event main recorded, of every shipped type, is still accepted and hashes as main stored it', () => {
    const types = new Set(PINNED.map((p) => (JSON.parse(p.value) as { type: string }).type));
    for (const type of EVENT_TYPES) expect(types, `${type} has pinned hashes`).toContain(type);
    expect(PINNED.length).toBeGreaterThan(265 + 9 * 10);
    for (const { value, payloadHash } of PINNED) expect(hashOf(value), value).toBe(payloadHash);
  });

  it.each(EVENT_TYPES)('a resend of a %s recorded before the deploy is a duplicate after it', async (type) => {
    const { event, payloadHash } = pinnedOf(type);
    const store = new MemoryInboxStore();
    const deps = memoryBatchDeps(store, { maxEventAgeSeconds: 0 });
    const record = (offset: number) => ({ topic: 'evolution', partition: 0, offset, value: event });
    expect((await ingestBatch(mskEvent([record(0)]), deps)).results[0]?.kind).toBe('accepted');
    // The inbox as main wrote it: the hash main computed before the fields were added.
    const inbox = [...store.items.values()].find((i): i is InboxItem => i.kind === 'INBOX');
    if (inbox === undefined) throw new Error('no inbox item');
    inbox.payloadHash = payloadHash;
    expect((await ingestBatch(mskEvent([record(1)]), deps)).results[0]).toMatchObject({ kind: 'duplicate' });
  });

  it.each(EVENT_TYPES)(
    'in a %s, an added field given is part of the meaning; given empty or null, it is absent',
    (type) => {
      const { event, payloadHash } = pinnedOf(type);
      const given = {
        addedRef: 'r-1',
        addedNote: 'Kyoto',
        addedFee: '1.50',
        addedFeeCurrency: 'EUR',
        addedDate: '2026-12-24',
        addedAt: '2026-11-30T09:15:00Z',
        addedCount: '3',
        addedChoice: 'FIRST',
      };
      const hashes = new Set<string>([payloadHash]);
      for (const [name, value] of Object.entries(given)) {
        if (name === 'addedFeeCurrency') continue;
        const extra = name === 'addedFee' ? { addedFee: value, addedFeeCurrency: 'EUR' } : { [name]: value };
        const hash = hashOf(withData(event, extra));
        expect(hash, name).toMatch(/^v2:/);
        hashes.add(hash);
      }
      // Each added field given changes the meaning, each in its own way.
      expect(hashes.size).toBe(Object.keys(given).length);
      const all = hashOf(withData(event, given));
      expect(hashes.has(all)).toBe(false);
      // The same values spelled another way mean the same; another value means another thing.
      const respelled = {
        ...given,
        addedFee: ' +001.5',
        addedFeeCurrency: ' eur ',
        addedAt: '2026-11-30T18:15:00+09:00',
        addedChoice: ' first ',
        addedCount: 3,
        addedNote: '  Kyoto ',
      };
      expect(hashOf(withData(event, respelled))).toBe(all);
      expect(hashOf(withData(event, { ...given, addedNote: 'Osaka' }))).not.toBe(all);
      // Absent, null and display text that cleans to nothing are one meaning: the event recorded before.
      const absent = Object.fromEntries(Object.keys(given).map((name) => [name, null]));
      expect(hashOf(withData(event, absent))).toBe(payloadHash);
      expect(hashOf(withData(event, { addedNote: ' \u200b ' }))).toBe(payloadHash);
    },
  );

  it('an added money field sharing the currency of the type’s own is part of the meaning', () => {
    const { event, payloadHash } = pinnedOf('LowBalance');
    const limit = hashOf(withData(event, { [ADDED_SHARED_MONEY]: '500' }));
    expect(limit).toMatch(/^v2:/);
    expect(limit).not.toBe(payloadHash);
    expect(hashOf(withData(event, { [ADDED_SHARED_MONEY]: '500.00' }))).toBe(limit);
  });
});
