/**
 * The house rules, checked on the source itself: dependencies point one way (the CDK app may import the runtime, never
 * the reverse; the domain stays pure; the contracts read only the domain; the plumbing writes no table), the runtime
 * has no import cycle, files and functions stay small, a branch on the channel is one the compiler checks, the tools
 * reach the product only through its entries and write its table only through it, every metric name is emitted
 * somewhere, and every document the code cites is in the repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../functions/contracts/telemetry.ts';

const root = resolve(import.meta.dirname, '../..');
const filesUnder = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
const source = (file: string) => readFileSync(join(root, file), 'utf8');
/** Module specifiers a file imports at run time (`import type` is erased and cannot create a cycle or a dependency). */
const valueImports = (file: string) =>
  [...source(file).matchAll(/^import (?!type )[^;]*?from '([^']+)';/gms)].map((m) => m[1] as string);
const localTarget = (file: string, spec: string) => relative(root, resolve(dirname(join(root, file)), spec));

const runtime = filesUnder('functions');

describe('dependencies point one way', () => {
  it('no runtime module imports the CDK app, the local run, the bench, the chaos suite or the tests', () => {
    const outward = runtime.flatMap((file) =>
      [...source(file).matchAll(/from '([^']+)'/g)]
        .map((m) => m[1] as string)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => localTarget(file, spec))
        .filter((target) => !target.startsWith('functions/'))
        .map((target) => `${file} → ${target}`),
    );
    expect(outward).toEqual([]);
  });

  it('the domain is pure: no AWS SDK, no Powertools, no adapters or handlers', () => {
    const impure = filesUnder('functions/domain').flatMap((file) =>
      valueImports(file)
        .filter(
          (spec) =>
            spec.startsWith('@aws-sdk/') ||
            spec.startsWith('@aws-lambda-powertools/') ||
            (spec.startsWith('.') && !localTarget(file, spec).startsWith('functions/domain/')),
        )
        .map((spec) => `${file} → ${spec}`),
    );
    expect(impure).toEqual([]);
  });

  it('the contracts the stack reads import only the domain and other contracts (a package only as a type)', () => {
    const outside = filesUnder('functions/contracts').flatMap((file) =>
      allImports(file)
        .filter((spec) =>
          spec.startsWith('.')
            ? !/^functions\/(domain|contracts)\//.test(localTarget(file, spec))
            : valueImports(file).includes(spec),
        )
        .map((spec) => `${file} → ${spec}`),
    );
    expect(outside).toEqual([]);
  });

  it('the shared plumbing (functions/commons) writes no table: every write is a store method', () => {
    const writes = /\b(Put|Update|Delete|TransactWrite|BatchWrite)(Item|Items)?Command\b/;
    expect(filesUnder('functions/commons').filter((file) => writes.test(source(file)))).toEqual([]);
  });

  it('the runtime modules have no import cycle, type imports included', () => {
    expect(cyclesOf(runtime, allImports)).toEqual([]);
  });

  it("the CDK app's modules have no import cycle, type imports included: the stack composes its parts, never the reverse", () => {
    expect(cyclesOf(filesUnder('lib'), allImports)).toEqual([]);
  });

  // Type imports are erased, so they cannot make a cycle at run time — which is why the check above misses them — but a
  // circle of facts is a circle all the same: in the domain, a module that needs another's type depends on it.
  it('the domain modules have no import cycle, type imports included', () => {
    expect(cyclesOf(filesUnder('functions/domain'), allImports)).toEqual([]);
  });

  it('the cycle check sees a cycle made of type imports alone', () => {
    const fake: Record<string, string> = {
      'functions/domain/a.ts': "import type { B } from './b.ts';",
      'functions/domain/b.ts': "import type { A } from './a.ts';",
    };
    const imports = (file: string) => [...(fake[file] ?? '').matchAll(/from '([^']+)'/g)].map((m) => m[1] as string);
    expect(cyclesOf(Object.keys(fake), imports)).toEqual([
      'functions/domain/a.ts → functions/domain/b.ts → functions/domain/a.ts',
    ]);
  });
});

/**
 * What a tool may import from functions/: each function's handler (its index.ts; functions/operator/index.ts is the
 * operator's use cases), each function's use case, the pure domain, the contracts the stack reads, and the shared
 * stores (ports with their adapters). Never the other parts of a function's folder, nor the shared plumbing.
 */
const ENTRY_MODULES: readonly RegExp[] = [
  /^functions\/[a-z-]+\/index\.ts$/,
  /^functions\/(ingest\/ingest-batch|dispatch\/dispatch-notification|sweeper\/sweep|sweeper\/keeper|feedback\/record-feedback|smoke\/produce-smoke-event)\.ts$/,
  /^functions\/domain\//,
  /^functions\/contracts\//,
  /^functions\/stores\/[a-z-]+\.ts$/,
];

/**
 * The parts the white-box harnesses wrap — the bench times a step inside a handler or measures a part on its own, the
 * chaos suite crashes a step and watches it — each with its reason, and only they may. A seam no longer used leaves
 * this list (the test says so), so the list only shrinks.
 */
const HARNESS_SEAMS: Readonly<Record<string, { readonly tools: RegExp; readonly why: string }>> = {
  'functions/commons/dynamodb-client.ts': {
    tools: /^tools\/(chaos\/world|bench\/(e2e-trace|console|sweep-backlog))\.ts$/,
    why: "the handlers' one DynamoDB client: the chaos suite injects its faults into it, the end-to-end bench times each commit, the console bench counts a page's requests, the sweep-backlog bench the read units of the sweeper's Queries",
  },
  'functions/dispatch/senders.ts': {
    tools: /^tools\/(chaos\/witness|bench\/(e2e-trace|dispatch)|drill\/region)\.ts$/,
    why: "dispatch's provider call: the chaos witness ties each accepted send to its attempt, the bench times it and sends through it on real SDK clients, the drill's regions send through it",
  },
  'functions/dispatch/send-error.ts': {
    tools: /^tools\/chaos\/witness\.ts$/,
    why: 'a send whose outcome is unknown: the only legitimate cause of a second send, as the witness must tell',
  },
  'functions/dispatch/pacer.ts': {
    tools: /^tools\/(bench\/(quota|e2e-trace|cost-at-rate)|drill\/region)\.ts$/,
    why: 'the shared send quota: the bench measures it across environments, times its wait inside dispatch, and prices its writes by its chunk',
  },
  'functions/dispatch/send-quota-store.ts': {
    tools: /^tools\/bench\/quota\.ts$/,
    why: "the shared send quota's windows in the table, under the pacer the bench measures",
  },
  'functions/dispatch/provider-request.ts': {
    tools: /^tools\/(bench\/dispatch|scripts\/spool-samples)\.ts$/,
    why: "the provider request a send makes: the bench builds each send's evidence from it, as the sender's own builder does, and so do the records the spool's compression dictionary is built from",
  },
  'functions/ingest/inbox-port.ts': {
    tools: /^tools\/drill\/region\.ts$/,
    why: "ingest's store contract: the drill's regions wire the owned store around each region's own store through it",
  },
  'functions/ingest/inbox-store.ts': {
    tools: /^tools\/(bench\/(ingest|cpu)|drill\/(region|play))\.ts$/,
    why: "ingest's store, under the ingest use case the bench measures on DynamoDB Local, under latency and for CPU; the drill's two regions each wire their own (the handlers are module singletons of one environment)",
  },
  'functions/ingest/owned-inbox-store.ts': {
    tools: /^tools\/drill\/region\.ts$/,
    why: "ingest's store in a stage with two regions: the drill wires each region's ingest as its handler would",
  },
  'functions/dispatch/fenced-sender.ts': {
    tools: /^tools\/drill\/region\.ts$/,
    why: "the fence read before every provider call: the drill wires it in front of each region's mocked provider",
  },
  'functions/dispatch/channel-breaker.ts': {
    tools: /^tools\/drill\/region\.ts$/,
    why: "dispatch's dependencies, wired per region by the drill (two regions in one process)",
  },
  'functions/dispatch/record-evidence.ts': {
    tools: /^tools\/bench\/dispatch\.ts$/,
    why: "dispatch's evidence path as deployed (intent, record, spool or batch): the bench times the send slot with it",
  },
  'functions/dispatch/send-slots.ts': {
    tools: /^tools\/bench\/dispatch\.ts$/,
    why: "the handler's send slots (a spooled send's slot free at its put): the bench runs each invocation's sends in them",
  },
  'functions/dispatch/stream-record.ts': {
    tools: /^tools\/drill\/play\.ts$/,
    why: "the dispatch trigger's reading of a stream record: the drill plays each region's trigger",
  },
};

/** Every module a file names: static and type imports, re-exports, and dynamic imports. */
const namedModules = (file: string) =>
  [...source(file).matchAll(/(?:^(?:import|export)\s[^;]*?from\s+|\bimport\(\s*)'([^']+)'/gms)].map(
    (m) => m[1] as string,
  );

/** Each import of functions/ by a tool that is neither an entry module nor a seam that tool may wrap. */
function outsideEntries(edges: readonly (readonly [tool: string, target: string])[]): string[] {
  return edges
    .filter(([, target]) => target.startsWith('functions/'))
    .filter(([, target]) => !ENTRY_MODULES.some((entry) => entry.test(target)))
    .filter(([tool, target]) => HARNESS_SEAMS[target]?.tools.test(tool) !== true)
    .map(([tool, target]) => `${tool} → ${target}`);
}

const toolEdges = () =>
  filesUnder('tools').flatMap((tool) =>
    namedModules(tool)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => [tool, localTarget(tool, spec.replace(/\?.*$/, ''))] as const),
  );

describe('the tools reach the product through its entries', () => {
  it("a tool imports a function's handler or use case, the operator's entry, the domain, the contracts or a store — no other part of functions/", () => {
    expect(outsideEntries(toolEdges())).toEqual([]);
  });

  it('the rule sees a part of a function reached from a tool, and a seam reached by a tool it is not for', () => {
    expect(
      outsideEntries([
        ['tools/local/run.ts', 'functions/ingest/index.ts'],
        ['tools/local/run.ts', 'functions/dispatch/pacer.ts'],
        ['tools/ops/cli.ts', 'functions/commons/config.ts'],
        ['tools/bench/quota.ts', 'functions/dispatch/pacer.ts'],
      ]),
    ).toEqual(['tools/local/run.ts → functions/dispatch/pacer.ts', 'tools/ops/cli.ts → functions/commons/config.ts']);
  });

  it('every declared seam is still wrapped by a harness (a seam nobody uses leaves the list)', () => {
    const used = new Set(toolEdges().map(([, target]) => target));
    expect(Object.keys(HARNESS_SEAMS).filter((seam) => !used.has(seam))).toEqual([]);
  });

  it("no tool constructs a write to the product's table: the only item writes are the bench's fixtures and its baseline", () => {
    // The product writes its table through its own code (functions/operator, the stores); a tool that seeds a bench's
    // table of its own (seed.ts) or measures the baseline a team would otherwise write (powertools-baseline.ts) aside,
    // and the drill's stand-in for AWS's own replication between two regions' tables (replication.ts), its emptying of
    // a worker's own tables between schedules (tables.ts), and the planted fault that writes a promotion's decisions
    // onto the old region's items, which the drill's verdict must catch (operator.ts, `takeover-in-place`).
    const allowed = [
      'tools/bench/seed.ts',
      'tools/bench/powertools-baseline.ts',
      'tools/drill/replication.ts',
      'tools/drill/tables.ts',
      'tools/drill/operator.ts',
    ];
    const writes =
      /\b(?:Put|Update|Delete|BatchWrite|TransactWrite)(?:Item|Items)?Command\b[^;]*from\s+'@aws-sdk\/(?:lib-dynamodb|client-dynamodb)'/s;
    const writers = filesUnder('tools').filter((file) =>
      [...source(file).matchAll(/^import\s[^;]*?;/gms)].some((m) => writes.test(m[0])),
    );
    expect(writers.filter((file) => !allowed.includes(file))).toEqual([]);
    expect(allowed.filter((file) => !writers.includes(file))).toEqual([]);
  });
});

/** Module specifiers a file imports, `import type` included. */
function allImports(file: string): string[] {
  return [...source(file).matchAll(/^import [^;]*?from '([^']+)';/gms)].map((m) => m[1] as string);
}

/** Every import cycle among `files`, each as its path. */
function cyclesOf(files: string[], importsOf: (file: string) => string[]): string[] {
  const graph = new Map(
    files.map((file) => [
      file,
      importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => localTarget(file, spec)),
    ]),
  );
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  return cycles;
}

describe('small files and short functions', () => {
  // Generated modules (the catalogue, the templates) are data, not code to read.
  const handWritten = ['functions', 'lib'].flatMap(filesUnder).filter((file) => !file.endsWith('.generated.ts'));

  it('no hand-written file of the runtime or the CDK app is over 500 lines', () => {
    const long = handWritten.filter((file) => source(file).split('\n').length > 500);
    expect(long).toEqual([]);
  });

  it('no function of the runtime or the CDK app (a constructor included) is over 120 lines', () => {
    expect(handWritten.flatMap((file) => longFunctions(file, 120))).toEqual([]);
  });
});

/** Functions, methods and arrow functions of `file` longer than `max` lines, each as file:line name (lines). */
function longFunctions(file: string, max: number): string[] {
  const tree = ts.createSourceFile(file, source(file), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = tree.getLineAndCharacterOfPosition(node.getStart()).line;
      const lines = tree.getLineAndCharacterOfPosition(node.end).line - first + 1;
      const name = node.name?.getText() ?? ts.SyntaxKind[node.kind];
      if (lines > max) found.push(`${file}:${first + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

describe('a channel is a union the compiler checks', () => {
  // Everywhere but tools/scripts, whose template compiler and screenshot script read one channel's files by name.
  const channelCode = ['functions', 'lib', 'tools/local', 'tools/chaos', 'tools/ops', 'tools/bench']
    .flatMap(filesUnder)
    .filter((file) => !file.endsWith('.generated.ts'));

  it('no module tests a channel against one name: a branch on the channel is a switch or a Record<Channel, …>', () => {
    expect(channelCode.filter((file) => namedChannelTests(source(file)).length > 0)).toEqual([]);
  });

  it('every switch on a channel ends in unknownChannel, so a new channel is a compile error there', () => {
    expect(channelCode.flatMap((file) => openChannelSwitches(source(file)).map((at) => `${file}: ${at}`))).toEqual([]);
  });

  it('the channel checks see a comparison, an includes and a switch without its default', () => {
    const code = `if (c === 'PUSH') x();
const y = list.includes('SMS');
switch (m.channel) {
  case 'EMAIL':
    return 1;
}
switch (channel) {
  case 'EMAIL':
    return { a: 1 };
  default:
    return unknownChannel(channel);
}`;
    expect(namedChannelTests(code)).toEqual(["=== 'PUSH'", ".includes('SMS')"]);
    expect(openChannelSwitches(code)).toEqual(['switch (m.channel)']);
  });
});

/** Comparisons of a value with one channel's name: what a new channel would silently fall past. */
function namedChannelTests(code: string): string[] {
  return [
    ...code.matchAll(/[!=]==\s*'(?:EMAIL|PUSH|SMS)'|'(?:EMAIL|PUSH|SMS)'\s*[!=]==|\.includes\('(?:EMAIL|PUSH|SMS)'\)/g),
  ].map((m) => m[0]);
}

/** Each `switch (….channel)` whose body has no unknownChannel (or `satisfies never`) default. */
function openChannelSwitches(code: string): string[] {
  return [...code.matchAll(/switch \(((?:[\w.]+\.)?channel)\) \{/g)]
    .filter((m) => {
      let depth = 0;
      let end = m.index + m[0].length - 1;
      for (; end < code.length; end++) {
        if (code[end] === '{') depth++;
        if (code[end] === '}' && --depth === 0) break;
      }
      return !/default:[\s\S]*?(unknownChannel\(|satisfies never)/.test(code.slice(m.index, end));
    })
    .map((m) => `switch (${m[1]})`);
}

describe('every fact written once', () => {
  it('every key and id is built and parsed in functions/domain/keys.ts only: no one else splits on # or slices a prefix', () => {
    const handMade = ['functions', 'tools']
      .flatMap(filesUnder)
      .filter((file) => file !== 'functions/domain/keys.ts')
      .filter((file) =>
        /split\('#'\)|lastIndexOf\('#'\)|indexOf\('#'\)|'(EVENT|NOTIFICATION|QUARANTINE)#'\.length/.test(source(file)),
      );
    expect(handMade).toEqual([]);
  });

  it("every PENDING sweep key the product writes carries the notice's class: it comes from pendingSweepKey", () => {
    // sweepKey('PENDING', …) without a class would put a critical notice where the sweeper serves it last.
    const classless = ['functions', 'tools/ops', 'tools/local']
      .flatMap(filesUnder)
      .filter((file) => file !== 'functions/domain/notification.ts')
      .filter((file) => /sweepKey\(\s*'PENDING'/.test(source(file)));
    expect(classless).toEqual([]);
  });

  it('every registered metric name is emitted by a function (a name nobody emits would be an alarm that never fires)', () => {
    const emitted = runtime
      .filter((f) => !f.endsWith('telemetry.ts'))
      .map(source)
      .join('\n');
    expect(METRIC_NAMES.filter((name) => !emitted.includes(`'${name}'`))).toEqual([]);
  });

  it('every document the code cites is in the repository', () => {
    const code = ['functions', 'lib', 'tools', 'test'].flatMap(filesUnder);
    const cited = code
      .flatMap((file) => [...source(file).matchAll(/\b(docs\/[\w./-]+\.(?:md|json))/g)].map((m) => m[1] as string))
      .filter((doc, i, all) => all.indexOf(doc) === i);
    expect(cited.filter((doc) => !existsSync(join(root, doc)))).toEqual([]);
    // The design the project started from is not in the repository: docs/ replaced it.
    expect(code.filter((file) => /DESIGN\.md/.test(source(file)))).toEqual([]);
  });
});
