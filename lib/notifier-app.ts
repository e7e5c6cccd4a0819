/**
 * The one way the app is built, by `bin/notifier.ts` and by the infra tests alike: settings from context (and an
 * optional settings file), the stack named after its stage, deployed to the MSK cluster's account and region. Settings
 * with `regions` (docs/regions.md) build two stacks from the one file: the primary's, which owns the global table,
 * and the recovery region's, `<stack>-recovery`, fenced, its intake disabled.
 */
import type { App } from 'aws-cdk-lib';
import { NotifierStack } from './notifier-stack.ts';
import { guardReplica, type RegionRole } from './regional.ts';
import { operatorsReachEachOther, recoveryOperatorWrites } from './regional-operator.ts';
import { parseRegionsSettings, recoveryReader } from './regions-settings.ts';
import { clusterEnvironment, parseSettings, type Settings, settingsReader, stackNameOf } from './settings.ts';

export interface NotifierStacks {
  readonly primary: NotifierStack;
  /** Only with `regions` in the settings. */
  readonly recovery: NotifierStack | undefined;
}

export function createNotifierStack(app: App, settings?: Settings): NotifierStack {
  return createNotifierStacks(app, settings).primary;
}

export function createNotifierStacks(app: App, given?: Settings): NotifierStacks {
  const read = settingsReader((key) => app.node.tryGetContext(key));
  const settings = given ?? parseSettings(read);
  const regions = given === undefined ? parseRegionsSettings(read, settings) : undefined;
  const name = stackNameOf(settings.stage);
  if (regions === undefined) return { primary: stackOf(app, name, settings, undefined), recovery: undefined };
  const recoveryName = `${name}-recovery`;
  const recoverySettings = parseSettings(recoveryReader(read, regions));
  const role = (kind: RegionRole['kind']): RegionRole => ({
    kind,
    region: kind === 'primary' ? regions.regions.primary : regions.regions.recovery,
    otherRegion: kind === 'primary' ? regions.regions.recovery : regions.regions.primary,
    otherPrefix: kind === 'primary' ? recoveryName : name,
    primaryPrefix: name,
    settings: regions,
    peakNotificationsPerSecond: settings.peakNotificationsPerSecond,
    otherKeyArn: kind === 'primary' ? regions.recovery.kmsKeyArn : settings.kmsKeyArn,
  });
  const primary = stackOf(app, name, settings, role('primary'));
  const recovery = stackOf(app, recoveryName, recoverySettings, role('recovery'));
  // The replica is created by the primary's stack: the recovery region's reads its stream.
  recovery.addStackDependency(primary);
  // The recovery replica's guard names the recovery stack's writers: the primary's stack puts it on the replica.
  guardReplica(primary, primary.breakGlassRole, {
    table: recovery.table,
    breakGlass: recovery.breakGlassRole,
    fromPrimary: [primary.operatorRole],
  });
  // Reconcile settles the old region's records in its replica: each operator reaches the other's (lib/regional-operator.ts).
  operatorsReachEachOther(
    name,
    {
      stack: primary,
      region: regions.regions.primary,
      operatorRole: primary.operatorRole,
      kmsKeyArn: settings.kmsKeyArn,
    },
    {
      stack: recovery,
      region: regions.regions.recovery,
      operatorRole: recovery.operatorRole,
      kmsKeyArn: recoverySettings.kmsKeyArn,
    },
  );
  recoveryOperatorWrites(primary, primary.table, recovery.operatorRole);
  return { primary, recovery };
}

function stackOf(app: App, name: string, settings: Settings, region: RegionRole | undefined): NotifierStack {
  const where = region === undefined ? '' : ` — ${region.kind} region`;
  return new NotifierStack(app, name, {
    settings,
    stackName: name,
    ...(region === undefined ? {} : { region }),
    // The event source mapping cannot cross regions: the stack goes where the cluster is, never elsewhere.
    env: clusterEnvironment(settings.mskClusterArn),
    description: `notifier (${settings.stage}${where}): MSK events to SES/SNS notifications, never twice per (eventId, channel)`,
  });
}
