/** Each function's bundle, built as the stack builds it (lib/bundling.ts): its size, and its init time in a fresh Node process. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { brandEnvValue } from '../../functions/domain/brand.ts';
import { BUNDLE } from '../../lib/bundling.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';
import { REPO } from './repo.ts';
import { median, round2 } from './workload.ts';

export async function measureBundles(samples: number) {
  const out = mkdtempSync(join(tmpdir(), 'notifier-bundles-'));
  const result = [];
  for (const name of ['ingest', 'dispatch', 'sweeper']) {
    const outfile = join(out, `${name}.mjs`);
    // The same options as the house NotifierFunction construct.
    await build({
      entryPoints: [join(REPO, 'functions', name, 'index.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      // The stack's bundling (lib/bundling.ts): the bench measures what is deployed.
      format: 'esm',
      target: BUNDLE.target,
      minify: BUNDLE.minify,
      sourcemap: BUNDLE.sourceMap ? 'external' : false,
      mainFields: [...BUNDLE.mainFields],
      banner: { js: BUNDLE.banner },
      logLevel: 'silent',
    });
    const times = [];
    for (let i = 0; i < samples; i++) {
      const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(outfile).href)}); process.stdout.write(String(performance.now() - t));`;
      const ms = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          ...process.env,
          TABLE_NAME: 'bench',
          SENDER_EMAIL: 'bench@example.com',
          BRAND: brandEnvValue(EXAMPLE_BRAND),
          AWS_REGION: 'us-east-1',
          // As in Lambda: the Tracer and the X-Ray SDK are loaded (functions/commons/powertools.ts), tracing on.
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
          POWERTOOLS_TRACE_ENABLED: 'true',
        },
        encoding: 'utf8',
      });
      times.push(Number(ms));
    }
    result.push({ name, bytes: statSync(outfile).size, initMs: round2(median(times)) });
  }
  return result;
}
