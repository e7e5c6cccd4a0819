/**
 * Issue 10's measured list, one test per bullet: each failed on the code it was measured on.
 * In-memory store with DynamoDB's conditional and well-formedness rules (test/support/memory-inbox-store.ts).
 */
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../functions/domain/channels.ts';
import { LOCALES } from '../../functions/domain/locale.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { formatAmount, type Message, render } from '../../functions/domain/templates.ts';
import { type BatchDeps, type IngestFigures, ingestBatch, reconciles } from '../../functions/ingest/ingest-batch.ts';
import { isSafeDisplayText } from '../../tools/chaos/text-oracle.ts';
import { EXAMPLE_BRAND } from '../../tools/local/example-brand.ts';
import { type KafkaRecordSpec, mskEvent } from '../../tools/local/msk.ts';
import { transferEvent } from '../support/events.ts';
import { MemoryInboxStore } from '../support/memory-inbox-store.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

const deps = (store: MemoryInboxStore): BatchDeps => ({
  store,
  limit: pLimit(8),
  now: () => Date.parse('2026-11-30T09:15:01Z'),
  retentionDays: 35,
  maxEventBytes: 65_536,
  maxEventAgeSeconds: 86_400,
  transactionAttempts: 2,
});
let offset = 0;
const records = (...values: KafkaRecordSpec['value'][]) =>
  mskEvent(values.map((value) => ({ topic: 't', partition: 0, offset: offset++, value })));
const texts = (m: Message) =>
  m.channel === 'EMAIL' ? [m.subject, m.text, m.html] : m.channel === 'PUSH' ? [m.title, m.body] : [m.text];
/** One-line texts, and the lines of an email's text alternative (its line breaks are the template's). */
const lines = (m: Message) => texts(m).flatMap((t) => (m.channel === 'EMAIL' ? t.split('\n') : [t]));

describe('text fields as producers send them: escapes, names and money at their edges', () => {
  it('1. a JSON \\uD800 escape in any text field no longer stops the partition: quarantined or cleaned, the batch goes on', async () => {
    const lone = '\uD800';
    const cases: [string, object, 'accepted' | 'quarantined'][] = [
      ['eventId', transferEvent({ eventId: `e${lone}` }), 'quarantined'],
      ['userId', transferEvent({ eventId: 'ls-user', recipient: { userId: `u${lone}` } }), 'quarantined'],
      ['transferId', transferEvent({ eventId: 'ls-transfer', data: { transferId: `t${lone}` } }), 'quarantined'],
      // A contact point refuses its own channel only: the push and the SMS of this event are still sent.
      ['email', transferEvent({ eventId: 'ls-email', recipient: { email: `a${lone}@example.com` } }), 'accepted'],
      ['currency', transferEvent({ eventId: 'ls-currency', data: { currency: `US${lone}` } }), 'quarantined'],
      ['counterpartyName', transferEvent({ eventId: 'ls-name', data: { counterpartyName: `Pat${lone}` } }), 'accepted'],
      [
        'reason',
        transferEvent({ eventId: 'ls-reason', type: 'TransferFailed', data: { reason: `no funds${lone}` } }),
        'accepted',
      ],
    ];
    const store = new MemoryInboxStore();
    // JSON.stringify writes the lone surrogate as the escape "\ud800", exactly as a producer's JSON would carry it.
    const summary = await ingestBatch(
      records(...cases.map((c) => c[1]), transferEvent({ eventId: 'after' })),
      deps(store),
    );
    expect(summary.failure).toBeUndefined();
    expect(summary.results.map((r) => r.kind)).toEqual([...cases.map((c) => c[2]), 'accepted']);
    expect(store.refused).toEqual([]);
    expect(store.inbox('after')).toBeDefined();
    const name = store.ofKind('NOTIFICATION').find((n) => n.eventId === 'ls-name')?.data.counterpartyName;
    expect(name).toBe('Pat\uFFFD');
  });

  it('2. a payee name with CR/LF or NUL no longer suppresses the notice; bidi controls and U+2028 no longer reach the text', async () => {
    const store = new MemoryInboxStore();
    const summary = await ingestBatch(
      records(
        transferEvent({ eventId: 'crlf', data: { counterpartyName: 'x\r\n' } }),
        transferEvent({ eventId: 'nul', data: { counterpartyName: 'Pat\u0000Lee' } }),
        transferEvent({ eventId: 'bidi', data: { counterpartyName: '\u202Eevil\u2028Bcc: a' } }),
      ),
      deps(store),
    );
    expect(summary.results.map((r) => r.kind)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(summary.figures.displayTextSanitised).toBe(3);
    const names = Object.fromEntries(
      store.ofKind('NOTIFICATION').map((n) => [n.eventId, n.data.counterpartyName] as const),
    );
    expect(names).toEqual({ crlf: 'x', nul: 'Pat Lee', bidi: 'evil Bcc: a' });
    for (const n of store.ofKind('NOTIFICATION')) {
      for (const t of lines(
        render({ template: n.template, locale: n.locale, channel: n.channel, data: n.data }, EXAMPLE_BRAND),
      )) {
        expect(isSafeDisplayText(t)).toBe(true);
      }
    }
  });

  it('3. money is no longer rounded: over-precise amounts are INVALID_AMOUNT, accepted ones render digit for digit', async () => {
    const store = new MemoryInboxStore();
    const summary = await ingestBatch(
      records(
        transferEvent({ eventId: 'm1', data: { amount: '0.004', currency: 'USD' } }),
        transferEvent({ eventId: 'm2', data: { amount: '10000.5', currency: 'JPY' } }),
        transferEvent({ eventId: 'm3', data: { amount: '999999999999999.9999', currency: 'USD' } }),
      ),
      deps(store),
    );
    expect(summary.results.map((r) => (r.kind === 'quarantined' ? r.rejection.reason : r.kind))).toEqual([
      'INVALID_AMOUNT',
      'INVALID_AMOUNT',
      'INVALID_AMOUNT',
    ]);
    const data = { transferId: 't', amount: '999999999999999.99', currency: 'USD' };
    for (const template of ['TransferCompleted', 'TransferFailed'])
      for (const locale of LOCALES)
        for (const channel of CHANNELS) {
          const m = render({ template, locale, channel, data: { ...data, reason: 'r' } }, EXAMPLE_BRAND);
          // en and ja write it as below; a language a bank adds, as Intl formats the amount for it.
          const shown = ['en', 'ja'].includes(locale)
            ? '$999,999,999,999,999.99'
            : formatAmount(data.amount, 'USD', locale);
          // An SMS in GSM-7 swaps no-break spaces for plain ones.
          const spaced = (s: string) => (channel === 'SMS' ? s.replace(/[\u00a0\u202f]/g, ' ') : s);
          expect(spaced(texts(m).join(' '))).toContain(spaced(shown));
        }
  });

  it('4. inside one batch the lowest offset is the original', async () => {
    const store = new MemoryInboxStore();
    store.beforeWrite = async (items) => {
      // The original's write is the slower one.
      if ((items[1] as { data?: { amount: string } } | undefined)?.data?.amount === '1')
        await new Promise((r) => setTimeout(r, 10));
    };
    const event = records(
      transferEvent({ eventId: 'race', data: { amount: '1' } }),
      transferEvent({ eventId: 'race', data: { amount: '2' } }),
    );
    const [a, b] = await Promise.all([ingestBatch(event, deps(store)), ingestBatch(event, deps(store))]);
    expect([...a.results, ...b.results].map((r) => r.kind).sort()).toEqual([
      'accepted',
      'conflict',
      'conflict',
      'duplicate',
    ]);
    expect(store.ofKind('NOTIFICATION').every((n) => n.data.amount === '1')).toBe(true);
    expect(store.ofKind('QUARANTINE').map((q) => q.source.offset)).toEqual([offset - 1]);
  });

  it('5. resends that mean the same thing are duplicates, not conflicts', async () => {
    const store = new MemoryInboxStore();
    const summary = await ingestBatch(
      records(
        transferEvent({ eventId: 'same', channels: ['EMAIL', 'PUSH'], occurredAt: '2026-11-30T09:15:00Z' }),
        transferEvent({ eventId: 'same', channels: ['PUSH', 'EMAIL'], occurredAt: '2026-11-30T09:15:00+00:00' }),
        transferEvent({
          eventId: 'same',
          channels: ['PUSH', 'EMAIL'],
          occurredAt: '2026-11-30T18:15:00.000+09:00',
          data: { amount: '10000' },
        }),
      ),
      deps(store),
    );
    expect(summary.results.map((r) => r.kind)).toEqual(['accepted', 'duplicate', 'duplicate']);
    expect(summary.figures.conflicts).toBe(0);
  });

  it('6. the counts add up: a batch delivered 4× at once, bad records re-quarantined, an event with no contact counted', async () => {
    const store = new MemoryInboxStore();
    const noContact = { email: undefined, pushEndpointArn: undefined, phoneNumber: undefined };
    const event = records(
      transferEvent({ eventId: 'c1' }),
      transferEvent({ eventId: 'c2', recipient: noContact }),
      'not json',
      transferEvent({ eventId: 'c1', data: { amount: '5' } }),
      null,
    );
    const summaries = await Promise.all(Array.from({ length: 4 }, () => ingestBatch(event, deps(store))));
    const total = summaries
      .map((s) => s.figures)
      .reduce((sum, f) => {
        for (const k of Object.keys(f) as (keyof IngestFigures)[]) sum[k] += f[k];
        return sum;
      });
    expect(total).toMatchObject({
      received: 20,
      accepted: 2,
      duplicates: 6,
      conflicts: 1,
      quarantined: 2,
      requarantined: 9,
      failed: 0,
      withoutNotifications: 1,
    });
    for (const s of summaries) expect(reconciles(s.figures)).toBe(true);
  });
});
