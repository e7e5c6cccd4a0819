/**
 * The operator CLI's operations on DynamoDB Local, with the real ingest handler behind replays: what an operator can
 * see, what a replay does (never a second send), and that a manual resend is recorded and can never touch a SENT
 * notification. S3 and CloudWatch Logs answer through aws-sdk-client-mock.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CloudWatchLogsClient, GetQueryResultsCommand, StartQueryCommand } from '@aws-sdk/client-cloudwatch-logs';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { mskEvent } from '../../tools/local/msk.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import {
  type IngestInvoker,
  inspectEvent,
  listQuarantine,
  OperatorError,
  parkedEvent,
  replayFailedBatches,
  replayQuarantine,
  resendNotification,
  traceEvent,
} from '../../tools/ops/operations.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
let ingest: IngestInvoker;
const TOPIC = 'ops.test';
const record = (offset: number, value: string | object) => mskEvent([{ topic: TOPIC, partition: 0, offset, value }]);

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ingest = await localIngest(table.endpoint, table.tableName);
});

const deps = () => ({ doc: table.doc, tableName: table.tableName, now: Date.now });

describe('inspect and quarantine', () => {
  it('inspect shows the inbox item and each notification of an event', async () => {
    await ingest(record(1, transferEvent({ eventId: 'ops-inspect', channels: ['EMAIL', 'SMS'] })));
    const view = await inspectEvent(deps(), 'ops-inspect');
    expect(view.inbox).toMatchObject({ eventId: 'ops-inspect', channels: ['EMAIL', 'SMS'] });
    expect(view.notifications.map((n) => [n.notificationId, n.status, n.attempt])).toEqual([
      ['ops-inspect#EMAIL', 'PENDING', 0],
      ['ops-inspect#SMS', 'PENDING', 0],
    ]);
    expect((await inspectEvent(deps(), 'ops-nobody')).notifications).toEqual([]);
  });

  it('quarantine lists each bad record with its reason and detail, filtered by reason and time', async () => {
    await ingest(record(2, '{"eventId":"ops-broken",'));
    await ingest(record(3, transferEvent({ eventId: 'ops-float', data: { amount: 12.5 } })));
    const all = await listQuarantine(deps());
    expect(all.find((q) => q.id === `${TOPIC}#0#3`)).toMatchObject({
      reason: 'INVALID_AMOUNT',
      eventId: 'ops-float',
      detail: expect.stringContaining('data.amount'),
      replayedAt: null,
    });
    expect((await listQuarantine(deps(), { reason: 'INVALID_JSON' })).map((q) => q.id)).toEqual([`${TOPIC}#0#2`]);
    expect(await listQuarantine(deps(), { sinceIso: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
  });
});

describe('replay', () => {
  it('replay-quarantine feeds a corrected event through ingest at its own offset; a second replay is a duplicate', async () => {
    await ingest(record(10, transferEvent({ eventId: 'ops-fixme', channels: ['EMAIL'], data: { amount: 1.5 } })));
    const fixed = JSON.stringify(transferEvent({ eventId: 'ops-fixme', channels: ['EMAIL'], data: { amount: '150' } }));
    expect(await replayQuarantine({ ...deps(), invokeIngest: ingest }, [`${TOPIC}#0#10`], fixed)).toEqual([
      { id: `${TOPIC}#0#10`, outcome: 'ACCEPTED', eventId: 'ops-fixme' },
    ]);
    const before = await table.eventItems('ops-fixme');
    expect(before.find((i) => i.sk === 'INBOX')?.source).toEqual({ topic: TOPIC, partition: 0, offset: 10 });
    // Again: the inbox makes it a duplicate; the notification is untouched.
    await replayQuarantine({ ...deps(), invokeIngest: ingest }, [`${TOPIC}#0#10`], fixed);
    expect(await table.eventItems('ops-fixme')).toEqual(before);
    const [q] = await listQuarantine(deps(), { reason: 'INVALID_AMOUNT' }).then((l) =>
      l.filter((x) => x.id.endsWith('#10')),
    );
    expect(q?.replayedAt).toEqual(expect.any(String));
  });

  it('replay-quarantine of a still-bad record says so and changes nothing; unknown ids are refused', async () => {
    await ingest(record(11, 'not json at all'));
    expect(await replayQuarantine({ ...deps(), invokeIngest: ingest }, [`${TOPIC}#0#11`])).toEqual([
      { id: `${TOPIC}#0#11`, outcome: 'STILL_QUARANTINED', eventId: null },
    ]);
    await expect(replayQuarantine({ ...deps(), invokeIngest: ingest }, [`${TOPIC}#0#999`])).rejects.toThrow(
      OperatorError,
    );
    await expect(replayQuarantine({ ...deps(), invokeIngest: ingest }, ['nonsense'])).rejects.toThrow(
      /not a quarantine id/,
    );
  });

  it('replay-quarantine of a conflict: STILL_QUARANTINED as it was, DUPLICATE once corrected to the original', async () => {
    const original = JSON.stringify(transferEvent({ eventId: 'ops-dup', channels: ['EMAIL'] }));
    await ingest(record(12, original));
    await ingest(record(13, transferEvent({ eventId: 'ops-dup', channels: ['EMAIL'], data: { amount: '1' } })));
    const invokeIngest = ingest;
    expect((await replayQuarantine({ ...deps(), invokeIngest }, [`${TOPIC}#0#13`]))[0]?.outcome).toBe(
      'STILL_QUARANTINED',
    );
    const before = await table.eventItems('ops-dup');
    expect((await replayQuarantine({ ...deps(), invokeIngest }, [`${TOPIC}#0#13`], original))[0]?.outcome).toBe(
      'DUPLICATE',
    );
    expect(await table.eventItems('ops-dup')).toEqual(before);
  });

  it('replay-failed-batches replays each parked invocation record since a time, oldest first (payload as JSON or string)', async () => {
    const s3 = mockClient(S3Client);
    const event = (id: string, offset: number) => record(offset, transferEvent({ eventId: id, channels: ['EMAIL'] }));
    // The SDK's streaming body, reduced to the one method replayFailedBatches reads.
    const body = (text: string) => ({ Body: { transformToString: async () => text } });
    s3.on(ListObjectsV2Command).resolves({
      Contents: [
        { Key: 'b/2', LastModified: new Date('2026-12-01T10:00:00Z') },
        { Key: 'b/1', LastModified: new Date('2026-12-01T09:00:00Z') },
        { Key: 'b/old', LastModified: new Date('2026-11-01T09:00:00Z') },
      ],
    });
    s3.on(GetObjectCommand, { Key: 'b/1' }).resolves(
      body(JSON.stringify({ version: '1.0', KafkaBatchInfo: {}, payload: event('ops-parked-1', 20) })) as never,
    );
    s3.on(GetObjectCommand, { Key: 'b/2' }).resolves(
      body(JSON.stringify({ version: '1.0', payload: JSON.stringify(event('ops-parked-2', 21)) })) as never,
    );
    const invoked: string[] = [];
    const batches = await replayFailedBatches(
      {
        s3: new S3Client({}),
        bucket: 'parked',
        invokeIngest: async (e) => {
          invoked.push(Object.values(e.records).flat()[0]?.offset.toString() ?? '');
          await ingest(e);
        },
      },
      new Date('2026-11-30T00:00:00Z'),
    );
    expect(batches.map((b) => [b.key, b.records])).toEqual([
      ['b/1', 1],
      ['b/2', 1],
    ]);
    expect(invoked).toEqual(['20', '21']);
    expect((await inspectEvent(deps(), 'ops-parked-2')).inbox).toBeDefined();
    s3.restore();
    expect(() => parkedEvent('{"payload":{"eventSource":"aws:sqs"}}', 'k')).toThrow(/no MSK invocation record/);
  });
});

describe('resend', () => {
  const put = (id: string, status: string, extra: Record<string, unknown> = {}) =>
    table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: `EVENT#${id}`,
          sk: 'NOTIFICATION#EMAIL',
          kind: 'NOTIFICATION',
          notificationId: `${id}#EMAIL`,
          eventId: id,
          channel: 'EMAIL',
          status,
          attempt: 3,
          createdAt: '2026-11-01T00:00:00.000Z',
          updatedAt: '2026-11-01T00:05:00.000Z',
          ...extra,
        },
      }),
    );
  const request = (id: string) => ({ notificationId: `${id}#EMAIL`, by: 'alice', reason: 'customer called' });

  it('puts a FAILED notification back to PENDING once, recorded with who, when, why and what it was', async () => {
    await put('ops-failed', 'FAILED', {
      lastError: 'REJECTED: MessageRejected',
      // Feedback about the earlier send: it stays in the resend's record, and the item starts afresh for the new one.
      deliveryStatus: 'FAILED',
      deliveryMessageId: 'm-0',
      deliveryResponse: 'Unknown error attempting to reach phone',
    });
    const after = await resendNotification(
      { ...deps(), now: () => Date.parse('2026-12-01T12:00:00Z') },
      request('ops-failed'),
    );
    expect(after).toMatchObject({
      status: 'PENDING',
      attempt: 3,
      deferrals: 3,
      createdAt: '2026-12-01T12:00:00.000Z',
      firstCreatedAt: '2026-11-01T00:00:00.000Z',
      sweepKey: expect.stringMatching(/^PENDING#EMAIL#\d$/),
      manualResends: [
        {
          by: 'alice',
          at: '2026-12-01T12:00:00.000Z',
          reason: 'customer called',
          fromStatus: 'FAILED',
          attempt: 3,
          lastError: 'REJECTED: MessageRejected',
          deliveryStatus: 'FAILED',
          deliveryResponse: 'Unknown error attempting to reach phone',
        },
      ],
    });
    expect(after.lastError).toBeUndefined();
    expect([after.deliveryStatus, after.deliveryMessageId, after.deliveryResponse]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // Now in flight: a second resend is refused until the pipeline has given up again.
    await expect(resendNotification(deps(), request('ops-failed'))).rejects.toThrow(/PENDING: still in flight/);
  });

  it('resends UNKNOWN, and refuses SENT, SENDING, an unknown id and an item that moved since it was shown', async () => {
    await put('ops-unknown', 'UNKNOWN');
    await put('ops-sent', 'SENT', { providerMessageId: 'm-1' });
    await put('ops-sending', 'SENDING');
    await expect(resendNotification(deps(), request('ops-sent'))).rejects.toThrow(/SENT: the customer has it/);
    expect((await table.eventItems('ops-sent'))[0]).toMatchObject({ status: 'SENT', providerMessageId: 'm-1' });
    await expect(resendNotification(deps(), request('ops-sending'))).rejects.toThrow(/in flight/);
    await expect(resendNotification(deps(), request('ops-none'))).rejects.toThrow(/no notification/);
    await expect(resendNotification(deps(), request('ops-unknown'), { status: 'UNKNOWN', attempt: 2 })).rejects.toThrow(
      /changed since it was shown/,
    );
    expect((await resendNotification(deps(), request('ops-unknown'), { status: 'UNKNOWN', attempt: 3 })).status).toBe(
      'PENDING',
    );
  });

  it("a notification whose acceptance is known is resent only when the operator names the provider's message id", async () => {
    // UNKNOWN, but the provider's acceptance was recorded after its lease expired.
    await put('ops-late', 'UNKNOWN', { providerMessageId: 'm-late', acceptedLateAt: '2026-11-01T00:06:00.000Z' });
    await put('ops-sent-2', 'SENT', { providerMessageId: 'm-2' });
    await expect(resendNotification(deps(), request('ops-late'))).rejects.toThrow(
      /accepted it as message m-late .*--despite-accepted m-late/,
    );
    await expect(resendNotification(deps(), { ...request('ops-late'), despiteAccepted: 'm-other' })).rejects.toThrow(
      /names m-other, not m-late/,
    );
    expect((await table.eventItems('ops-late'))[0]).toMatchObject({ status: 'UNKNOWN', providerMessageId: 'm-late' });
    const late = await resendNotification(deps(), { ...request('ops-late'), despiteAccepted: 'm-late' });
    expect(late).toMatchObject({
      status: 'PENDING',
      manualResends: [{ fromStatus: 'UNKNOWN', providerMessageId: 'm-late', despiteAccepted: true }],
    });
    expect(late.providerMessageId).toBeUndefined();
    // SENT: the same, deliberately.
    await expect(resendNotification(deps(), request('ops-sent-2'))).rejects.toThrow(/message m-2/);
    expect((await resendNotification(deps(), { ...request('ops-sent-2'), despiteAccepted: 'm-2' })).status).toBe(
      'PENDING',
    );
  });

  /** Deps whose first UpdateCommand is preceded by `meanwhile` on the same item: a change between the read and the write. */
  const racing = (id: string, meanwhile: Omit<UpdateCommandInput, 'TableName' | 'Key'>) => ({
    ...deps(),
    doc: new Proxy(table.doc, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return async (command: unknown) => {
          if (command instanceof UpdateCommand) {
            await table.doc.send(
              new UpdateCommand({
                TableName: table.tableName,
                Key: { pk: `EVENT#${id}`, sk: 'NOTIFICATION#EMAIL' },
                ...meanwhile,
              }),
            );
          }
          return target.send(command as never);
        };
      },
    }),
  });

  it('the conditional write refuses a resend when the acceptance was recorded between the read and the write', async () => {
    await put('ops-late-race', 'UNKNOWN');
    const late = racing('ops-late-race', {
      UpdateExpression: 'SET providerMessageId = :mid',
      ExpressionAttributeValues: { ':mid': 'm-just-now' },
    });
    await expect(resendNotification(late, request('ops-late-race'))).rejects.toThrow(/changed while being resent/);
    expect((await table.eventItems('ops-late-race'))[0]).toMatchObject({ status: 'UNKNOWN' });
  });

  it('the conditional write refuses a resend when the item turned SENT between the read and the write', async () => {
    await put('ops-race', 'FAILED');
    // The read sees FAILED; before the write, something marks it SENT (the update is made to fail its condition).
    const sent = racing('ops-race', {
      UpdateExpression: 'SET #s = :sent',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':sent': 'SENT' },
    });
    await expect(resendNotification(sent, request('ops-race'))).rejects.toThrow(/changed while being resent/);
    expect((await table.eventItems('ops-race'))[0]?.status).toBe('SENT');
  });
});

describe('trace', () => {
  it('runs the Logs Insights query over the three log groups and returns its rows', async () => {
    const logs = mockClient(CloudWatchLogsClient);
    logs.on(StartQueryCommand).resolves({ queryId: 'q-1' });
    logs
      .on(GetQueryResultsCommand)
      .resolvesOnce({ status: 'Running' })
      .resolves({
        status: 'Complete',
        results: [
          [
            { field: '@timestamp', value: '2026-12-01 10:00:00.000' },
            { field: 'message', value: 'notification sent' },
            { field: '@ptr', value: 'x' },
          ],
        ],
      });
    const rows = await traceEvent(
      {
        logs: new CloudWatchLogsClient({}),
        logGroups: ['/i', '/d', '/s'],
        sleep: async () => undefined,
        now: Date.now,
      },
      'trf-1',
      3_600_000,
    );
    expect(rows).toEqual([{ '@timestamp': '2026-12-01 10:00:00.000', message: 'notification sent' }]);
    const start = logs.commandCalls(StartQueryCommand)[0]?.args[0].input;
    expect(start?.logGroupNames).toEqual(['/i', '/d', '/s']);
    expect(start?.queryString).toContain('filter eventId = "trf-1" or notificationId like "trf-1#"');
    logs.restore();
  });
});

describe('npm run ops (the command line)', () => {
  const run = promisify(execFile);
  const ops = (args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'tools/ops/cli.ts', ...args], { timeout: 60_000 }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('--help exits 0; usage errors exit 2 with one line; a refused resend exits 3; inspect prints JSON', async () => {
    const endpoint = ['--endpoint', table.endpoint, '--table', table.tableName];
    expect((await ops(['--help'])).stdout).toMatch(/^Usage: npm run ops/);
    for (const args of [['frobnicate', ...endpoint], ['inspect'], ['resend', 'x#EMAIL', ...endpoint], ['quarantine']]) {
      const r = await ops(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
    await put3();
    const refused = await ops(['resend', 'ops-cli#EMAIL', '--reason', 'r', '--confirm', ...endpoint]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('SENT');
    // The provider's message id on screen, and what to pass to resend despite it.
    expect(refused.stderr).toContain('--despite-accepted m-cli');
    const despite = await ops([
      'resend',
      'ops-cli#EMAIL',
      '--reason',
      'customer lost it',
      '--despite-accepted',
      'm-cli',
      ...endpoint,
    ]);
    expect(despite.code).toBe(3); // without --confirm: shown, not done
    expect(despite.stdout).toContain('a second copy');
    const inspected = await ops(['inspect', 'ops-cli', '--json', ...endpoint]);
    expect(inspected.code).toBe(0);
    expect(JSON.parse(inspected.stdout).notifications[0]).toMatchObject({ status: 'SENT' });
  });

  const put3 = () =>
    table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: 'EVENT#ops-cli',
          sk: 'NOTIFICATION#EMAIL',
          kind: 'NOTIFICATION',
          notificationId: 'ops-cli#EMAIL',
          eventId: 'ops-cli',
          channel: 'EMAIL',
          status: 'SENT',
          attempt: 1,
          providerMessageId: 'm-cli',
        },
      }),
    );
});
