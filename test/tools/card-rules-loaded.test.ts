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

/**
 * Functions whose cold start masks nothing — the masker is bundled (with notification.ts, whose quarantine helpers
 * they never call) but only a chunk loaded later shows text: that chunk (holding `masks`) loads the rules itself.
 */
const MASKS_IN_A_CHUNK: Record<string, string> = {
  // The sweeper shows text only when it renders a message again (rebuild-evidence.ts, through templates.ts).
  sweeper: 'functions/domain/templates.ts',
};

/** The sources a chunk reads before it runs: itself and the chunks it imports statically. */
function closureOf(metafile: Metafile, output: string): Set<string> {
  const seen = new Set<string>();
  const visit = (path: string) => {
    const o = metafile.outputs[path];
    if (seen.has(path) || o === undefined) return;
    seen.add(path);
    for (const i of o.imports) if (i.kind === 'import-statement') visit(i.path);
  };
  visit(output);
  return new Set([...seen].flatMap((k) => Object.keys(metafile.outputs[k]?.inputs ?? {})));
}

describe('the card number and IBAN rules', () => {
  it.each(Object.entries(MASKS_IN_A_CHUNK))(
    '%s loads them with the chunk that shows text (%s), not at its cold start',
    (name, masks) => {
      const metafile = built(name);
      expect(staticInit(metafile).sources.has(RULES)).toBe(false);
      const chunk = Object.entries(metafile.outputs).find(([, o]) => Object.keys(o.inputs).includes(masks))?.[0];
      expect(chunk, `${name} bundles ${masks}`).toBeDefined();
      expect(closureOf(metafile, chunk as string).has(RULES)).toBe(true);
    },
  );

  it.each(FUNCTIONS.filter((name) => name !== 'ingest' && MASKS_IN_A_CHUNK[name] === undefined))(
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
