import { describe, expect, it } from 'vitest';
import { callerOf } from '../../tools/bench/caller.ts';

const stack = [
  'Error',
  '    at Client.probed (/repo/tools/bench/cost-probe.ts:200:17)',
  '    at DynamoDBDocumentClient.send (/repo/node_modules/@aws-sdk/lib-dynamodb/dist-cjs/index.js:1:1)',
  '    at withRetries (/repo/functions/commons/retry.ts:10:3)',
  '    at async DynamoNotificationStore.heldUpdate (/repo/functions/stores/notification-store.ts:301:7)',
  '    at async DynamoNotificationStore.transition (/repo/functions/stores/notification-store.ts:270:20)',
  '    at async DynamoNotificationStore.finish (file:///repo/functions/stores/notification-store.ts:240:5)',
  '    at async Holder.record (/repo/functions/dispatch/dispatch-notification.ts:380:16)',
  '    at async sent (/repo/functions/dispatch/dispatch-notification.ts:230:3)',
].join('\n');

describe('the cost run names where each request comes from', () => {
  it('names the first handler frames under functions/, skipping the SDK, the probe and functions/commons', () => {
    expect(callerOf(stack)).toBe('DynamoNotificationStore.heldUpdate < transition < finish < Holder.record');
  });

  it('names an object literal\'s method without "Object."', () => {
    const literal = '    at async Object.recordDelivery (/repo/functions/feedback/index.ts:35:5)';
    expect(callerOf(`Error\n${literal}`)).toBe('recordDelivery');
  });

  it('says so when no frame is in functions/ (the harness, a tool)', () => {
    expect(callerOf('Error\n    at main (/repo/tools/local/run.ts:1:1)')).toBe('outside functions/');
    expect(callerOf(undefined)).toBe('outside functions/');
  });
});
