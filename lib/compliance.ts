/**
 * The rule sets every synth runs (bin/notifier.ts, and the infra tests the same way): cdk-nag's AwsSolutions and
 * Serverless packs, its PCI DSS 3.2.1, NIST 800-53 r5 and HIPAA Security packs, and Control Tower's proactive
 * controls through cfn-guard (@cdklabs/cdk-validator-cfnguard, which ships its own cfn-guard binary: offline). A
 * finding passes only with an acknowledgement in lib/ that says why (lib/nag-acknowledgements.ts and beside the
 * construct it is about).
 *
 * CDK's validation report is the verdict: once any finding of a plugin is acknowledged, CDK counts that plugin as
 * passed even with findings left (it judges by a severity the cfn-guard plugin does not set), so the synth reads
 * the report's open findings itself and fails on any.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { type App, type IPolicyValidationPlugin, Validations } from 'aws-cdk-lib';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, PCIDSS321Checks, ServerlessChecks } from 'cdk-nag';

/** Every rule set, as plugins of the app's validation. */
export function addRuleSets(app: App): void {
  const plugins: IPolicyValidationPlugin[] = [
    new AwsSolutionsChecks(app),
    new ServerlessChecks(app),
    new PCIDSS321Checks(app),
    new NIST80053R5Checks(app),
    new HIPAASecurityChecks(app),
    new CfnGuardValidator(),
  ];
  Validations.of(app).addPlugins(...plugins);
}

interface Report {
  readonly pluginReports?: {
    readonly pluginName: string;
    readonly violations?: {
      readonly ruleName: string;
      readonly description?: string;
      readonly severity?: string;
      readonly violatingConstructs?: { readonly constructPath?: string }[];
    }[];
  }[];
}

/** The findings no acknowledgement covers, one line each: `plugin rule at construct path: description`. */
export function openFindings(assembly: CloudAssembly): string[] {
  let report: Report;
  try {
    report = JSON.parse(readFileSync(join(assembly.directory, VALIDATION_REPORT_FILE), 'utf8')) as Report;
  } catch {
    return []; // No report: no plugin found anything.
  }
  return (report.pluginReports ?? []).flatMap((p) =>
    (p.violations ?? [])
      // The built-in CloudFormation template checks report warnings only; every rule set's finding counts.
      .filter((v) => v.severity !== 'warning' && v.severity !== 'info')
      .flatMap((v) =>
        (v.violatingConstructs ?? [{}]).map(
          (c) => `${p.pluginName} ${v.ruleName} at ${c.constructPath ?? '?'}: ${v.description ?? ''}`,
        ),
      ),
  );
}
