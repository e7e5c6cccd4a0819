/**
 * A run's counts by outcome and the notification ids behind each (a promotion's pass, a reconcile): the ids listed
 * are the first IDS_LISTED of each outcome — a report is an audit record and an HTTP answer —, `truncated` once one
 * list was cut (the rest of what the run moved is found by what it stamped on the items).
 */
export const IDS_LISTED = 500;

export class IdTally<K extends string> {
  readonly counts: Record<K, number>;
  readonly ids: Record<K, string[]>;
  truncated = false;

  /** `outcomes` in the order a report lists them. */
  constructor(outcomes: readonly K[]) {
    this.counts = Object.fromEntries(outcomes.map((k) => [k, 0])) as Record<K, number>;
    this.ids = Object.fromEntries(outcomes.map((k) => [k, []])) as unknown as Record<K, string[]>;
  }

  count(outcome: K, notificationId: string): void {
    this.counts[outcome]++;
    if (this.ids[outcome].length < IDS_LISTED) this.ids[outcome].push(notificationId);
    else this.truncated = true;
  }
}
