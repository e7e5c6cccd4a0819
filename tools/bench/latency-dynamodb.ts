/**
 * A DynamoDB that answers inside the SDK client after a fixed delay per call: the network in AWS, without DynamoDB
 * Local's own CPU on a shared machine. Real SDK clients (commands, middleware, lib-dynamodb marshalling) on both sides;
 * the answer comes from an in-memory table with the conditional semantics the measured code relies on:
 * - a Put with a condition fails when the item exists (notifier's `attribute_not_exists(pk)`; Powertools'
 *   condition also allows an expired record, which never happens within a run);
 * - TransactWriteItems is all or nothing, cancelled with per-item reasons and the old item (ALL_OLD);
 * - UpdateItem applies `SET a = :v, …` (what Powertools sends);
 * - BatchGetItem answers every key it finds.
 * Items are kept as plain values; a request in wire format (the raw client, as Powertools uses it) gets wire answers.
 */
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { localClient } from '../local/dynamodb-local.ts';
import { nativeItem } from './billing.ts';

type Item = Record<string, unknown>;
const keyOf = (item: Item) => ('pk' in item ? `${item.pk}|${item.sk}` : String(item.id));
const AV = new Set(['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL']);
const isWireItem = (item: Item) =>
  Object.values(item).every(
    (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 1 && AV.has(Object.keys(v)[0] ?? ''),
  );

export class MemoryDynamo {
  readonly tables = new Map<string, Map<string, Item>>();
  private table(name: string) {
    const t = this.tables.get(name) ?? new Map<string, Item>();
    this.tables.set(name, t);
    return t;
  }

  answer(command: string, input: Record<string, unknown>): Record<string, unknown> {
    switch (command) {
      case 'TransactWriteItemsCommand':
        return this.transact(input.TransactItems as { Put?: Record<string, unknown> }[]);
      case 'BatchGetItemCommand':
        return this.batchGet(input.RequestItems as Record<string, { Keys: Item[] }>);
      case 'PutItemCommand':
        return this.put(String(input.TableName), input.Item as Item, input.ConditionExpression !== undefined);
      case 'GetItemCommand': {
        const wire = isWireItem(input.Key as Item);
        const found = this.table(String(input.TableName)).get(keyOf(nativeItem(input.Key as Item)));
        return found === undefined ? {} : { Item: wire ? marshall(found) : structuredClone(found) };
      }
      case 'UpdateItemCommand':
        return this.update(input);
      case 'DeleteItemCommand':
        this.table(String(input.TableName)).delete(keyOf(nativeItem(input.Key as Item)));
        return {};
      default:
        throw new Error(`the latency emulator does not answer ${command}`);
    }
  }

  private put(tableName: string, raw: Item, conditional: boolean) {
    const wire = isWireItem(raw);
    const item = nativeItem(raw);
    const t = this.table(tableName);
    const old = t.get(keyOf(item));
    if (conditional && old !== undefined) {
      throw new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: wire ? marshall(old) : (old as never),
      });
    }
    t.set(keyOf(item), structuredClone(item));
    return {};
  }

  private transact(actions: { Put?: Record<string, unknown> }[]) {
    const reasons = actions.map((a) => {
      const put = a.Put as { TableName: string; Item: Item; ConditionExpression?: string };
      const item = nativeItem(put.Item);
      const old = this.table(put.TableName).get(keyOf(item));
      return put.ConditionExpression !== undefined && old !== undefined
        ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', Item: old as never }
        : { Code: 'None' };
    });
    if (reasons.some((r) => r.Code !== 'None')) {
      throw new TransactionCanceledException({
        message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
        $metadata: {},
        CancellationReasons: reasons,
      });
    }
    for (const a of actions) {
      const put = a.Put as { TableName: string; Item: Item };
      const item = nativeItem(put.Item);
      this.table(put.TableName).set(keyOf(item), structuredClone(item));
    }
    return {};
  }

  private batchGet(requests: Record<string, { Keys: Item[] }>) {
    const Responses: Record<string, Item[]> = {};
    for (const [name, r] of Object.entries(requests)) {
      const wire = r.Keys.length > 0 && isWireItem(r.Keys[0] as Item);
      Responses[name] = r.Keys.flatMap((k) => {
        const found = this.table(name).get(keyOf(nativeItem(k)));
        if (found === undefined) return [];
        const projected = { pk: found.pk, payloadHash: found.payloadHash };
        return [wire ? marshall(projected) : projected];
      });
    }
    return { Responses };
  }

  private update(input: Record<string, unknown>) {
    const t = this.table(String(input.TableName));
    const key = nativeItem(input.Key as Item);
    const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const rawValues = (input.ExpressionAttributeValues ?? {}) as Item;
    const values = isWireItem(rawValues) ? unmarshall(rawValues as never) : rawValues;
    const item = { ...(t.get(keyOf(key)) ?? key) };
    const set = /^SET (.*)$/.exec(String(input.UpdateExpression).trim())?.[1];
    if (set === undefined) throw new Error('the latency emulator answers UpdateItem with SET only');
    for (const part of set.split(',')) {
      const [lhs, rhs] = part.split('=').map((s) => s.trim());
      item[names[lhs ?? ''] ?? lhs ?? ''] = values[rhs ?? ''];
    }
    t.set(keyOf(item), item);
    return {};
  }
}

/** A real DynamoDB client whose every call takes `ms` and is answered by `db`: no network, no DynamoDB Local. */
export function latencyClient(ms: number, db = new MemoryDynamo()): DynamoDBClient {
  const client = localClient('http://127.0.0.1:9');
  client.middlewareStack.add(
    (_next, context) => async (args) => {
      await new Promise((r) => setTimeout(r, ms));
      const output = db.answer(String(context.commandName), args.input as Record<string, unknown>);
      return { output: { ...output, $metadata: {} }, response: {} };
    },
    // Innermost of the initialize step, after the bench's accounting middleware (which must see what comes back).
    { step: 'initialize', name: 'injectedLatency', priority: 'low' },
  );
  return client;
}
