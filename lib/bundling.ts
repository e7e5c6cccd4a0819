/**
 * How every function is bundled, as plain data (no aws-cdk-lib): the stack's NodejsFunction and the bench's
 * cold-start measurement build from it, so the bench measures the bundle that is deployed.
 */
export const BUNDLE = {
  /** The Lambda runtime is nodejs24.x (lib/notifier-function.ts). */
  target: 'node24',
  minify: true,
  sourceMap: true,
  // ESM bundles need require() for the few CommonJS dependencies that call it.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  mainFields: ['module', 'main'],
} as const;

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
