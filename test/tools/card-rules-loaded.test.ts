/**
 * The card brands' ranges and the IBAN registry (functions/domain/card-rules.ts) decide what the masker
 * (card-number.ts) finds; before they are loaded a candidate throws instead of being shown. Ingest loads them with the
 * first value that needs them (ingest-record.ts); every other function that can mask — it bundles the masker — loads
 * them at its start: bundled as the stack bundles it, its index.mjs and the chunks it imports statically hold them.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleFunction } from '../../lib/bundling.ts';
import { staticInit } from '../../tools/bench/bundles.ts';
import { REPO } from '../../tools/bench/repo.ts';

const MASKER = 'functions/domain/card-number.ts';
const RULES = 'functions/domain/card-rules.ts';
const FUNCTIONS = readdirSync(join(REPO, 'functions')).filter((name) =>
  existsSync(join(REPO, 'functions', name, 'index.ts')),
);

const out = mkdtempSync(join(tmpdir(), 'notifier-card-rules-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const built = (name: string) =>
  bundleFunction(join(REPO, 'functions', name, 'index.ts'), join(out, name), { metafile: true }).metafile as Metafile;
const bundled = (metafile: Metafile, source: string) =>
  Object.values(metafile.outputs).some((o) => Object.keys(o.inputs).includes(source));

describe('the card number and IBAN rules', () => {
  it.each(FUNCTIONS.filter((name) => name !== 'ingest'))(
    '%s loads them at its start when it bundles the masker',
    (name) => {
      const metafile = built(name);
      if (!bundled(metafile, MASKER)) return;
      expect(staticInit(metafile).sources.has(RULES), `${name} masks without the rules at its start`).toBe(true);
    },
  );

  it('ingest bundles them as a chunk of their own, loaded with the first candidate, not at its cold start', () => {
    const metafile = built('ingest');
    expect(staticInit(metafile).sources.has(MASKER)).toBe(true);
    expect(staticInit(metafile).sources.has(RULES)).toBe(false);
    expect(bundled(metafile, RULES)).toBe(true);
  });
});
