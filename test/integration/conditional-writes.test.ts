/**
 * Conditional writes on DynamoDB Local whose answer is the whole point:
 * - a write that committed and lost its reply (the SDK retries it, the retry fails its own condition) still counts
 *   as what it was: a new quarantine item is not a redelivery, a new suppression is not "already suppressed";
 * - a refused claim decides on the item DynamoDB answered with (ALL_OLD), and still recognises its own lost reply;
 * - preferences of equal occurredAt: the greater eventId wins in the DynamoDB condition itself, in either arrival
 *   order (the in-memory double cannot pin the real expression).
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { BankingEvent } from '../../functions/domain/event/contract.ts';
import { PREFS_SK, prefsPk } from '../../functions/domain/keys.ts';
import { buildNotification } from '../../functions/domain/notification.ts';
import { DynamoInboxStore } from '../../functions/ingest/inbox-store.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import { DynamoAudienceStore } from '../../functions/stores/audience-store.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';
import { type DynamoFault, injectDynamoFaults } from '../../tools/chaos/faults.ts';
import { localClient } from '../../tools/local/dynamodb-local.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { countingClient } from '../support/counting-client.ts';
import { preferencesEvent, transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { BATCH_NOW, memoryBatchDeps } from '../support/memory-inbox-store.ts';
import { ALICE_ID as OPERATOR } from '../support/operator.ts';

let table: LocalTable;
let doc: DynamoDBDocumentClient;
/** Faults the next matching DynamoDB calls get, in order: commit-then-timeout is the lost reply. */
let armed: { fault: DynamoFault; on: (command: string) => boolean }[] = [];

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  doc = DynamoDBDocumentClient.from(localClient(table.endpoint), { marshallOptions: { removeUndefinedValues: true } });
  injectDynamoFaults(doc, {
    dynamo(command) {
      const i = armed.findIndex((a) => a.on(command));
      return i < 0 ? undefined : armed.splice(i, 1)[0]?.fault;
    },
  });
});
beforeEach(() => {
  armed = [];
});

const isPut = (c: string) => c === 'PutItemCommand' || c === 'PutCommand';
const isUpdate = (c: string) => c === 'UpdateItemCommand' || c === 'UpdateCommand';
const deps = () => ({ ...memoryBatchDeps(undefined as never), store: new DynamoInboxStore(doc, table.tableName) });

describe('a write whose reply was lost counts as what it was', () => {
  it('a new quarantine item is counted quarantined, not re-quarantined; its redelivery is the re-quarantine', async () => {
    const event = mskEvent([{ topic: 'lost-replies', partition: 0, offset: 1, value: 'not json' }]);
    armed.push({ fault: 'commitThenTimeout', on: isPut });
    const first = await ingestBatch(event, deps());
    expect(armed).toEqual([]); // the fault fired
    expect(first.figures).toMatchObject({ received: 1, quarantined: 1, requarantined: 0 });
    const again = await ingestBatch(event, deps());
    expect(again.figures).toMatchObject({ received: 1, quarantined: 0, requarantined: 1 });
  });

  it('a new suppression is "suppressed", not "already suppressed"; a second report of it is the duplicate', async () => {
    const audience = new DynamoAudienceStore(doc, table.tableName);
    armed.push({ fault: 'commitThenTimeout', on: isUpdate });
    const at = '2026-11-30T09:30:00.000Z';
    expect(await audience.suppressAddress('SMS', '+819012340000', 'BOUNCED', 'e-1#SMS', at)).toBe('suppressed');
    expect(armed).toEqual([]);
    expect(await audience.suppressAddress('SMS', '+819012340000', 'BOUNCED', 'e-1#SMS', at)).toBe('alreadySuppressed');
  });

  it('a lift whose reply was lost is still the lift', async () => {
    const audience = new DynamoAudienceStore(doc, table.tableName);
    await audience.suppressAddress('EMAIL', 'lift@example.com', 'COMPLAINED', 'e-2#EMAIL', '2026-11-30T09:30:00Z');
    const [item] = await audience.list('EMAIL');
    armed.push({ fault: 'commitThenTimeout', on: isUpdate });
    expect(await audience.lift('EMAIL', String(item?.sk), OPERATOR, BATCH_NOW, 'fixed')).toBe(true);
    expect(await audience.lift('EMAIL', String(item?.sk), OPERATOR, BATCH_NOW + 1, 'fixed')).toBe(false);
  });
});

describe('a refused claim decides on the item DynamoDB answers with, not a read of its own', () => {
  const pendingItem = (eventId: string) => ({
    ...buildNotification(
      transferEvent({ eventId, channels: ['SMS'] }) as unknown as BankingEvent,
      'SMS',
      '+819012340001',
      BATCH_NOW,
      {
        retentionDays: 35,
      },
    ),
  });
  const counting = () => {
    const { doc: client, sent } = countingClient(table.endpoint);
    return { store: new DynamoNotificationStore(client, table.tableName), sent };
  };

  it('a second claim of a claimed notification is "taken" after one write and no read', async () => {
    const item = pendingItem('claim-refused');
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
    const { store, sent } = counting();
    const key = { pk: item.pk, sk: item.sk };
    expect((await store.claim(key, 'first', BATCH_NOW, 60_000)).kind).toBe('claimed');
    expect(await store.claim(key, 'second', BATCH_NOW, 60_000)).toEqual({ kind: 'taken' });
    expect(sent).toEqual(['UpdateCommand', 'UpdateCommand']);
  });

  it('our own claim whose reply was lost is still ours (the SDK retry is refused with our claimId on the item)', async () => {
    const item = pendingItem('claim-lost-reply');
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
    const store = new DynamoNotificationStore(doc, table.tableName);
    armed.push({ fault: 'commitThenTimeout', on: isUpdate });
    const claim = await store.claim({ pk: item.pk, sk: item.sk }, 'mine', BATCH_NOW, 60_000);
    expect(armed).toEqual([]);
    expect(claim).toMatchObject({ kind: 'claimed', item: { status: 'SENDING', attempt: 1, claimId: 'mine' } });
  });

  it('a claim of a notification not stored is "taken"; a finished one keeps no claimId', async () => {
    const { store } = counting();
    expect(await store.claim({ pk: 'EVENT#nothing', sk: 'NOTIFICATION#SMS' }, 'c', BATCH_NOW, 60_000)).toEqual({
      kind: 'taken',
    });
    const item = pendingItem('claim-finished');
    await table.doc.send(new PutCommand({ TableName: table.tableName, Item: item }));
    const claim = await store.claim({ pk: item.pk, sk: item.sk }, 'c', BATCH_NOW, 60_000);
    if (claim.kind !== 'claimed') throw new Error(claim.kind);
    expect(await store.markSent(claim.item, 'sns-1', BATCH_NOW + 1)).toBe('applied');
    const [sent] = (await table.eventItems('claim-finished')).filter((i) => i.kind === 'NOTIFICATION');
    expect(sent).toMatchObject({ status: 'SENT', providerMessageId: 'sns-1' });
    expect(sent).not.toHaveProperty('claimId');
  });
});

describe('preferences of equal occurredAt: the greater eventId wins on DynamoDB itself', () => {
  const at = '2026-11-30T09:00:00Z';
  const smaller = (user: string) => preferencesEvent(`${user}-a`, at, ['SMS'], user);
  const greater = (user: string) => preferencesEvent(`${user}-b`, at, ['EMAIL'], user);
  const inForce = async (user: string) =>
    (await table.allItems()).find((i) => i.pk === prefsPk(user) && i.sk === PREFS_SK);

  it.each([
    ['the smaller eventId first', (u: string) => [smaller(u), greater(u)]],
    ['the greater eventId first', (u: string) => [greater(u), smaller(u)]],
  ])('%s: the greater eventId is in force, the other recorded as STALE', async (name, order) => {
    const user = `tie-${name.split(' ')[1]}`;
    // Two deliveries, one record each: each preference is its own transaction, in this arrival order.
    for (const [i, value] of order(user).entries()) {
      await ingestBatch(mskEvent([{ topic: `tie-${user}`, partition: 0, offset: i, value }]), deps());
    }
    expect(await inForce(user)).toMatchObject({ eventId: `${user}-b`, optOut: ['EMAIL'] });
    // The smaller one is applied only when it came first (and then replaced); arriving second it is STALE.
    const inbox = (await table.eventItems(`${user}-a`)).find((i) => i.sk === 'INBOX');
    expect(inbox?.skipped).toBe(order(user)[0]?.eventId === `${user}-a` ? undefined : 'STALE');
  });
});
