/** Powertools instances, created once per execution environment and shared by the handlers' modules. */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

const namespace = process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'notifier';

export const logger = new Logger();
export const metrics = new Metrics({ namespace });
export const tracer = new Tracer();
