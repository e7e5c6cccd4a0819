/**
 * A function's region fence, loaded only in a stage in two regions (FENCE_TABLE_NAME set): the fence store, its
 * rules and what builds them (region-fence.ts) are a chunk of their own, and a stage in one region never loads them
 * at cold start. The region settings are read here as regionFenceOf reads them, so a bad one fails the init alike.
 */
import { REGION_ENVIRONMENT } from '../contracts/region-environment.ts';
import { parseEnvironment } from './config.ts';
import type { RegionFence } from './region-fence.ts';

type Env = Readonly<Record<string, string | undefined>>;

export async function loadRegionFence(env: Env = process.env): Promise<RegionFence | undefined> {
  if (parseEnvironment(REGION_ENVIRONMENT, env).FENCE_TABLE_NAME === undefined) return undefined;
  return (await import('./region-fence.ts')).regionFenceOf(env);
}
