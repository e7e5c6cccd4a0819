import { describe, expect, it } from 'vitest';
import { LEASE_CURSORS_MAX_BYTES, LEASE_WALK_FIRST_MAX, withinItem } from '../../functions/stores/lease-cursors.ts';

describe("the lease pass's cursors item", () => {
  it('keeps every partition of the most shards that fits under the item limit, the first given (critical) first', () => {
    // 3 classes × 3 channels × 256 shards, each stopped at an item with a long eventId: more than an item holds.
    const cursors = Object.fromEntries(
      Array.from({ length: 2_304 }, (_, i) => {
        const key = `PENDING#EMAIL#bulk#${i}`;
        return [
          key,
          {
            sweepKey: key,
            sweepAt: 1_800_000_000_000 + i,
            pk: `EVENT#${'e'.repeat(120)}${i}`,
            sk: 'NOTIFICATION#EMAIL',
          },
        ];
      }),
    );
    const kept = withinItem(cursors);
    const keys = Object.keys(kept);
    expect(keys.length).toBeGreaterThan(1_000);
    expect(keys.length).toBeLessThan(2_304);
    expect(keys).toEqual(Object.keys(cursors).slice(0, keys.length));
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(LEASE_CURSORS_MAX_BYTES + 4 * keys.length + 2);
    // A backlog's usual handful is kept whole.
    const few = Object.fromEntries(Object.entries(cursors).slice(0, 24));
    expect(withinItem(few)).toEqual(few);
  });

  it("never cuts the cursor of a partition kept to walk first: the rotation's and all of theirs fit at the longest keys", () => {
    // The longest cursor a sweep partition holds: a 128-character event id (EVENT_ID_PATTERN) and a successor's sort
    // key. A kept partition whose cursor were cut would be walked from its start, not from its lease's page.
    const cursorAt = (i: number) => {
      const key = `PENDING#EMAIL#critical#${i}`;
      const cursor = { sweepKey: key, sweepAt: 1_800_000_000_000 + i, pk: `EVENT#${'e'.repeat(128)}` };
      return [key, { ...cursor, sk: 'NOTIFICATION#EMAIL#E99' }] as const;
    };
    const kept = Array.from({ length: 1 + LEASE_WALK_FIRST_MAX }, (_, i) => cursorAt(i));
    const rest = Array.from({ length: 1_000 }, (_, i) => cursorAt(10_000 + i));
    const fit = Object.keys(withinItem(Object.fromEntries([...kept, ...rest])));
    expect(fit.slice(0, kept.length)).toEqual(kept.map(([key]) => key));
    // The rest of the rotation's cursors is what the limit cuts.
    expect(fit.length).toBeLessThan(kept.length + rest.length);
  });

  it("fits DynamoDB's 400 KB an item at its largest: the cursors kept, the partitions kept first and their leases' places", () => {
    // Keys of the longest spelling (PENDING#EMAIL#critical#255), cursors with 128-character event ids. The JSON measure
    // is above DynamoDB's (a 13-digit number is 8 bytes there, a map entry's overhead 1 byte).
    const keyOf = (i: number) => `PENDING#EMAIL#critical#${String(i).padStart(3, '0')}`.slice(-26);
    const cursors = Object.fromEntries(
      Array.from({ length: 2_304 }, (_, i) => {
        const key = `PENDING#EMAIL#critical#${i}`;
        return [
          key,
          { sweepKey: key, sweepAt: 1_800_000_000_000 + i, pk: `EVENT#${'e'.repeat(128)}`, sk: 'N#EMAIL#E99' },
        ];
      }),
    );
    const walkFirst = Array.from({ length: LEASE_WALK_FIRST_MAX }, (_, i) => keyOf(i));
    const leaseAt = Object.fromEntries(walkFirst.map((k, i) => [k, 1_800_000_000_000.5 + i]));
    const item = { cursors: withinItem(cursors), walkFirst, leaseAt, resumeAt: { noticeClass: 'critical' } };
    // Room left for the item's keys, kind and updatedAt.
    expect(JSON.stringify(item).length).toBeLessThan(400 * 1024 - 1_000);
  });
});
