/**
 * A region's ingest mapping as promote and demote switch it (docs/regions.md "Promotion and demotion, step by step"):
 * one UpdateEventSourceMapping on the mapping the stack named (INGEST_MAPPING_ID; the operator's role may update that
 * mapping only). What Lambda answered is reported — the mapping's state (Enabling, Disabling: AWS takes up to 90 s) —
 * and a failure is reported too, with the command that does it by hand, never thrown: by then the fence has moved,
 * and the operator must read both in the outcome.
 */
import { type LambdaClient, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import type { IntakeReport } from '../operator/promote.ts';

/** The switch as a region's side takes it (functions/operator/promote.ts RegionSide `intake`). */
export function lambdaIntake(
  lambda: () => LambdaClient,
  region: string,
  mapping: string,
): { enable(): Promise<IntakeReport>; disable(): Promise<IntakeReport> } {
  const switchTo = async (enabled: boolean): Promise<IntakeReport> => {
    try {
      const answer = await lambda().send(new UpdateEventSourceMappingCommand({ UUID: mapping, Enabled: enabled }));
      return { mapping, enabled, ...(answer.State === undefined ? {} : { state: answer.State }) };
    } catch (error) {
      const { name, message } = error as Error;
      const doByHand = `aws lambda update-event-source-mapping --region ${region} --uuid ${mapping} ${enabled ? '--enabled' : '--no-enabled'}, then wait until aws lambda get-event-source-mapping --region ${region} --uuid ${mapping} shows ${enabled ? 'Enabled' : 'Disabled'}`;
      return { mapping, enabled, failed: { error: `${name}: ${message}`, doByHand } };
    }
  };
  return { enable: () => switchTo(true), disable: () => switchTo(false) };
}
