/**
 * Evidence gaps in parts on DynamoDB Local (functions/stores/evidence-gaps.ts, functions/sweeper/fill-evidence.ts): a
 * body over one item's size is kept in parts and written back whole; one whose later part the table refused is never
 * silently kept — listed as incomplete, counted open (EvidenceGapsOpen) while its writer may still be at it, and
 * removed once it surely is not (its writer counted the evidence lost or left it to a rebuild).
 */
import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoEvidenceGaps, GAP_PART_BYTES } from '../../functions/stores/evidence-gaps.ts';
import { fillEvidenceGaps, INCOMPLETE_GRACE_MS } from '../../functions/sweeper/fill-evidence.ts';
import { MemoryStore } from '../support/evidence-memory.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
});

const NOW = Date.parse('2026-12-05T09:00:00Z');
/** Random bytes do not compress: a body this size is kept in two parts. */
const body = () => randomBytes(GAP_PART_BYTES + 1_000);
const gapOf = (key: string) => ({
  key,
  body: body(),
  retainUntil: new Date(NOW + 86_400_000),
  since: new Date(NOW).toISOString(),
});

/** The table as a writer sees it when it refuses the second part's write. */
function refusingSecondPart(): DynamoEvidenceGaps {
  let puts = 0;
  const doc = new Proxy(table.doc, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown) => {
        if (command instanceof PutCommand && ++puts === 2) {
          throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
        }
        return target.send(command as PutCommand);
      };
    },
  });
  return new DynamoEvidenceGaps(doc, table.tableName);
}

describe('evidence gaps in parts', () => {
  it('a body in parts is listed whole and written byte for byte; a body whose later part was refused is counted open, then removed once its writer is surely done', async () => {
    const gaps = new DynamoEvidenceGaps(table.doc, table.tableName);
    const whole = gapOf('sends/whole/EMAIL/m.json');
    await gaps.add(whole);
    const torn = gapOf('sends/torn/EMAIL/m.json');
    await expect(refusingSecondPart().add(torn)).rejects.toMatchObject({
      name: 'ProvisionedThroughputExceededException',
    });

    const listed = await gaps.list(10);
    expect(listed.find((g) => g.key === whole.key)?.body).toEqual(whole.body);
    expect(listed.find((g) => g.key === torn.key)).toMatchObject({ incomplete: { parts: 1, of: 2 } });

    const store = new MemoryStore();
    const fill = (now: number) => fillEvidenceGaps({ gaps, store, now: () => now, deadline: now + 60_000, limit: 10 });
    // While its writer may still be writing: open, and said.
    const early = await fill(NOW + 60_000);
    expect(early).toMatchObject({ filled: 1, open: 1, removed: [] });
    expect(early.errors).toEqual([`${torn.key}: IncompleteGap (1 of 2 parts)`]);
    expect(store.objects.get(whole.key)?.body).toEqual(whole.body);
    // After the grace: removed, nothing left open.
    const late = await fill(NOW + INCOMPLETE_GRACE_MS + 1);
    expect(late).toMatchObject({ filled: 0, open: 0, errors: [], removed: [`${torn.key}: 1 of 2 parts`] });
    expect(await gaps.list(10)).toEqual([]);
  });

  it('removing a torn write leaves a whole gap written later under the same key (a rebuild’s): the batch’s only copy is kept', async () => {
    const gaps = new DynamoEvidenceGaps(table.doc, table.tableName);
    const torn = gapOf('batches/2026-12-05/torn-then-rebuilt.jsonl.gz');
    await expect(refusingSecondPart().add(torn)).rejects.toMatchObject({
      name: 'ProvisionedThroughputExceededException',
    });
    // The rebuild of the same batch, smaller (one part), while the store still refuses.
    const rebuilt = { ...torn, body: randomBytes(1_000), since: new Date(NOW + 120_000).toISOString() };
    await gaps.add(rebuilt);

    const store = new MemoryStore('fail');
    const late = NOW + INCOMPLETE_GRACE_MS + 1;
    const fill = await fillEvidenceGaps({ gaps, store, now: () => late, deadline: late + 60_000, limit: 10 });
    expect(fill.removed).toEqual([`${torn.key}: 1 of 2 parts`]);
    const left = (await gaps.list(10)).filter((g) => g.key === torn.key);
    expect(left).toHaveLength(1);
    expect(left[0]?.incomplete).toBeUndefined();
    expect(left[0]?.body).toEqual(rebuilt.body);
  });
});
