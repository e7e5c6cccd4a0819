/**
 * Local wall-clock time (Temporal, from temporal-polyfill until Node ships it: about 56 KB), loaded when a notice whose
 * type has a send window is first judged. A function whose notice types have no window never loads it.
 *
 * Reading local time is synchronous (send-moment.ts): a reading before it is loaded throws LocalTimeNotLoaded — the
 * caller's mistake, never the notice's — so the caller loads it first (dispatch/moment-checks.ts `loadMomentRules`);
 * tests load it before they read.
 */
import type { Temporal } from 'temporal-polyfill';

let temporal: typeof Temporal | undefined;

export async function loadLocalTime(): Promise<void> {
  temporal ??= (await import('temporal-polyfill')).Temporal;
}

export class LocalTimeNotLoaded extends Error {
  override name = 'LocalTimeNotLoaded';
}

/** Temporal, once loaded; before, a throw that says the caller did not load it. */
export function localTime(): typeof Temporal {
  if (temporal === undefined) throw new LocalTimeNotLoaded('local time (Temporal) is not loaded yet');
  return temporal;
}
