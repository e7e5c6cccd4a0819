import { defineConfig } from 'vitest/config';
import { metricNamespaceOf, SERVICE_NAME } from './functions/commons/telemetry.ts';
import { brandEnvValue } from './functions/domain/brand.ts';
import { EXAMPLE_BRAND } from './local/example-brand.ts';

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
  SENDER_EMAIL: 'notifications@example.com',
  BRAND: brandEnvValue(EXAMPLE_BRAND),
  // The fixtures carry fixed dates (test/support/events.ts): with the deployed default (a day) every handler test
  // would turn "too old" the day after it was written. The tests of the age rule set it themselves.
  MAX_EVENT_AGE_SECONDS: '0',
};

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], env } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          env,
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      { test: { name: 'infra', include: ['test/infra/**/*.test.ts'], env, testTimeout: 120_000 } },
    ],
  },
});
