/**
 * Each function's bundle, built as the stack builds it (lib/bundling.ts: split into chunks loaded on first use): the
 * bytes its cold start loads (index.mjs and the chunks it imports statically) and all its bytes, and its init time in a
 * fresh Node process (the import of index.mjs, median of `samples`) — beside the floor: a bundle of only the AWS SDK
 * clients the function calls, built and timed the same way. Init runs on the Node of package.json's engines — the
 * Lambda runtime's, nodejs24.x — whatever Node runs the bench (runtimeNode): each row says which Node it was.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Metafile } from 'esbuild';
import { brandEnvValue } from '../../functions/domain/brand.ts';
import { SPOOL_BELOW_RECORDS } from '../../functions/domain/evidence-spool.ts';
import { bundleFunction } from '../../lib/bundling.ts';
import { EXAMPLE_BRAND } from '../local/example-brand.ts';
import { REPO } from './repo.ts';
import { median, round2 } from './workload.ts';

/** The SDK clients and commands each function calls at all (its floor imports them, and nothing else of ours). */
const SDK_FLOOR: Record<string, Record<string, string[]>> = {
  ingest: {
    '@aws-sdk/client-dynamodb': ['DynamoDBClient'],
    '@aws-sdk/lib-dynamodb': ['DynamoDBDocumentClient', 'TransactWriteCommand', 'BatchGetCommand', 'UpdateCommand'],
  },
  dispatch: {
    '@aws-sdk/client-dynamodb': ['DynamoDBClient'],
    '@aws-sdk/lib-dynamodb': ['DynamoDBDocumentClient', 'GetCommand', 'UpdateCommand', 'PutCommand', 'QueryCommand'],
    '@aws-sdk/client-ses': ['SESClient', 'SendEmailCommand'],
    '@aws-sdk/client-sns': ['SNSClient', 'PublishCommand'],
    '@aws-sdk/client-s3': ['S3Client', 'PutObjectCommand'],
  },
  sweeper: {
    '@aws-sdk/client-dynamodb': ['DynamoDBClient'],
    '@aws-sdk/lib-dynamodb': ['DynamoDBDocumentClient', 'GetCommand', 'UpdateCommand', 'QueryCommand'],
    '@aws-sdk/client-s3': ['S3Client', 'PutObjectCommand'],
  },
  feedback: {
    '@aws-sdk/client-dynamodb': ['DynamoDBClient'],
    '@aws-sdk/lib-dynamodb': ['DynamoDBDocumentClient', 'GetCommand', 'UpdateCommand', 'QueryCommand'],
    '@aws-sdk/client-s3': ['S3Client', 'PutObjectCommand'],
  },
};

/** A bundle's files: all its bytes and its chunks (the bytes its cold start reads are measured: initOf). */
function filesOf(metafile: Metafile): { totalBytes: number; chunks: number } {
  const js = Object.entries(metafile.outputs).filter(([k]) => k.endsWith('.mjs'));
  return { totalBytes: js.reduce((n, [, o]) => n + o.bytes, 0), chunks: js.length };
}

/** One init: its wall time, the CPU time of the process during it (all its threads: less swayed by a loaded machine), bytes. */
type Run = { ms: number; cpuMs: number; bytes: number; node: string };

/**
 * The Node an init is timed on: the Lambda runtime's major (package.json's engines, 24). The Node running the bench
 * when it is that major (`npm run bench` puts node_modules/.bin, and the Node `npm ci` installs there, first on the
 * PATH); else the one `npm ci` installs (the optional dependency node-linux-<arch>), so a bench started with an
 * older machine Node (`node --import tsx tools/bench/run.ts`) still times the runtime's Node, never its own.
 */
export function runtimeNode(
  current: { readonly execPath: string; readonly version: string } = process,
  installed: (major: number) => string | undefined = installedNode,
): string {
  const engines = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).engines.node as string;
  const major = Number(/(\d+)/.exec(engines)?.[1]);
  if (Number(/^v?(\d+)/.exec(current.version)?.[1]) >= major) return current.execPath;
  const found = installed(major);
  if (found !== undefined) return found;
  throw new Error(
    `bench: init is timed on Node ${engines} (the Lambda runtime); this is Node ${current.version} and none is ` +
      `installed in node_modules (\`npm ci\` installs it on Linux x64 and arm64)`,
  );
}

function installedNode(major: number): string | undefined {
  const bin = join(REPO, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node');
  if (!existsSync(bin)) return undefined;
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  return Number(/^v(\d+)/.exec(version)?.[1]) >= major ? bin : undefined;
}

/**
 * Init as a cold start has it, in a fresh Node process: the time to import index.mjs (top-level awaits included), and
 * the bytes of every file of the bundle it loaded by then (a load hook sees each one: a chunk imported only when a
 * record needs it is not among them). With `compileCache` (a directory), Node 24's module compile cache is on
 * (NODE_COMPILE_CACHE): what a cold start would take with a warm cache shipped beside the bundle (the stack ships
 * none: docs/measurements.md "Bundles and init time").
 */
function initRun(node: string, dir: string, compileCache: string | undefined): Run {
  const entry = pathToFileURL(join(dir, 'index.mjs')).href;
  const script = `
    import { registerHooks } from 'node:module';
    import { statSync } from 'node:fs';
    import { fileURLToPath } from 'node:url';
    const loaded = new Set();
    registerHooks({ load(url, context, next) { loaded.add(url); return next(url, context); } });
    const cpu = process.cpuUsage();
    const t = performance.now();
    await import(${JSON.stringify(entry)});
    const ms = performance.now() - t;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    const dir = ${JSON.stringify(pathToFileURL(dir).href)};
    const bytes = [...loaded].filter((u) => u.startsWith(dir)).reduce((n, u) => n + statSync(fileURLToPath(u)).size, 0);
    process.stdout.write(JSON.stringify({ ms, cpuMs, bytes, node: process.version }));`;
  // As the stack deploys them (lib/notifier-function.ts): source maps on, the X-Ray SDK not loaded (traceAwsCalls off),
  // evidence kept in a bucket (lib/evidence-store.ts: the stack always sets one), so its S3 client is made at init.
  const out = execFileSync(node, ['--enable-source-maps', '--input-type=module', '-e', script], {
    env: {
      ...process.env,
      TABLE_NAME: 'bench',
      EVIDENCE_INDEX_TABLE_NAME: 'bench-evidence-index',
      SENDER_EMAIL: 'bench@example.com',
      BRAND: brandEnvValue(EXAMPLE_BRAND),
      AWS_REGION: 'us-east-1',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      POWERTOOLS_TRACE_ENABLED: 'false',
      EVIDENCE_BUCKET: 'bench-evidence',
      EVIDENCE_SPOOL_BELOW: String(SPOOL_BELOW_RECORDS),
      ...(compileCache === undefined ? {} : { NODE_COMPILE_CACHE: compileCache }),
    },
    encoding: 'utf8',
  });
  return JSON.parse(out) as Run;
}

/**
 * Each bundle's init, the median of `samples` runs taken in turns (one of each, then again), so that a machine whose
 * load changes during the run weighs on the bundle and its floor alike; a first round, not counted, warms the files
 * and the compile caches.
 */
function initsOf(node: string, runs: readonly { dir: string; compileCache?: string }[], samples: number): Init[] {
  const taken = runs.map(() => [] as Run[]);
  for (let i = -1; i < samples; i++) {
    runs.forEach((r, k) => {
      const run = initRun(node, r.dir, r.compileCache);
      if (i >= 0) taken[k]?.push(run);
    });
  }
  return taken.map((t) => ({
    initMs: round2(median(t.map((r) => r.ms))),
    initCpuMs: round2(median(t.map((r) => r.cpuMs))),
    initBytes: Math.max(...t.map((r) => r.bytes)),
    node: [...new Set(t.map((r) => r.node))].join(', '),
  }));
}

/** A floor function: the SDK clients built once, as a handler's module scope does, and a handler using them. */
function floorSource(name: string): string {
  const imports = Object.entries(SDK_FLOOR[name] ?? {});
  const names = imports.flatMap(([, ns]) => ns);
  return [
    ...imports.map(([pkg, ns]) => `import { ${ns.join(', ')} } from '${pkg}';`),
    `export const handler = async () => [${names.join(', ')}].length;`,
    '',
  ].join('\n');
}

type Init = { initMs: number; initCpuMs: number; initBytes: number; node: string };

/** The functions the bench bundles, each beside its SDK-only floor. */
export const BUNDLED_FUNCTIONS = Object.keys(SDK_FLOOR);

/**
 * One function bundled as the stack bundles it, into `<out>/<name>`, and its floor into `<out>/<name>-floor`; both
 * metafiles. The floor's source is written in the repository's folder for the build (so its imports resolve from
 * node_modules), under a name of this process's, and removed after.
 */
export function buildWithFloor(name: string, out: string) {
  const dir = join(out, name);
  const metafile = bundleFunction(join(REPO, 'functions', name, 'index.ts'), dir, { metafile: true })
    .metafile as Metafile;
  const floorDir = join(out, `${name}-floor`);
  mkdirSync(floorDir, { recursive: true });
  const floorEntry = join(REPO, `.bench-floor-${name}-${process.pid}.ts`);
  writeFileSync(floorEntry, floorSource(name));
  try {
    const floorMetafile = bundleFunction(floorEntry, floorDir, { metafile: true }).metafile as Metafile;
    return { dir, floorDir, metafile, floorMetafile };
  } finally {
    rmSync(floorEntry, { force: true });
  }
}

/**
 * What a cold start reads, from the metafile: index.mjs and the chunks it imports statically, with their bytes and
 * the source files in them — the bytes initRun's load hook counts, without running the bundle (a chunk imported with
 * a top-level await, which initRun also sees, is not among them: none of the functions imports one at init unless its
 * stage asks, as in a stage in two regions).
 */
export function staticInit(metafile: Metafile): { bytes: number; sources: Set<string> } {
  const outputs = metafile.outputs;
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path) || outputs[path] === undefined) return;
    seen.add(path);
    for (const i of outputs[path].imports) if (i.kind === 'import-statement') visit(i.path);
  };
  visit(Object.keys(outputs).find((k) => k.endsWith('/index.mjs')) ?? '');
  const files = [...seen].map((k) => outputs[k] as Metafile['outputs'][string]);
  return {
    bytes: files.reduce((n, o) => n + o.bytes, 0),
    sources: new Set(files.flatMap((o) => Object.keys(o.inputs))),
  };
}

export async function measureBundles(samples: number) {
  const node = runtimeNode();
  const out = mkdtempSync(join(tmpdir(), 'notifier-bundles-'));
  const result = [];
  try {
    for (const name of BUNDLED_FUNCTIONS) {
      const { dir, floorDir, metafile } = buildWithFloor(name, out);
      const files = filesOf(metafile);
      const [mine, floor, mineCached, floorCached] = initsOf(
        node,
        [
          { dir },
          { dir: floorDir },
          { dir, compileCache: join(out, `${name}-compile-cache`) },
          { dir: floorDir, compileCache: join(out, `${name}-floor-compile-cache`) },
        ],
        samples,
      ) as [Init, Init, Init, Init];
      result.push({
        name,
        /** The Node every init of this row ran on (process.version in the timed process). */
        node: mine.node,
        initBytes: mine.initBytes,
        totalBytes: files.totalBytes,
        chunks: files.chunks,
        initMs: mine.initMs,
        floorBytes: floor.initBytes,
        floorInitMs: floor.initMs,
        bytesOverFloor: round2(mine.initBytes / floor.initBytes),
        initOverFloor: round2(mine.initMs / floor.initMs),
        initCpuMs: mine.initCpuMs,
        floorInitCpuMs: floor.initCpuMs,
        initCpuOverFloor: round2(mine.initCpuMs / floor.initCpuMs),
        initMsCompileCache: mineCached.initMs,
        floorInitMsCompileCache: floorCached.initMs,
      });
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return result;
}
