/** The settings of a stage in two regions, checked at synth: each broken rule named (docs/regions.md). */
import { describe, expect, it } from 'vitest';
import { parseRegionsSettings } from '../../lib/regions-settings.ts';

const PRIMARY = {
  stage: 'example',
  mskClusterArn: 'arn:aws:kafka:ap-northeast-1:123456789012:cluster/bank-events/abc-1',
};
const good = {
  regions: { primary: 'ap-northeast-1', recovery: 'ap-northeast-3', active: 'ap-northeast-1' },
  recovery: {
    mskClusterArn: 'arn:aws:kafka:ap-northeast-3:123456789012:cluster/bank-events-dr/def-2',
    pushPlatformApplicationArns: ['arn:aws:sns:ap-northeast-3:123456789012:app/APNS/bank-app'],
  },
  regionCommandPrincipals: ['arn:aws:iam::123456789012:role/notifier-dr-operators'],
};
const read = (over: Record<string, unknown>) => (key: string) => ({ ...good, ...over })[key];
const problemsOf = (over: Record<string, unknown>, primary: Record<string, unknown> = PRIMARY) => {
  try {
    parseRegionsSettings(read(over), primary as typeof PRIMARY);
    return [];
  } catch (error) {
    return (error as { problems: string[] }).problems;
  }
};

describe('settings for two regions', () => {
  it('a stage with no regions key is a stage in one region', () => {
    expect(parseRegionsSettings(() => undefined, PRIMARY)).toBeUndefined();
  });

  it('the example shape parses, with no second copy and an hour of look-ups by default', () => {
    expect(parseRegionsSettings(read({}), PRIMARY)).toMatchObject({
      failoverSecondCopy: [],
      failoverLookupMinutes: 60,
      failoverClockSkewSeconds: 60,
    });
  });

  it('refuses a stage that does not name who may promote, demote and reconcile, or names something not a role', () => {
    for (const none of [undefined, []]) {
      expect(problemsOf({ regionCommandPrincipals: none })).toEqual([
        expect.stringMatching(
          /^regionCommandPrincipals: name the IAM role ARNs that may promote, demote and reconcile/,
        ),
      ]);
    }
    const user = problemsOf({ regionCommandPrincipals: ['arn:aws:iam::123456789012:user/alice'] });
    expect(user).toEqual([expect.stringMatching(/^regionCommandPrincipals\.0: must be an IAM role ARN/)]);
  });

  it('refuses, by name: one region twice, an active region that is neither, a recovery cluster elsewhere', () => {
    const same = { primary: 'ap-northeast-1', recovery: 'ap-northeast-1', active: 'ap-northeast-1' };
    expect(problemsOf({ regions: same }).join(' ')).toMatch(/regions: the primary and the recovery region must differ/);
    const neither = { ...good.regions, active: 'us-east-1' };
    expect(problemsOf({ regions: neither })).toEqual(['regions.active: must be ap-northeast-1 or ap-northeast-3']);
    const elsewhere = { ...good.recovery, mskClusterArn: 'arn:aws:kafka:us-west-2:123456789012:cluster/x/y-1' };
    expect(problemsOf({ recovery: elsewhere })).toEqual([
      'recovery.mskClusterArn: must be in the recovery region ap-northeast-3',
    ]);
  });

  it('refuses a second copy on SMS or push, a key in one region only, a push application of the wrong region', () => {
    expect(problemsOf({ failoverSecondCopy: ['SMS'] }).join(' ')).toMatch(/failoverSecondCopy.*only EMAIL/);
    const key = 'arn:aws:kms:ap-northeast-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    expect(problemsOf({}, { ...PRIMARY, kmsKeyArn: key })).toEqual([
      'recovery.kmsKeyArn: a customer key for both regions or for neither',
    ]);
    const wrong = {
      ...good.recovery,
      pushPlatformApplicationArns: ['arn:aws:sns:ap-northeast-1:123456789012:app/GCM/a'],
    };
    expect(problemsOf({ recovery: wrong })[0]).toMatch(/is not in ap-northeast-3/);
  });

  it('a real stage says its global table is new: a stage deployed in one region would get a second, empty table', () => {
    const prod = { ...PRIMARY, stage: 'prod' };
    expect(problemsOf({}, prod)).toEqual([expect.stringMatching(/^globalTable: say "create" if this stage has never/)]);
    expect(problemsOf({ globalTable: 'create' }, prod)).toEqual([]);
    expect(problemsOf({ globalTable: 'import' }, prod).join(' ')).toMatch(/globalTable: only "create" is built/);
  });

  it("the recovery replica is guarded unless the settings leave it off for the deploy that creates it (a context value's spelling too)", () => {
    expect(parseRegionsSettings(read({}), PRIMARY)?.replicaGuard).toBe(true);
    expect(parseRegionsSettings(read({ replicaGuard: 'false' }), PRIMARY)?.replicaGuard).toBe(false);
    expect(problemsOf({ replicaGuard: 'no' }).join(' ')).toMatch(/replicaGuard/);
  });
});
