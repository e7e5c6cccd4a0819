/**
 * Issue 18: the stack's peak setting sizes the sweep index's shards, and every function that writes or reads a sweep key
 * gets the same count; a peak beyond what the index takes fails the synth with a message that names the key.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { createNotifierStack } from '../../lib/notifier-app.ts';
import { EXAMPLE_ONE_REGION } from '../support/synth.ts';

const synth = (context: Record<string, unknown> = {}) => {
  const app = new App({
    context: { settingsFile: EXAMPLE_ONE_REGION, ...context, 'aws:cdk:bundling-stacks': [] },
  });
  return Template.fromStack(createNotifierStack(app)).toJSON() as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
};
const shardsOf = (json: ReturnType<typeof synth>) =>
  Object.fromEntries(
    Object.entries(json.Resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .map(([id, r]) => [
        id.replace(/(Function)?[0-9A-F]{8}$/, ''),
        (r.Properties.Environment as { Variables?: Record<string, string> } | undefined)?.Variables?.SWEEP_SHARDS,
      ])
      .filter(([, v]) => v !== undefined),
  );

describe('peakNotificationsPerSecond', () => {
  it('defaults to 1,000 per second: 8 shards per state and channel, the same in ingest, dispatch and the sweeper', () => {
    expect(shardsOf(synth())).toEqual({ Ingest: '8', Dispatch: '8', Sweeper: '8' });
  });

  it('10,000 per second: 64 shards, so a key takes 3 × 10,000 / 64 ≈ 469 writes per second', () => {
    expect(shardsOf(synth({ peakNotificationsPerSecond: '10000' }))).toEqual({
      Ingest: '64',
      Dispatch: '64',
      Sweeper: '64',
    });
  });

  it('a peak the index cannot take fails the synth, naming the key and the limit', () => {
    expect(() => synth({ peakNotificationsPerSecond: '42667' })).toThrow(
      /"peakNotificationsPerSecond" is invalid: must be at most 42666/,
    );
    expect(() => synth({ peakNotificationsPerSecond: '0' })).toThrow(/"peakNotificationsPerSecond" is invalid/);
  });
});
