/**
 * Card numbers and IBANs are masked synchronously, and the rules that read them (functions/domain/card-number.ts) are
 * loaded on demand only by ingest, which loads them and reads a record again when a value needs them
 * (functions/domain/card-masking.ts). Every other function has them from the start of whatever decodes an event or
 * renders a notice: bundled as the stack bundles it, each part it loads (its index, or a chunk it imports when a
 * record needs it) that holds the decoder, display text or the templates holds the rules too.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleFunction } from '../../lib/bundling.ts';
import { REPO } from '../../tools/bench/repo.ts';

const READERS = [
  'functions/domain/event/decode.ts',
  'functions/domain/display-text.ts',
  'functions/domain/templates.ts',
];
const RULES = 'functions/domain/card-number.ts';

const FUNCTIONS = readdirSync(join(REPO, 'functions')).filter(
  (name) => name !== 'ingest' && existsSync(join(REPO, 'functions', name, 'index.ts')),
);

/** The source files a part loads with it: its own and those of the chunks it imports statically. */
function loadedWith(metafile: Metafile, part: string): string[] {
  const seen = new Set<string>();
  const visit = (path: string) => {
    const output = metafile.outputs[path];
    if (seen.has(path) || output === undefined) return;
    seen.add(path);
    for (const i of output.imports) if (i.kind === 'import-statement') visit(i.path);
  };
  visit(part);
  return [...seen].flatMap((path) => Object.keys(metafile.outputs[path]?.inputs ?? {}));
}

const out = mkdtempSync(join(tmpdir(), 'notifier-card-rules-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the card number and IBAN rules outside ingest', () => {
  it.each(FUNCTIONS)('%s loads them with every part that decodes an event or renders a notice', (name) => {
    const { metafile } = bundleFunction(join(REPO, 'functions', name, 'index.ts'), join(out, name), {
      metafile: true,
    }) as { metafile: Metafile };
    const outputs = Object.entries(metafile.outputs);
    const parts = [
      ...outputs.filter(([path]) => path.endsWith('/index.mjs')).map(([path]) => path),
      ...outputs.flatMap(([, o]) => o.imports.filter((i) => i.kind === 'dynamic-import').map((i) => i.path)),
    ];
    for (const part of parts) {
      const sources = loadedWith(metafile, part);
      if (sources.some((s) => READERS.some((r) => s.endsWith(r)))) {
        expect(
          sources.some((s) => s.endsWith(RULES)),
          `${name}: ${part} reads values without the rules`,
        ).toBe(true);
      }
    }
  });

  it('ingest is the one that loads them on demand: its cold start does not', () => {
    const { metafile } = bundleFunction(join(REPO, 'functions/ingest/index.ts'), join(out, 'ingest'), {
      metafile: true,
    }) as { metafile: Metafile };
    const index = Object.keys(metafile.outputs).find((path) => path.endsWith('/index.mjs')) ?? '';
    expect(loadedWith(metafile, index).some((s) => s.endsWith(READERS[0] as string))).toBe(true);
    expect(loadedWith(metafile, index).some((s) => s.endsWith(RULES))).toBe(false);
  });
});
