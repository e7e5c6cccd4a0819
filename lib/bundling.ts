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
