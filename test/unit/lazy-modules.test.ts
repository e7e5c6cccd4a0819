/**
 * What a function loads only when a record needs it (lib/bundling.ts splits each into a chunk): the phone number
 * rules for a number written otherwise than E.164, a notice type's templates when one of its notices is rendered, and
 * local time (Temporal) when a notice's type has a send window.
 * Each test imports fresh modules, as a new execution environment has them.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { transferEvent } from '../support/events.ts';

beforeEach(() => vi.resetModules());

const input = (phoneNumber: string) => ({
  source: { topic: 't', partition: 0, offset: 1 },
  value: Buffer.from(JSON.stringify(transferEvent({ recipient: { phoneNumber } }))).toString('base64'),
});
const deps = {
  now: () => Date.parse('2026-11-30T09:16:00Z'),
  retentionDays: 35,
  maxEventBytes: 65_536,
  maxEventAgeSeconds: 0,
} as never;

describe('loaded on first need', () => {
  it('a number in E.164 is read without the phone number rules; another spelling loads them once, and is read', async () => {
    const { admit, admitLoading } = await import('../../functions/ingest/ingest-record.ts');
    const { phoneParser, PhoneNumbersNotLoaded } = await import('../../functions/domain/phone-numbers.ts');
    expect(admit(input('+819012345678'), deps).admission).toMatchObject({ ok: true });
    expect(() => phoneParser()).toThrow(PhoneNumbersNotLoaded);
    // Not a record's fault: never a quarantine for want of the rules.
    expect(() => admit(input('+81 90-1234-5678'), deps)).toThrow(PhoneNumbersNotLoaded);
    const admitted = await admitLoading(input('+81 90-1234-5678'), deps);
    expect(admitted.admission).toMatchObject({
      ok: true,
      normalised: expect.arrayContaining(['recipient.phoneNumber']),
    });
    expect(phoneParser()).toBeTypeOf('function');
  });

  it("an operator's repair and replay read a number written otherwise than E.164: the rules load before their decision", async () => {
    const { replayQuarantine } = await import('../../functions/operator/replay.ts');
    const { phoneParser } = await import('../../functions/domain/phone-numbers.ts');
    const corrected = JSON.stringify(transferEvent({ recipient: { phoneNumber: '+81 90-1234-5678' } }));
    const eventId = 'trf-2026-000123';
    const ports = {
      events: { read: async () => ({ inbox: undefined, notifications: [] }) },
      quarantine: { get: async () => undefined },
    } as never;
    await replayQuarantine.read(ports, { ids: [] });
    expect(phoneParser()).toBeTypeOf('function');
    vi.resetModules();
    const { repair } = await import('../../functions/operator/repair.ts');
    const before = await repair.read(ports, { eventId, corrected } as never);
    // Before the rules were loaded here, the decision threw PhoneNumbersNotLoaded in the operator's function.
    expect(() => repair.decide(before as never, { eventId, corrected } as never)).not.toThrow();
  });

  it("a notice type's templates are loaded on their own; rendering a type not loaded is refused as the caller's mistake", async () => {
    const { compiledSet, loadTemplates, TemplatesNotLoadedError } = await import(
      '../../functions/domain/template-sets.ts'
    );
    expect(() => compiledSet('TransferCompleted', 'en')).toThrow(TemplatesNotLoadedError);
    await loadTemplates('TransferCompleted');
    expect(compiledSet('TransferCompleted', 'en')?.subject).toMatch(/\S/);
    expect(() => compiledSet('CardPayment', 'en')).toThrow(TemplatesNotLoadedError);
    // A type the catalogue does not have has no templates: rendering it refuses it (RENDER_ERROR), as before.
    await loadTemplates('NoSuchType');
    expect(compiledSet('NoSuchType', 'en')).toBeUndefined();
  });

  it('a notice whose type has no send window is judged without local time; a type with a window loads it once', async () => {
    const { loadMomentRules, momentFirst } = await import('../../functions/dispatch/moment-checks.ts');
    const { localTime, LocalTimeNotLoaded } = await import('../../functions/domain/local-time.ts');
    const brand = { defaultTimeZone: { en: 'Europe/Berlin' } } as never;
    const at = Date.parse('2026-11-30T02:00:00Z');
    const unwindowed = { template: 'TransferCompleted', locale: 'en' } as never;
    await loadMomentRules(unwindowed, { timing: 'ENFORCED' });
    expect(momentFirst(unwindowed, { brand, timing: 'ENFORCED' }, at)).toBeUndefined();
    expect(() => localTime()).toThrow(LocalTimeNotLoaded);
    // Judging a window before loading is the caller's mistake, never read as an unknown zone (sent in the night).
    const windowed = { template: 'DirectDebitUpcoming', locale: 'en', timeZone: 'Europe/Berlin' } as never;
    expect(() => momentFirst(windowed, { brand, timing: 'ENFORCED' }, at)).toThrow(LocalTimeNotLoaded);
    await loadMomentRules(windowed, { timing: 'ENFORCED' });
    expect(momentFirst(windowed, { brand, timing: 'ENFORCED' }, at)).toMatchObject({
      kind: 'hold',
      zone: 'Europe/Berlin',
    });
  });
});
