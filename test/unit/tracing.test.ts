import { describe, expect, it } from 'vitest';
import { tracingPossible } from '../../functions/commons/powertools.ts';

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

  it('never outside Lambda: the local run, the tests and the bench', () => {
    expect(tracingPossible({})).toBe(false);
    expect(tracingPossible({ AWS_EXECUTION_ENV: '' })).toBe(false);
  });

  it('this test process did not load the X-Ray SDK by importing the Powertools module', () => {
    expect((process as unknown as { namespaces?: Record<string, unknown> }).namespaces?.AWSXRay).toBeUndefined();
  });
});
