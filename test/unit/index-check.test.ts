/**
 * The roll-up's check of a slice's sends against the index (stores/evidence-index.ts `lacking`): a busy minute's slice
 * is hundreds of BatchGetItem calls, asked a few at once, and none is started past the run's deadline — the slice then
 * stays open, as on a failure, and is checked again next run.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import { batchName, indexEntriesOf } from '../../functions/domain/evidence-batch.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';

const NOW = Date.parse('2026-12-06T10:00:00.000Z');
const slice = batchName('dispatch', NOW, 'spooldays35');
/** 300 customers' sends of one slice: 600 keys (customer and event items), six calls of 100. */
const entries = indexEntriesOf(
  slice,
  Array.from({ length: 300 }, (_, i) => ({
    userId: `u${i}`,
    acceptedAt: new Date(NOW).toISOString(),
    notificationId: `ev${i}#SMS`,
    sha256: i.toString(16).padStart(64, '0'),
  })),
).map((entry) => ({ entry, expiresAt: 2_000_000_000 }));

/** A client answering every BatchGet with nothing found, one turn of the event loop later; counts calls in flight. */
function client() {
  const seen = { calls: 0, inFlight: 0, most: 0 };
  const doc = {
    async send(cmd: unknown) {
      if (!(cmd instanceof BatchGetCommand)) throw new Error('unexpected command');
      seen.calls++;
      seen.inFlight++;
      seen.most = Math.max(seen.most, seen.inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      seen.inFlight--;
      return { Responses: { index: [] } };
    },
  } as unknown as DynamoDBDocumentClient;
  return { doc, seen };
}

it("asks the index a few BatchGets at once, and starts none past the run's deadline", async () => {
  const { doc, seen } = client();
  const index = new DynamoEvidenceIndex(doc, 'index');
  const lacking = await index.lacking(entries, { now: () => NOW, deadline: NOW + 1 });
  expect(lacking.flatMap((e) => e.entry.sends)).toHaveLength(300);
  expect(seen.calls).toBe(6);
  expect(seen.most).toBe(4);

  const late = client();
  await expect(
    new DynamoEvidenceIndex(late.doc, 'index').lacking(entries, { now: () => NOW, deadline: NOW }),
  ).rejects.toMatchObject({ name: 'DeadlinePassed' });
  expect(late.seen.calls).toBe(0);
});
