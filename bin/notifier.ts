#!/usr/bin/env node
/** The CDK app: settings from context, one stack, cdk-nag's AwsSolutions checks on everything. */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { NotifierStack } from '../lib/notifier-stack.ts';
import { parseSettings } from '../lib/settings.ts';

const app = new App();
new NotifierStack(app, 'Notifier', {
  settings: parseSettings((key) => app.node.tryGetContext(key)),
  description: 'notifier: MSK events to SES/SNS notifications, never twice per (eventId, channel)',
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
