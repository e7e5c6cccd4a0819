#!/usr/bin/env node
/** The CDK app: the stack for the stage the settings name, and cdk-nag's checks on everything. */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { createNotifierStack } from '../lib/notifier-app.ts';
import { SettingsError } from '../lib/settings.ts';

const app = new App();
try {
  createNotifierStack(app);
} catch (error) {
  // A settings problem is the deployer's to fix: say what, without a stack trace.
  if (!(error instanceof SettingsError)) throw error;
  console.error(`notifier settings:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
