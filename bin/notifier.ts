#!/usr/bin/env node
/**
 * The CDK app: the stack for the stage the settings name, and every rule set on it (lib/compliance.ts): cdk-nag's
 * AwsSolutions, Serverless, PCI DSS, NIST 800-53 and HIPAA packs and Control Tower's proactive controls. A finding
 * no acknowledgement covers fails the synth, and so `cdk deploy`.
 */
import { App } from 'aws-cdk-lib';
import { addRuleSets, openFindings } from '../lib/compliance.ts';
import { createNotifierStacks } from '../lib/notifier-app.ts';
import { SettingsError } from '../lib/settings.ts';

const app = new App();
try {
  createNotifierStacks(app);
} catch (error) {
  // A settings problem is the deployer's to fix: say what, without a stack trace.
  if (!(error instanceof SettingsError)) throw error;
  console.error(`notifier settings:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
addRuleSets(app);
const open = openFindings(app.synth());
if (open.length > 0) {
  console.error(
    `notifier: ${open.length} finding(s) without an acknowledgement:\n${open.map((f) => `  - ${f}`).join('\n')}`,
  );
  process.exit(1);
}
