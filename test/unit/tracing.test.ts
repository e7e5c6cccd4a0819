import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tracingPossible } from '../../functions/commons/powertools.ts';

/** In a fresh Node process with `env`: whether the X-Ray SDK was loaded, and the clients' X-Ray middleware. */
function tracedIn(env: Record<string, string>): { xray: boolean; middleware: string[] } {
  const client = fileURLToPath(new URL('../../functions/commons/dynamodb-client.ts', import.meta.url));
  const code = `const { documentClient } = await import(${JSON.stringify(client)});
console.log(JSON.stringify({ xray: Boolean(process.namespaces?.AWSXRay),
  middleware: documentClient.middlewareStack.identify().filter((n) => /xray/i.test(n)) }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    env: { ...process.env, AWS_REGION: 'us-east-1', AWS_EXECUTION_ENV: '', POWERTOOLS_TRACE_ENABLED: '', ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}');
}

// The X-Ray SDK behind the Tracer hooks every promise of the process once imported, traced or not; it is loaded only
// where the Tracer would trace (functions/commons/powertools.ts).
describe('the Tracer is loaded only where it can trace', () => {
  it('in Lambda (AWS_EXECUTION_ENV set), unless POWERTOOLS_TRACE_ENABLED is false', () => {
    expect(tracingPossible({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' })).toBe(true);
    expect(tracingPossible({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'true' })).toBe(
      true,
    );
    expect(tracingPossible({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'FALSE' })).toBe(
      false,
    );
  });

  it('never outside Lambda: the local run, the tests and the bench, CloudShell, ECS', () => {
    expect(tracingPossible({})).toBe(false);
    expect(tracingPossible({ AWS_EXECUTION_ENV: '' })).toBe(false);
    expect(tracingPossible({ AWS_EXECUTION_ENV: 'CloudShell' })).toBe(false);
    expect(tracingPossible({ AWS_EXECUTION_ENV: 'AWS_ECS_FARGATE' })).toBe(false);
  });

  it('in a Lambda runtime the SDK clients get their X-Ray subsegments; elsewhere the X-Ray SDK is not even loaded', () => {
    expect(tracedIn({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' })).toEqual({
      xray: true,
      middleware: ['XRaySDKInstrumentation - build'],
    });
    expect(tracedIn({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'false' })).toEqual({
      xray: false,
      middleware: [],
    });
    expect(tracedIn({})).toEqual({ xray: false, middleware: [] });
    // Three child processes that each load the SDK: seconds alone, far more on a shared, loaded machine.
  }, 60_000);

  it('this test process did not load the X-Ray SDK by importing the Powertools module', () => {
    expect((process as unknown as { namespaces?: Record<string, unknown> }).namespaces?.AWSXRay).toBeUndefined();
  });
});
