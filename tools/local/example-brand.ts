/**
 * The neutral brand of the local run, the tests and the screenshots: the `brand` of examples/settings.example.json
 * ("Example Bank" / "サンプル銀行"), validated by the same schema as a deploy's.
 */
import { readFileSync } from 'node:fs';
import { type Brand, brandProblems, brandSchema } from '../../functions/domain/brand.ts';

export const EXAMPLE_SETTINGS_FILE = new URL('../../examples/settings.example.json', import.meta.url);

/** The brand of a settings file (a deploy's own, to preview it), or of the example settings. */
export function brandFromSettings(file: string | URL = EXAMPLE_SETTINGS_FILE): Brand {
  const settings = JSON.parse(readFileSync(file, 'utf8')) as { brand?: unknown };
  const parsed = brandSchema.safeParse(settings.brand);
  if (!parsed.success)
    throw new Error(`${String(file)}: ${brandProblems(settings.brand, parsed.error.issues).join('; ')}`);
  return parsed.data;
}

export const EXAMPLE_BRAND: Brand = brandFromSettings();
