/**
 * The one way the app is built, by `bin/notifier.ts` and by the infra tests alike: settings from context (and an
 * optional settings file), the stack named after its stage, deployed to the MSK cluster's account and region.
 */
import type { App } from 'aws-cdk-lib';
import { NotifierStack } from './notifier-stack.ts';
import { clusterEnvironment, type Settings, settingsFromContext, stackNameOf } from './settings.ts';

export function createNotifierStack(
  app: App,
  settings: Settings = settingsFromContext((key) => app.node.tryGetContext(key)),
): NotifierStack {
  const name = stackNameOf(settings.stage);
  return new NotifierStack(app, name, {
    settings,
    stackName: name,
    // The event source mapping cannot cross regions: the stack goes where the cluster is, never elsewhere.
    env: clusterEnvironment(settings.mskClusterArn),
    description: `notifier (${settings.stage}): MSK events to SES/SNS notifications, never twice per (eventId, channel)`,
  });
}
