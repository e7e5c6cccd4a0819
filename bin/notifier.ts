#!/usr/bin/env node
/** The CDK app: the stack for the stage the settings name, and cdk-nag's checks on everything. */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { createNotifierStack } from '../lib/notifier-app.ts';

const app = new App();
createNotifierStack(app);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
