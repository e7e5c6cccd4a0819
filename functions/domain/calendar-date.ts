/**
 * A calendar date as the contract writes one (YYYY-MM-DD): read by ingest's event contract and by the templates that
 * show it, without the one loading the other (dispatch renders dates and never validates an event). Pure.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date that exists (2026-02-29 does not). */
export const isCalendarDate = (s: string): boolean => {
  const m = DATE.exec(s);
  if (m === null) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.toISOString().slice(0, 10) === s;
};
