import { defineConfig } from 'vitest/config';
import { metricNamespaceOf, SERVICE_NAME } from './functions/contracts/telemetry.ts';
import { brandEnvValue } from './functions/domain/brand.ts';
import { EXAMPLE_BRAND } from './tools/local/example-brand.ts';
import type { LocalFunctionsEnvironment } from './tools/local/pipeline.ts';

/** Environment every project sees: a region and dummy credentials so no test can reach a real account. */
const env = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  POWERTOOLS_METRICS_NAMESPACE: metricNamespaceOf('test'),
  POWERTOOLS_TRACE_ENABLED: 'false',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
  TABLE_NAME: 'notifier-test',
  EVIDENCE_INDEX_TABLE_NAME: 'notifier-test-evidence-index',
  SENDER_EMAIL: 'notifications@example.com',
  BRAND: brandEnvValue(EXAMPLE_BRAND),
  // The fixtures carry fixed dates (test/support/events.ts): with the deployed default (a day) every handler test
  // would turn "too old" the day after it was written. The tests of the age rule set it themselves.
  MAX_EVENT_AGE_SECONDS: '0',
} satisfies Partial<LocalFunctionsEnvironment>;

/**
 * The integration fixtures carry fixed dates (2026-11-30): with the default one-day maximum event age they would all
 * become TOO_OLD a day later and the suite would fail by the calendar. Anything after 2020 is young enough here;
 * TOO_OLD itself is covered by unit tests on a fixed clock and by the chaos run's 1990 events.
 */
const FIXTURE_EVENT_AGE_SECONDS = String(Math.ceil((Date.now() - Date.parse('2020-01-01T00:00:00Z')) / 1000));

/** What every test file has before it runs (the functions load it when a record first needs it). */
const PRELOAD = 'test/support/preload.ts';

export default defineConfig({
  test: {
    projects: [
      {
        // 30 s, not vitest's 5: a unit test's result must never depend on how fast the machine is (clocks are
        // injected), so the timeout only catches a hang — and the static checks (architecture.test.ts parses every
        // module) took over 5 s on a loaded two-core CI machine.
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          env,
          setupFiles: [PRELOAD],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          env: { ...env, MAX_EVENT_AGE_SECONDS: FIXTURE_EVENT_AGE_SECONDS },
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: [PRELOAD],
          // Only a hang should reach it: a CI clone under a load of 12 took 28–30 s for single tests that take 5 here.
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: { name: 'infra', include: ['test/infra/**/*.test.ts'], env, testTimeout: 120_000, setupFiles: [PRELOAD] },
      },
      {
        // The tools around the product — the local run, the operator CLI, the chaos suite, the bench, the generators —
        // tested apart from it, on the same DynamoDB Local set-up.
        test: {
          name: 'tools',
          include: ['test/tools/**/*.test.ts'],
          env: { ...env, MAX_EVENT_AGE_SECONDS: FIXTURE_EVENT_AGE_SECONDS },
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: [PRELOAD],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
