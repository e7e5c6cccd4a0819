/**
 * Lambda active tracing as a setting (lib/tracing.ts): on, every function of the stage is traced and may write its
 * segments (and in the stage's VPC reaches X-Ray through an endpoint); off — the default, and what a bank's production
 * settings state — no function is traced, none holds an X-Ray permission, and no X-Ray endpoint is paid for. The API
 * stages stay traced either way (HIPAA's and Control Tower's rules ask it; a person's requests cost nothing that
 * matters). A value that is neither is refused at synth, and so is tracing AWS calls with tracing off.
 */
import { describe, expect, it } from 'vitest';
import { PRODUCTION_LIKE, readTemplate } from '../support/synth.ts';
import production from './fixtures/settings.production.json' with { type: 'json' };

/** CDK's AwsCustomResource provider: CDK's own function, invoked by CloudFormation during a deploy. */
const PROVIDER = /^AWS679f53fac002430cb0da5b7982bd2287/;

function read(overrides: Record<string, unknown> = {}) {
  const t = readTemplate(PRODUCTION_LIKE, overrides);
  const functions = t.all.filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && !PROVIDER.test(id));
  const xrayActions = t.all
    .filter(([, r]) => r.Type === 'AWS::IAM::Policy')
    .flatMap(([, r]) => t.statementsOf(r.Properties.PolicyDocument))
    .flatMap((st) => [st.Action].flat())
    .filter((a) => String(a).startsWith('xray:'));
  const xrayEndpoints = t.all.filter(
    ([, r]) =>
      r.Type === 'AWS::EC2::VPCEndpoint' && JSON.stringify(t.resolve(r.Properties.ServiceName)).endsWith('.xray"'),
  );
  const stages = t.all.filter(([, r]) => r.Type === 'AWS::ApiGateway::Stage').map(([, r]) => r.Properties);
  return { functions, xrayActions, xrayEndpoints, stages };
}

describe('tracing, a setting', () => {
  it("a bank's production settings state their choice, and it is the default: off", () => {
    expect(production.tracing).toBe('off');
  });

  const on = read({ tracing: 'active' });
  const off = read();

  it('on: every function is traced, may write its segments, and reaches X-Ray from the VPC', () => {
    // Ingest, dispatch, the sweeper, feedback, the operator function, the smoke producer, the console's two.
    expect(on.functions.length).toBeGreaterThanOrEqual(8);
    for (const [id, fn] of on.functions) expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
    expect(on.xrayActions).toContain('xray:PutTraceSegments');
    expect(on.xrayEndpoints).toHaveLength(1);
  });

  it('off: no function is traced, none may write to X-Ray, and there is no X-Ray endpoint to pay for', () => {
    expect(off.functions).toHaveLength(on.functions.length);
    for (const [id, fn] of off.functions) expect(fn.Properties.TracingConfig, id).toBeUndefined();
    expect(off.xrayActions).toEqual([]);
    expect(off.xrayEndpoints).toEqual([]);
  });

  it('the API stages are traced either way', () => {
    for (const t of [on, off]) {
      expect(t.stages.length).toBeGreaterThan(0);
      for (const stage of t.stages) expect(stage.TracingEnabled).toBe(true);
    }
  });

  it('refuses a value that is neither "active" nor "off", and AWS calls traced with tracing off', () => {
    expect(() => read({ tracing: 'on' })).toThrow(/context key "tracing" is invalid/);
    expect(() => read({ tracing: 'PassThrough' })).toThrow(/context key "tracing" is invalid/);
    expect(() => read({ traceAwsCalls: 'true' })).toThrow(
      /"traceAwsCalls" adds subsegments to traces: it needs tracing "active"/,
    );
    expect(() => read({ traceAwsCalls: 'true', tracing: 'active' })).not.toThrow();
  });
});
