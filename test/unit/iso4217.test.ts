import { readFileSync } from 'node:fs';
import { data } from 'currency-codes';
import { describe, expect, it } from 'vitest';
import { ISO_4217_MINOR_UNITS } from '../../functions/domain/iso4217.generated.ts';
import { minorUnit } from '../../functions/domain/money.ts';
import { ISO4217_FILE, iso4217Module } from '../../tools/scripts/iso4217.ts';

describe('the ISO 4217 minor units the functions load', () => {
  it('are what the installed currency-codes package gives (npm run iso4217 writes them)', () => {
    expect(readFileSync(ISO4217_FILE, 'utf8'), 'iso4217.generated.ts is stale: npm run iso4217').toBe(iso4217Module());
  });

  it('give every currency with a minor unit the package records, and nothing else', () => {
    expect(Object.keys(ISO_4217_MINOR_UNITS)).toHaveLength(data.length);
    for (const c of data) {
      const unit = minorUnit(c.code);
      // The codes that are not money (metals, SDR, testing …) the package records with 0: refused as money.
      if (unit !== undefined) expect(unit, c.code).toBe(c.digits);
    }
    // Precious metals, bond-market units, SDR, the testing and "no currency" codes: thirteen in the list.
    const refused = data.filter((c) => minorUnit(c.code) === undefined).map((c) => c.code);
    expect(refused).toHaveLength(13);
    expect(refused).toEqual(expect.arrayContaining(['XAU', 'XAG', 'XDR', 'XTS', 'XXX']));
  });
});
