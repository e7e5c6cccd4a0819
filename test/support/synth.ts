/** The CDK app synthesized from a settings file, offline and without bundling, as the infra tests read it. */
import { App } from 'aws-cdk-lib';
import { createNotifierStack } from '../../lib/notifier-app.ts';

/** A real stage's settings (a brand of its own, push applications, the cluster's network, a past cutover). */
export const PRODUCTION_LIKE = 'test/infra/fixtures/settings.production.json';

export type TemplateResource = {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string[];
  DeletionPolicy?: string;
};
export type SynthesizedTemplate = { Resources: Record<string, TemplateResource> };

export function synthTemplate(settingsFile: string, overrides: Record<string, unknown> = {}) {
  const app = new App({ context: { settingsFile, ...overrides, 'aws:cdk:bundling-stacks': [] } });
  const stack = createNotifierStack(app);
  return { template: app.synth().getStackByName(stack.stackName).template as SynthesizedTemplate, stack };
}
