/**
 * Ingest's cold start leaves out the card brands' ranges and the IBAN registry (functions/domain/card-rules.ts): the
 * masker (card-number.ts) consults them only for a candidate — a run of 13–19 digits that starts as a brand's numbers
 * start and passes the Luhn check (UnionPay's need not), or an IBAN of its country's length passing the mod-97 check —
 * which ids and UUIDs almost never hold. Before they are loaded a candidate throws CardRulesNotLoaded, never comes back
 * as written; ingest loads them and reads the record again, and a load that fails fails the batch with every record
 * counted and reported, nothing written or kept unmasked. Each test of the second part imports fresh modules, as a new
 * execution environment has them.
 */
import { readFileSync } from 'node:fs';
import type { MSKEvent } from 'aws-lambda';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as loaded from '../../functions/domain/card-number.ts';
import { BRAND_LEAD, IBAN_COUNTRIES_BY_LENGTH, UNIONPAY_LEAD } from '../../functions/domain/card-rules.generated.ts';
import { brandsCovering } from '../../functions/domain/card-rules.ts';
import { CARD_RULES_FILE, cardRulesModule } from '../../tools/scripts/card-rules.ts';
import { grouped, iban, luhnDigit } from '../support/account-numbers.ts';
import { PUSH_ARN, transferEvent } from '../support/events.ts';

const PANS = [
  '4111111111111111',
  '4111111111111111003',
  '5555555555554444',
  '2223003122003222',
  '378282246310005',
  '6011111111111117',
  '30569309025904',
  '3530111333300000',
  '6200000000000005',
  '6759649826438453',
  '2201382000000013',
];
/** Ids a producer writes in every event: UUIDs (the push endpoint's), references, dates. */
const IDS = [
  '0f9c1d2e-3b4a-5c6d-7e8f-9a0b1c2d3e4f',
  PUSH_ARN,
  'trf-2026-000123',
  '9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4',
  '2026-11-30T09:15:00Z',
];

describe('what the masker knows without the rules', () => {
  it('is what the installed credit-card-type and ibantools give (npm run card-rules writes it)', () => {
    expect(readFileSync(CARD_RULES_FILE, 'utf8'), 'card-rules.generated.ts is stale: npm run card-rules').toBe(
      cardRulesModule(),
    );
    expect(IBAN_COUNTRIES_BY_LENGTH).toMatch(/ 22(..)*DE/);
    expect(UNIONPAY_LEAD.test('62')).toBe(true);
  });

  it("every number a brand's ranges cover starts with a lead it knows; UnionPay's with one of UnionPay's (property)", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{8}$/), (iin) => {
        const brands = brandsCovering(iin);
        if (brands.length > 0) expect(BRAND_LEAD.test(iin), iin).toBe(true);
        if (brands.some((b) => b.type === 'unionpay')) expect(UNIONPAY_LEAD.test(iin), iin).toBe(true);
      }),
      { seed: 7, numRuns: 20_000 },
    );
    for (const pan of PANS) expect(BRAND_LEAD.test(pan), pan).toBe(true);
    // And it tells: 0, 1, 7 and 9 mostly start no card.
    expect(['01', '12', '70', '99'].filter((lead) => BRAND_LEAD.test(lead))).toEqual([]);
  });
});

describe('ingest before its first candidate (no rules loaded)', () => {
  beforeEach(() => vi.resetModules());
  const bare = async () => await import('../../functions/domain/card-number.ts');

  it('ids, references and UUIDs are read as they are: fewer than one UUID in a hundred holds a candidate', async () => {
    const { maskCardNumbers, maskCardNumbersInBytes, CardRulesNotLoaded } = await bare();
    for (const id of IDS) expect(maskCardNumbers(id)).toEqual({ text: id, masked: false, ibanMasked: false });
    const event = JSON.stringify(transferEvent({ eventId: IDS[0] }));
    expect(maskCardNumbersInBytes(Buffer.from(event)).masked).toBe(false);
    const uuids = fc.sample(fc.uuid(), { seed: 11, numRuns: 5_000 });
    const needing = uuids.filter((u) => {
      try {
        maskCardNumbers(u);
        return false;
      } catch (error) {
        expect(error).toBeInstanceOf(CardRulesNotLoaded);
        return true;
      }
    });
    expect(needing.length / uuids.length).toBeLessThan(0.01);
  });

  it('a value the masker masks never comes back as written: it throws until the rules are loaded (property)', async () => {
    const { maskCardNumbers, maskCardNumbersInBytes, CardRulesNotLoaded } = await bare();
    const texts = [
      ...PANS,
      ...PANS.map((p) => grouped(p)),
      ...PANS.map((p) => grouped(p, 4, '-')),
      // A card number written as a UUID's groups, and inside one.
      '41111111-1111-1111-0000-000000000000',
      `0f9c1d2e-4111-1111-1111-1111${'a'.repeat(8)}`,
      iban('DE', `${'4111111111111111'}00`),
      'DE89 3704 0044 0532 0130 00',
      'gb29nwbk60161331926819',
    ];
    const pan = fc.constantFrom(...PANS).map((p) => grouped(p, 4, ' '));
    const text = fc
      .tuple(fc.uuid(), pan, fc.constantFrom(' ', '-', ':', ' ref '), fc.uuid())
      .map(([a, p, sep, b]) => `${a}${sep}${p}${sep}${b}`);
    for (const t of [...texts, ...fc.sample(text, { seed: 3, numRuns: 300 })]) {
      expect(loaded.maskCardNumbers(t).text, t).not.toBe(t);
      expect(() => maskCardNumbers(t), t).toThrow(CardRulesNotLoaded);
      expect(() => maskCardNumbersInBytes(Buffer.from(JSON.stringify({ t }))), t).toThrow(CardRulesNotLoaded);
    }
  });

  it('whatever it returns without the rules is what it returns with them (property)', async () => {
    const { maskCardNumbers } = await bare();
    const digitsAndIds = fc.stringMatching(/^[0-9a-fA-Z -]{0,60}$/);
    fc.assert(
      fc.property(digitsAndIds, (t) => {
        let shown: unknown;
        try {
          shown = maskCardNumbers(t);
        } catch {
          return;
        }
        expect(shown).toEqual(loaded.maskCardNumbers(t));
      }),
      { seed: 5, numRuns: 5_000 },
    );
  });

  it('once loaded, a card number is masked as it always was', async () => {
    const { loadCardRules, maskCardNumbers } = await bare();
    await loadCardRules();
    expect(maskCardNumbers(`pay ${luhnCard()} now`).text).toBe('pay **** **** **** 1111 now');
    expect(maskCardNumbers('DE89 3704 0044 0532 0130 00').text).toBe('DE89 **** **** **** **30 00');
  });
});

const luhnCard = () => grouped(`411111111111111${luhnDigit('411111111111111')}`);

/** An MSK batch of JSON values, built by hand: the operator's helpers load the rules with them. */
function batch(values: readonly (string | object)[]): MSKEvent {
  const records = values.map((v, offset) => ({
    topic: 'cards',
    partition: 0,
    offset,
    timestamp: Date.parse('2026-11-30T09:16:00Z'),
    timestampType: 'CREATE_TIME' as const,
    key: '',
    value: Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64'),
    headers: [],
  }));
  return { eventSource: 'aws:kafka', eventSourceArn: 'arn', bootstrapServers: '', records: { 'cards-0': records } };
}

describe("ingest's batch and the card rules", () => {
  beforeEach(() => vi.resetModules());
  afterEach(() => vi.doUnmock('../../functions/domain/card-rules.ts'));
  const ids = fc.sample(fc.uuid(), { seed: 1, numRuns: 40 });
  /** Events keyed by UUIDs that hold no candidate (the same draw every run). */
  const plain = (i: number) =>
    transferEvent({ eventId: ids[i], recipient: { userId: `u-${i}` }, data: { transferId: ids[i + 20] } });
  const withPan = (i: number) =>
    transferEvent({
      eventId: `pan-${i}`,
      recipient: { userId: `p-${i}` },
      data: { counterpartyName: 'Pay 4111 1111 1111 1111' },
    });
  const setUp = async () => {
    const [{ ingestBatch }, { MemoryInboxStore, memoryBatchDeps }] = await Promise.all([
      import('../../functions/ingest/ingest-batch.ts'),
      import('../support/memory-inbox-store.ts'),
    ]);
    const store = new MemoryInboxStore();
    return { store, run: (event: MSKEvent) => ingestBatch(event, memoryBatchDeps(store)) };
  };
  const failLoad = () =>
    vi.doMock('../../functions/domain/card-rules.ts', () => {
      throw new Error('the chunk could not be read');
    });

  it('UUID-keyed records are accepted without them: a load that would fail is never tried', async () => {
    failLoad();
    const { run } = await setUp();
    const summary = await run(batch(Array.from({ length: 20 }, (_, i) => plain(i))));
    expect(summary.failure).toBeUndefined();
    expect(summary.figures.accepted).toBe(20);
  });

  it('a record holding a card number loads them and is stored masked; a quarantined one is kept masked', async () => {
    const { store, run } = await setUp();
    const summary = await run(batch([plain(0), withPan(1), '{"card":"4111 1111 1111 1111",']));
    expect(summary.failure).toBeUndefined();
    expect(summary.results.map((r) => r.kind)).toEqual(['accepted', 'accepted', 'quarantined']);
    const stored = JSON.stringify([...store.items.values()]);
    expect(stored).toContain('**** **** **** 1111');
    expect(stored).not.toMatch(/4111 1111 1111/);
    const kept = [...store.items.values()].find((i) => i.kind === 'QUARANTINE') as { raw: string };
    expect(Buffer.from(kept.raw, 'base64').toString()).toBe('{"card":"**** **** **** 1111",');
  });

  it('a load that fails fails the batch: every record counted failed and reported, nothing written', async () => {
    failLoad();
    const { store, run } = await setUp();
    const summary = await run(batch([plain(0), withPan(1), plain(2)]));
    // Said as a failed load: the handler ends this environment after its report (Node keeps a failed import).
    expect(summary.failure).toMatchObject({ name: 'RulesLoadFailed', message: /did not load: the chunk could not/ });
    expect(summary.figures).toMatchObject({ received: 3, failed: 3, accepted: 0 });
    expect(store.items.size).toBe(0);
  });

  it('a quarantined record whose kept copy needs them, when the load fails, fails with its chain: never kept unmasked', async () => {
    failLoad();
    const { store, run } = await setUp();
    const summary = await run(batch([plain(0), '{"card":"4111 1111 1111 1111",']));
    expect(summary.failure).toMatchObject({ name: 'RulesLoadFailed' });
    expect(summary.figures).toMatchObject({ received: 2, accepted: 1, failed: 1, quarantined: 0 });
    expect([...store.items.values()].some((i) => i.kind === 'QUARANTINE')).toBe(false);
  });
});

describe('an environment whose rules did not load', () => {
  it('ends once the batch is reported: the error said, the counts out, then exit 1 — a new environment gets the batch', async () => {
    const { endEnvironment } = await import('../../functions/ingest/end-environment.ts');
    const { RulesLoadFailed } = await import('../../functions/domain/rules-not-loaded.ts');
    const exits: number[] = [];
    endEnvironment(new RulesLoadFailed('the card rules did not load: EACCES'), (code) => exits.push(code));
    expect(exits).toEqual([1]);
  });
});
