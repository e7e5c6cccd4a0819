/**
 * `npm run ops -- spool-keys <userId>`: where a customer's records are in the evidence spool's table, for a
 * court-ordered erasure (docs/operations.md "Break glass"). The roll-up deletes no spool item (each expires by TTL,
 * SPOOL_KEEP_DAYS after its minute, and point-in-time recovery keeps 35 days more), so the break-glass role deletes
 * the customer's. Read only: the customer's index names each send's slice and the first 128 bits of its digest,
 * which give the item's partition and its sort key's prefix — and the customer's SENT notifications name a send's
 * slice and whole digest even before its index is written (a writer that died after its SENT write). What it prints
 * is the break-glass session's commands, one Query of that prefix and a DeleteItem of each key it finds (a Query,
 * since the index holds part of the digest).
 */
import { localEvidenceSpoolTableName } from '../../functions/contracts/evidence-spool-schema.ts';
import { parseSliceBatch } from '../../functions/domain/evidence-spool.ts';
import type { EventStore } from '../../functions/stores/event-store.ts';
import { spoolKeyOf } from '../../functions/stores/evidence-spool.ts';
import { type Command, OPS_EXIT } from './command.ts';

export interface SpoolKeyOfSend {
  readonly notificationId: string;
  readonly batch: string;
  readonly pk: string;
  readonly skPrefix: string;
}

export const spoolKeys: Command = {
  arity: [1, 1],
  async run(c) {
    const o = c.target.outputs;
    const table =
      o === undefined ? localEvidenceSpoolTableName(c.target.tableName) : (o.EvidenceSpoolTableName ?? o.TableName);
    const { evidenceLocator, events } = c.target.ports;
    // The customer's notifications first: a spooled send whose writer died before its index write is named there
    // (its slice and whole digest) until the roll-up indexes it; then the index, which names the older ones.
    const [named, refs] = await Promise.all([sentOfUser(events, c.first), evidenceLocator.ofUser(c.first)]);
    const keys = uncovered(
      [...named, ...refs].flatMap((r) => {
        const slice = spoolSliceOf(r.batch);
        const key = slice === undefined ? undefined : spoolKeyOf(slice, r.sha256 ?? '');
        return key === undefined ? [] : [{ notificationId: r.notificationId, batch: r.batch, ...key }];
      }),
    );
    c.out({ table, keys }, spoolKeysText(c.first, table, keys));
    return OPS_EXIT.OK;
  },
};

/**
 * Each key once, by the items it reaches, not by its notification: two attempts of one notification spooled in one
 * minute are two items (two digests), each named; the same record named by its notification (the whole digest) and
 * by the index (its first 128 bits) is one item, named by the shorter prefix, whose Query finds it.
 */
export function uncovered(keys: readonly SpoolKeyOfSend[]): SpoolKeyOfSend[] {
  // In key order a prefix comes before every key it reaches, and a kept key's extensions before any key it does not
  // reach: so a key is reached by a kept key exactly when the last one kept (of its partition) is its prefix. A
  // customer's seven years of sends are read: sorted once, not compared in pairs.
  const order = (a: SpoolKeyOfSend, b: SpoolKeyOfSend) =>
    a.pk === b.pk ? (a.skPrefix < b.skPrefix ? -1 : a.skPrefix > b.skPrefix ? 1 : 0) : a.pk < b.pk ? -1 : 1;
  const kept = new Set<number>();
  let last: SpoolKeyOfSend | undefined;
  for (const i of keys.map((_, i) => i).sort((a, b) => order(keys[a] as SpoolKeyOfSend, keys[b] as SpoolKeyOfSend))) {
    const k = keys[i] as SpoolKeyOfSend;
    if (last !== undefined && last.pk === k.pk && k.skPrefix.startsWith(last.skPrefix)) continue;
    kept.add(i);
    last = k;
  }
  return keys.filter((_, i) => kept.has(i));
}

/** The sends the customer's notifications name (SENT, with their evidence's batch and whole digest). */
async function sentOfUser(
  events: Pick<EventStore, 'eventIdsOfUser' | 'read'>,
  userId: string,
): Promise<{ batch: string; notificationId: string; sha256?: string }[]> {
  const views = await Promise.all((await events.eventIdsOfUser(userId)).map((id) => events.read(id)));
  return views.flatMap((v) =>
    v.notifications.flatMap((n) => {
      const e = n.evidence as { batch?: unknown; sha256?: unknown } | undefined;
      if (n.userId !== userId || typeof e?.batch !== 'string' || typeof e.sha256 !== 'string') return [];
      return [{ batch: e.batch, notificationId: String(n.notificationId), sha256: e.sha256 }];
    }),
  );
}

/**
 * The spool slice a send's batch names: the slice itself, or the slice a late object stands beside (a record the
 * recovery locked from the spool after its minute was rolled: its item is in the spool under the slice's key).
 */
function spoolSliceOf(batch: string): string | undefined {
  if (parseSliceBatch(batch) !== undefined) return batch;
  const slice = batch.replace(/late[0-9a-f]{16}$/, '');
  return slice !== batch && parseSliceBatch(slice) !== undefined ? slice : undefined;
}

/**
 * The break-glass session's shell commands: for each key, a Query of its prefix and a DeleteItem of every item it
 * finds — the item, and a copy the roll-up set aside (`BAD#<its key>`, kept without a TTL for the on-call).
 */
export function spoolKeysText(userId: string, table: string, keys: readonly SpoolKeyOfSend[]): string {
  if (keys.length === 0) return `# no send of ${userId} is indexed under a spool slice: nothing to delete there\n`;
  const lines = keys.map((k) =>
    [
      `# ${k.notificationId} (${k.batch})`,
      deleteCommand(table, k.pk, k.skPrefix),
      `# …and its copy set aside, if the roll-up set one aside`,
      deleteCommand(table, k.pk, `${SET_ASIDE_PREFIX}${k.skPrefix}`),
    ].join('\n'),
  );
  // A failed Query (access denied, another region) must stop the script, not read as "nothing left to delete".
  const guard = [
    'set -euo pipefail',
    `: "\${AWS_REGION:?set AWS_REGION to the region of ${table} (each region has a spool of its own: repeat per region)}"`,
  ].join('\n');
  return `# ${keys.length} spooled send(s) of ${userId} in ${table}; run as the break-glass role:\n${guard}\n\n${lines.join('\n\n')}\n`;
}

/** The sort keys' prefix of the items the roll-up set aside (stores/evidence-spool.ts setAside). */
const SET_ASIDE_PREFIX = 'BAD#';

function deleteCommand(table: string, pk: string, prefix: string): string {
  const values = JSON.stringify({ ':pk': { S: pk }, ':p': { S: prefix } });
  return [
    `aws dynamodb query --table-name '${table}' --key-condition-expression 'pk = :pk AND begins_with(sk, :p)' \\`,
    `  --expression-attribute-values '${values}' --projection-expression sk --query 'Items[].sk.S' --output text \\`,
    `  | tr '\\t' '\\n' | while read -r sk; do [ -n "$sk" ] && [ "$sk" != None ] && aws dynamodb delete-item --table-name '${table}' \\`,
    `  --key "{\\"pk\\":{\\"S\\":\\"${pk}\\"},\\"sk\\":{\\"S\\":\\"$sk\\"}}" && echo "deleted ${pk} $sk"; done`,
  ].join('\n');
}
