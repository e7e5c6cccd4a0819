/**
 * `npm run ops` as an operator types it: --help, usage errors (exit 2, one line), refusals (exit 3, the reason and
 * what to do), JSON output; and `ops trace`, whose Logs Insights query CloudWatch Logs answers through
 * aws-sdk-client-mock.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CloudWatchLogsClient, GetQueryResultsCommand, StartQueryCommand } from '@aws-sdk/client-cloudwatch-logs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { addressHash } from '../../functions/domain/audience.ts';
import { UsageError } from '../../tools/local/cli.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { main } from '../../tools/ops/cli.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import { traceEvent } from '../../tools/ops/trace.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';

let table: LocalTable;
/** `npm run ops -- …` in a process of its own: its exit code, standard output and standard error. */
const ops = (args: string[]) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', 'tools/ops/cli.ts', ...args], { timeout: 60_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
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

describe('npm run ops -- suppressions, lift-suppression, suppression-hash', () => {
  // Audit records of the lifts go to a folder of this test, not the local run's evidence.
  const auditDir = mkdtempSync(join(tmpdir(), 'audit-'));
  const opsIn = async (args: string[]) => {
    let text = '';
    const where = ['--endpoint', table.endpoint, '--table', table.tableName, '--evidence-dir', auditDir];
    const code = await main([...args, ...where], (t) => {
      text += t;
    });
    return { code, out: text };
  };
  const hash = addressHash('EMAIL', 'ops-case@example.com');
  const suppressed = () =>
    table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: `SUPPRESSION#EMAIL#${hash.charAt(0)}`,
          sk: hash,
          kind: 'SUPPRESSION',
          channel: 'EMAIL',
          state: 'ACTIVE',
          cause: 'BOUNCED',
          since: '2026-12-01T00:00:00.000Z',
          notificationId: 'op-1#EMAIL',
        },
      }),
    );

  it('lists by hash (never an address), shows a lift without --confirm (exit 3), lifts with it (exit 0), and says when there is none (exit 3)', async () => {
    await suppressed();
    const listed = await opsIn(['suppressions']);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`${hash}  BOUNCED`);
    expect(listed.out).toContain('from op-1#EMAIL');
    const lift = [
      'lift-suppression',
      '--address',
      'OPS-CASE@example.com',
      '--by',
      'alice',
      '--reason',
      'mailbox fixed',
    ];
    const unconfirmed = await opsIn(lift);
    expect(unconfirmed).toMatchObject({ code: 3 });
    expect(unconfirmed.out).toContain('Add --confirm');
    expect(await opsIn([...lift, '--confirm'])).toMatchObject({
      code: 0,
      out: expect.stringContaining(`lifted EMAIL ${hash}`),
    });
    const again = await opsIn(['lift-suppression', '--hash', hash, '--reason', 'again', '--confirm', '--json']);
    expect(again.code).toBe(3);
    expect(JSON.parse(again.out)).toEqual({ lifted: false, channel: 'EMAIL', addressHash: hash });
    const all = JSON.parse((await opsIn(['suppressions', '--all', '--json'])).out) as { addressHash: string }[];
    expect(all.find((i) => i.addressHash === hash)).toMatchObject({ state: 'LIFTED', liftedBy: 'alice' });
  });

  it('refuses unclear commands with a usage error', async () => {
    await expect(opsIn(['lift-suppression', '--reason', 'x'])).rejects.toThrow(/--address ADDR or --hash HEX/);
    await expect(opsIn(['lift-suppression', '--address', 'a@example.com'])).rejects.toThrow(/--reason/);
    await expect(opsIn(['lift-suppression', '--hash', 'xyz', '--reason', 'x'])).rejects.toThrow(/64/);
    await expect(opsIn(['suppressions', '--channel', 'FAX'])).rejects.toThrow(UsageError);
    await expect(main(['suppressions'], () => {})).rejects.toThrow(/exactly one of --stage/);
    let text = '';
    expect(await main(['suppression-hash', '--address', 'Someone@Example.com'], (t) => (text += t))).toBe(0);
    expect(text.trim()).toBe(`EMAIL ${addressHash('EMAIL', 'someone@example.com')}`);
  });
});

describe('npm run ops -- refused / repair', () => {
  it('usage errors exit 2; lists the refused notifications as JSON; repair reports each channel (exit 0), and nothing left to repair exits 3', async () => {
    const ingest = await localIngest(table.endpoint, table.tableName);
    const noCountryCode = (eventId: string) => transferEvent({ eventId, recipient: { phoneNumber: '090-1234-5678' } });
    const corrected = (eventId: string) => transferEvent({ eventId, recipient: { phoneNumber: '+81 90-1234-5678' } });
    await ingest(mskEvent([{ topic: 'ops-cli.repair', partition: 0, offset: 1, value: noCountryCode('rf-cli') }]));
    const cli = (args: string[]) => ops([...args, '--endpoint', table.endpoint, '--table', table.tableName]);
    const file = join(tmpdir(), `repair-${process.pid}.json`);
    writeFileSync(file, JSON.stringify(corrected('rf-cli')));
    expect((await cli(['repair', 'rf-cli'])).code).toBe(2);
    expect((await cli(['refused', '--reason', 'NOPE'])).code).toBe(2);
    const list = await cli(['refused', '--json']);
    expect(JSON.parse(list.stdout).map((r: { notificationId: string }) => r.notificationId)).toContain('rf-cli#SMS');
    const fixed = await cli(['repair', 'rf-cli', '--value-file', file]);
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toMatch(/rf-cli {2}REPAIRED\n {2}SMS {3}PENDING/);
    const nothing = await cli(['repair', 'rf-cli', '--value-file', file]);
    expect(nothing.code).toBe(3);
    expect(nothing.stderr).toContain('nothing to repair');
  });
});
