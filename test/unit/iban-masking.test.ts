/**
 * An IBAN in a shown field is shown as banks show account identifiers: its country, its check digits and its last
 * four characters, every other letter and digit masked, its grouping as written (`DE89 **** **** **** **30 00`). Not
 * only for the account's sake: any card number can be wrapped into a valid IBAN (`DEcc 4111 1111 1111 1111 00`, the
 * check digits computed), and an IBAN shown as written carried the whole card number to the customer, the table, the
 * hash and the quarantine copy. The same in display text, identifiers and a quarantined record's bytes; what is not a
 * valid IBAN goes through the card-number rule.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admitRecord } from '../../functions/domain/admission.ts';
import { maskCardNumbers, maskCardNumbersInBytes } from '../../functions/domain/card-number.ts';
import { definitionOf } from '../../functions/domain/catalogue.ts';
import { cleanDisplayText } from '../../functions/domain/display-text.ts';
import { LOCALES } from '../../functions/domain/locale.ts';
import type { QuarantineItem } from '../../functions/domain/notification.ts';
import { loadAllTemplates } from '../../functions/domain/template-sets.ts';
import { render } from '../../functions/domain/templates.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { EXAMPLE_BRAND as brand } from '../../tools/local/example-brand.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { grouped, iban, luhnDigit } from '../support/account-numbers.ts';
import { b64 } from '../support/events.ts';
import { MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';

// Every notice type's templates (dispatch loads a type when it first renders one: template-sets.ts).
await loadAllTemplates();

/** The digits a reader reads off a text, whatever stands between them. */
const digitsOf = (s: string) => s.replace(/[^0-9]/g, '');
const PAN = '4111111111111111';

describe('an IBAN in text', () => {
  it.each([
    ['DE89 3704 0044 0532 0130 00', 'DE89 **** **** **** **30 00'],
    ['DE89370400440532013000', 'DE89**************3000'],
    ['GB29 NWBK 6016 1331 9268 19', 'GB29 **** **** **** **68 19'],
    ['GB82WEST12345698765432', 'GB82**************5432'],
    ['FR14 2004 1010 0505 0001 3M02 606', 'FR14 **** **** **** **** ***2 606'],
    ['IT60 X054 2811 1010 0000 0123 456', 'IT60 **** **** **** **** ***3 456'],
    ['NL91 ABNA 0417 1643 00', 'NL91 **** **** **43 00'],
    ['CH93 0076 2011 6238 5295 7', 'CH93 **** **** **** *295 7'],
    ['GI75 NWBK 0000 0000 7099 453', 'GI75 **** **** **** ***9 453'],
    ['to DE44 5001 0517 5407 3249 31 (EUR)', 'to DE44 **** **** **** **49 31 (EUR)'],
    ['IBAN de89 3704 0044 0532 0130 00 BIC COBADEFFXXX', 'IBAN de89 **** **** **** **30 00 BIC COBADEFFXXX'],
    ['DE89-3704-0044-0532-0130-00', 'DE89-****-****-****-**30-00'],
  ])('%s is shown as %s: its country, check digits and last four, grouped as written', (written, shown) => {
    expect(maskCardNumbers(written)).toEqual({ text: shown, masked: false, ibanMasked: true });
  });

  it('two IBANs side by side are each masked', () => {
    expect(maskCardNumbers('from DE89 3704 0044 0532 0130 00 to GB29 NWBK 6016 1331 9268 19').text).toBe(
      'from DE89 **** **** **** **30 00 to GB29 **** **** **** **68 19',
    );
    expect(maskCardNumbers('DE89370400440532013000GB29NWBK60161331926819').text).toBe(
      'DE89**************3000GB29**************6819',
    );
  });

  it('wrapping a card number, shows none of its digits but its last four at most', () => {
    const wrapped = iban('DE', `${PAN}00`);
    for (const written of [
      wrapped,
      grouped(wrapped),
      `IBAN ${grouped(wrapped)} BIC DEUTDEFF`,
      grouped(wrapped, 4, '-'),
    ]) {
      const { text } = maskCardNumbers(written);
      expect(digitsOf(text).includes('411111'), `${written} → ${text}`).toBe(false);
      expect(text.length, written).toBe(written.length);
    }
    expect(maskCardNumbers(grouped(wrapped)).text).toMatch(/^DE\d\d \*{4} \*{4} \*{4} \*\*11 00$/);
  });

  it('wrapping any card number at any place, grouped any way, never shows it (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^(4[0-9]{14}|5[1-5][0-9]{13}|3[47][0-9]{12}0)$/),
        fc.integer({ min: 0, max: 2 }),
        fc.constantFrom('', ' ', '-', '  '),
        (body, at, sep) => {
          const pan = `${body}${luhnDigit(body)}`;
          const account = iban('DE', `${'0'.repeat(at)}${pan}`.padEnd(18, '7'));
          const written = sep === '' ? account : grouped(account, 4, sep);
          const digits = digitsOf(maskCardNumbers(`Paid to ${written}, thank you`).text);
          return !digits.includes(pan.slice(0, 12)) && !digits.includes(pan.slice(-12));
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('whose digits hold a stretch a card brand could issue (a real account may): masked as an IBAN, no card number reported', () => {
    const account = iban('DE', '501971701010374200'); // a Luhn-valid Maestro number, and 00
    for (const written of [account, grouped(account)])
      expect(maskCardNumbers(written), written).toMatchObject({ masked: false, ibanMasked: true });
    expect(maskCardNumbers(grouped(account)).text).toMatch(/^DE\d\d \*{4} \*{4} \*{4} \*\*42 00$/);
  });

  it('whose last four and the digits after it would read as a card number: masked as one', () => {
    // The IBAN ends in the card's first four digits, and the rest of the card follows it: no reader may see them together.
    const head = iban('DE', `00000000000000${PAN.slice(0, 4)}`);
    const written = `${grouped(head)} ${grouped(PAN.slice(4))}`;
    const { text, masked } = maskCardNumbers(written);
    expect(digitsOf(text).includes(PAN.slice(0, 12)), text).toBe(false);
    expect(digitsOf(text).replace(/^\d\d/, '').includes('41111111'), text).toBe(false);
    expect(masked, text).toBe(true);
  });

  it('what is not a valid IBAN goes through the card-number rule', () => {
    // The check digits do not hold: not an IBAN, and the card number in it is masked to its last four.
    expect(maskCardNumbers('DE00 4111 1111 1111 1111')).toEqual({
      text: 'DE00 **** **** **** 1111',
      masked: true,
      ibanMasked: false,
    });
    // Too short, an unknown country, a wrong length for its country: shown as written.
    for (const text of ['DE89 3704 0044', 'XX89 3704 0044 0532 0130 00', 'DE89 3704 0044 0532 0130 0']) {
      expect(maskCardNumbers(text), text).toEqual({ text, masked: false, ibanMasked: false });
    }
  });

  it('in a display-text field: cleaned, then masked, the change counted as cleaning, not as a card number', () => {
    const clean = cleanDisplayText('Rent to DE89 3704 0044 0532 0130 00', 140);
    expect(clean).toEqual({ text: 'Rent to DE89 **** **** **** **30 00', changed: true, masked: false });
    // Invisible characters between its digits hide nothing.
    expect(cleanDisplayText('DE89 3704\u200b 0044 0532 0130 00', 140).text).toBe('DE89 **** **** **** **30 00');
    expect(cleanDisplayText('DE89 3704\u200d0044 0532 0130 00', 140).text).toBe('DE89 ****\u200d**** **** **30 00');
  });
});

const NOW = Date.parse('2026-11-30T09:20:00Z');
const transfer = (eventId: string, data: Record<string, unknown>) => ({
  eventId,
  type: 'TransferCompleted',
  occurredAt: '2026-11-30T09:15:00Z',
  recipient: { userId: 'u-7', locale: 'en', email: 'alex@example.com', phoneNumber: '+14155550123' },
  data: { transferId: 't-1', amount: '10.00', currency: 'EUR', ...data },
});

describe('an IBAN in an event', () => {
  const wrapped = iban('DE', `${PAN}00`);

  it('is stored, hashed and shown masked in display text and identifiers, alike; no card number is reported', () => {
    const a = admitRecord(
      b64(transfer('iban-1', { transferId: wrapped, counterpartyName: `Jordan ${grouped(wrapped)}` })),
      { maxEventBytes: 65_536, maxEventAgeSeconds: 0 },
      NOW,
    );
    if (!a.ok || !('event' in a)) throw new Error(JSON.stringify(a));
    expect(a.event.data.transferId).toBe(maskCardNumbers(wrapped).text);
    expect(a.event.data.counterpartyName).toBe(`Jordan ${maskCardNumbers(grouped(wrapped)).text}`);
    expect(digitsOf(JSON.stringify(a.event))).not.toContain('411111');
    // An IBAN is no producer's mistake: masked without the card-number alarm.
    expect(a.masked).toEqual([]);
    // The meaning is what is shown: the same event written masked is a duplicate.
    const again = admitRecord(
      b64(transfer('iban-1', { transferId: a.event.data.transferId, counterpartyName: a.event.data.counterpartyName })),
      { maxEventBytes: 65_536, maxEventAgeSeconds: 0 },
      NOW,
    );
    expect(again.ok && again.payloadHash).toBe(a.payloadHash);
  });

  it('of a notification written before the rule is masked when it is rendered, on every channel and language', () => {
    for (const locale of LOCALES)
      for (const channel of definitionOf('TransferFailed')?.channels ?? []) {
        const m = render(
          {
            template: 'TransferFailed',
            locale,
            channel,
            data: { transferId: wrapped, amount: '10.00', currency: 'EUR', reason: `to ${grouped(wrapped)} refused` },
          },
          brand,
        );
        expect(digitsOf(JSON.stringify(m)), `${locale} ${channel}`).not.toContain('411111');
        if (m.channel === 'EMAIL')
          for (const shown of [wrapped, grouped(wrapped)]) expect(m.text).toContain(maskCardNumbers(shown).text);
      }
  });

  it('in a quarantined record’s kept copy is masked as in the event, lengths kept', async () => {
    const store = new MemoryInboxStore();
    const event = transfer('iban-q', { counterpartyName: `Jordan ${grouped(wrapped)}`, reference: wrapped });
    (event.data as Record<string, unknown>).currency = 'XYZ';
    await ingestBatch(
      mskEvent([{ topic: 'iban', partition: 0, offset: 0, value: event }]),
      memoryBatchDeps(store, { maxEventAgeSeconds: 0 }),
    );
    const kept = [...store.items.values()].filter((i): i is QuarantineItem => i.kind === 'QUARANTINE');
    expect(kept).toHaveLength(1);
    const raw = Buffer.from(kept[0]?.raw ?? '', 'base64').toString('utf8');
    expect(raw.length).toBe(JSON.stringify(event).length);
    const data = (JSON.parse(raw) as { data: Record<string, string> }).data;
    expect(data.counterpartyName).toBe(`Jordan ${maskCardNumbers(grouped(wrapped)).text}`);
    expect(data.reference).toBe(maskCardNumbers(wrapped).text);
    // Bytes and text agree, a JSON escape read as the character it stands for.
    const escaped = Buffer.from(JSON.stringify({ iban: grouped(wrapped) }).replace(' ', '\\u0020'));
    const bytes = maskCardNumbersInBytes(escaped);
    expect(bytes).toMatchObject({ masked: false, ibanMasked: true });
    expect(JSON.parse(Buffer.from(bytes.bytes).toString('utf8')).iban).toBe(maskCardNumbers(grouped(wrapped)).text);
  });
});
