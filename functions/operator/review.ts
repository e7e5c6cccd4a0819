/**
 * What a replay with an edited value would change, before it is made: every field that differs from the quarantined
 * record, and whether the edit may go ahead at all. Pure.
 */

export interface ValueChange {
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** Every leaf that differs between two JSON values, by path (`data.amount`, `recipient.email`, `channels[1]`). */
export function jsonDiff(before: unknown, after: unknown, path = ''): ValueChange[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  if (isObject(before) && isObject(after) && Array.isArray(before) === Array.isArray(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) =>
      jsonDiff(before[k], after[k], Array.isArray(before) ? `${path}[${k}]` : path === '' ? k : `${path}.${k}`),
    );
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '(value)', before, after }];
}

export interface CorrectionReview {
  readonly id: string;
  readonly eventId: string | null;
  /** What the edited value changes against the quarantined record (its stored value, cut to 4 KB if it was longer). */
  readonly changes: ValueChange[];
  readonly quarantinedValueTruncated: boolean;
  /** Why the replay must not go ahead, or null. */
  readonly refusal: string | null;
}

/**
 * The corrected event must keep the quarantined record's eventId: a replay that sends under another eventId is a new
 * event, which only its producer may publish.
 */
export function reviewCorrection(
  id: string,
  quarantined: { readonly raw?: unknown; readonly eventId?: unknown; readonly rawTruncated?: unknown },
  corrected: string,
): CorrectionReview {
  const raw = Buffer.from(String(quarantined.raw ?? ''), 'base64').toString('utf8');
  const before = parseOrText(raw);
  const after = parseOrText(corrected);
  const storedId = typeof quarantined.eventId === 'string' ? quarantined.eventId : null;
  const newId = eventIdOf(corrected);
  const refusal =
    newId === null
      ? 'the corrected value names no eventId'
      : storedId !== null && newId !== storedId
        ? `the corrected value changes the eventId (${storedId} → ${newId}): a replay keeps the quarantined record's eventId`
        : null;
  return {
    id,
    eventId: storedId ?? newId,
    changes: jsonDiff(before, after),
    quarantinedValueTruncated: quarantined.rawTruncated === true,
    refusal,
  };
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The eventId a JSON value names, or null. */
export function eventIdOf(json: string): string | null {
  const value = parseOrText(json);
  const id = typeof value === 'object' && value !== null ? (value as { eventId?: unknown }).eventId : undefined;
  return typeof id === 'string' ? id : null;
}
