/**
 * How every function is bundled: the stack's functions (lib/notifier-function.ts) and the bench's cold-start
 * measurement build with `bundleFunction`, so the bench measures the bundle that is deployed. No aws-cdk-lib here.
 *
 * Code splitting: a module a function loads only when a record, its stage or a failure needs it — the Avro and
 * Protobuf codecs and the schema registry's cache, ingest's card brand ranges and IBAN registry (with the first value
 * holding a candidate card number or IBAN), the templates of one notice type, the rebuild of a dead
 * invocation's evidence, the two-region fence and stores (FENCE_TABLE_NAME), dispatch's evidence gaps, moment store
 * and provider-error classes, the X-Ray SDK when AWS calls are traced — is a chunk of its own beside index.mjs, read
 * when first imported, never at cold start (test/tools/bundle-budget.test.ts holds them out). (NodejsFunction cannot
 * split: it always bundles to one --outfile.) License comments go to a `.LEGAL.txt` beside each file that had them,
 * in the same asset, not into the bytes a cold start reads.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

export const BUNDLE = {
  /** The Lambda runtime is nodejs24.x (lib/notifier-function.ts). */
  target: 'node24',
  minify: true,
  sourceMap: true,
  // ESM bundles need require() for the few CommonJS dependencies that call it.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  mainFields: ['module', 'main'],
} as const;

/** Bundles one function's entry (an absolute path) into `outdir`: index.mjs, its chunks, their source maps. */
export function bundleFunction(entry: string, outdir: string, options: { readonly metafile?: boolean } = {}) {
  return buildSync({
    entryPoints: { index: entry },
    outdir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE.target,
    minify: BUNDLE.minify,
    sourcemap: BUNDLE.sourceMap ? 'external' : false,
    mainFields: [...BUNDLE.mainFields],
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    banner: { js: BUNDLE.banner },
    logLevel: 'silent',
    metafile: options.metafile ?? false,
    legalComments: 'external',
  });
}
/**
 * The support console's page (functions/console-page/page/): app.ts and what it imports, compiled for browsers into
 * one script, beside the page's other files copied as they are. The stack builds it when it bundles the page's
 * function (lib/console.ts); the local run builds it the same way at start (tools/local/console.ts).
 */
export const CONSOLE_PAGE_BUNDLE = {
  dir: 'functions/console-page/page',
  entry: 'app.ts',
  script: 'app.js',
  /** Browsers of the last few years; nothing older is a bank's managed desktop. */
  target: 'es2022',
  format: 'iife',
  minify: true,
  copied: ['index.html', 'console.css'],
} as const;

/**
 * The support console page's files, by name: app.js compiled for browsers, the others as they are. The stack writes
 * them beside the page function's bundle (lib/console.ts); the local run serves them from memory.
 */
export function consolePageFiles(): Map<string, string> {
  const b = CONSOLE_PAGE_BUNDLE;
  const dir = fileURLToPath(new URL(`../${b.dir}/`, import.meta.url));
  const out = buildSync({
    entryPoints: [`${dir}${b.entry}`],
    bundle: true,
    write: false,
    format: b.format,
    target: b.target,
    minify: b.minify,
    logLevel: 'silent',
  });
  const files = new Map<string, string>(b.copied.map((f) => [f, readFileSync(`${dir}${f}`, 'utf8')]));
  files.set(b.script, out.outputFiles[0]?.text ?? '');
  return files;
}
