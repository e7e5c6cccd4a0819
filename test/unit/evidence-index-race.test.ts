/**
 * The event item `e#<eventId>` is put by the writer whose ADD found no other writer's send on the customer item
 * (stores/evidence-index.ts). When an ADD's first attempt landed but its answer was lost (a timeout, a 5xx) and the
 * SDK retried it, its answer shows the writer's own send already there beside another channel's, added in between
 * by a writer that saw this one's send and left the event item to it: the retried writer cannot know who was first,
 * so it puts the event item — never neither of them, which would leave the event's sends found by nobody once the
 * table's items expire, while both writers said "indexed".
 */
import { BatchWriteCommand, type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, expect, it } from 'vitest';
import { batchName, indexEntriesOf } from '../../functions/domain/evidence-batch.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';

type Row = { s?: Set<string>; expiresAt?: number };
type Key = { pk: string; sk: string };
let table: Map<string, Row>;
const id = (k: Key) => `${k.pk}|${k.sk}`;

beforeEach(() => {
  table = new Map();
});

/** An UpdateItem's ADD and SET as DynamoDB applies them; its answer the sends before (UPDATED_OLD). */
function apply(input: UpdateCommand['input']) {
  const key = id(input.Key as Key);
  const old = table.get(key);
  const row: Row = { ...(old ?? {}), s: new Set(old?.s ?? []) };
  const values = input.ExpressionAttributeValues ?? {};
  for (const mark of (values[':s'] as Set<string> | undefined) ?? []) row.s?.add(mark);
  if (input.UpdateExpression?.includes('SET') === true) row.expiresAt = values[':e'] as number;
  table.set(key, row);
  return { Attributes: old?.s === undefined ? undefined : { s: new Set(old.s) } };
}

/** A client whose first ADD lands, loses its answer, and is retried by the SDK after `meanwhile` ran. */
function client(meanwhile?: () => Promise<void>): DynamoDBDocumentClient {
  let first = true;
  return {
    async send(cmd: unknown) {
      if (cmd instanceof UpdateCommand) {
        if (first && meanwhile !== undefined && cmd.input.ExpressionAttributeValues?.[':s'] !== undefined) {
          first = false;
          apply(cmd.input);
          await meanwhile();
          return apply(cmd.input);
        }
        return apply(cmd.input);
      }
      if (cmd instanceof BatchWriteCommand) {
        for (const w of Object.values(cmd.input.RequestItems ?? {})[0] ?? [])
          table.set(id(w.PutRequest?.Item as Key), {});
        return {};
      }
      throw new Error('unexpected command');
    },
  } as unknown as DynamoDBDocumentClient;
}

const at = Date.parse('2026-11-01T10:00:00Z');
const entriesOf = (invocation: string, channel: string, digit: string) =>
  indexEntriesOf(batchName('dispatch', at, invocation), [
    {
      userId: 'u1',
      acceptedAt: '2026-11-01T10:00:00.000Z',
      notificationId: `evt1#${channel}`,
      sha256: digit.repeat(64),
    },
  ]).map((entry) => ({ entry, expiresAt: 2_000_000_000 }));
const eventItems = () => [...table.keys()].filter((k) => k.startsWith('e#evt1'));

it("an event whose channels two invocations index keeps its e# item when the first writer's ADD was retried", async () => {
  const b = new DynamoEvidenceIndex(client(), 'index');
  const a = new DynamoEvidenceIndex(
    client(async () => {
      expect(await b.putBatch(entriesOf('invocationbb', 'SMS', 'b'))).toBe(0);
      // B saw A's send: A was first, so B left the event item to it.
      expect(eventItems()).toEqual([]);
    }),
    'index',
  );
  expect(await a.putBatch(entriesOf('invocationaa', 'EMAIL', 'a'))).toBe(0);
  expect([...table.keys()].filter((k) => k.startsWith('u#'))).toHaveLength(1);
  expect(eventItems()).toHaveLength(1);
});

it("a second channel that finds only another writer's send leaves the event item to that writer", async () => {
  const a = new DynamoEvidenceIndex(client(), 'index');
  expect(await a.putBatch(entriesOf('invocationaa', 'EMAIL', 'a'))).toBe(0);
  expect(eventItems()).toHaveLength(1);
  table.delete(eventItems()[0] as string);
  const b = new DynamoEvidenceIndex(client(), 'index');
  expect(await b.putBatch(entriesOf('invocationbb', 'SMS', 'b'))).toBe(0);
  expect(eventItems()).toEqual([]);
});
