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
import type { VerifiedIdentity } from '../../functions/operator/index.ts';
import { UsageError } from '../../tools/local/cli.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { main } from '../../tools/ops/cli.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import { traceEvent } from '../../tools/ops/trace.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE_ID, BOB_ID, putEmailSuppression } from '../support/operator.ts';

let table: LocalTable;
/** `npm run ops -- …` in a process of its own: its exit code, standard output and standard error. */
const ops = (args: string[]) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', 'tools/ops/cli.ts', ...args], { timeout: 120_000 }).then(
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
            { field: 'message', value: 'notifications sent' },
            { field: '@ptr', value: 'x' },
          ],
          // A listing in a metric document: its channel is its first dimension set's, not the traced event's.
          [
            { field: '@timestamp', value: '2026-12-01 10:00:01.000' },
            { field: 'message', value: 'notifications sent' },
            { field: 'channel', value: 'EMAIL' },
            { field: '@message', value: '{"_aws":{},"channel":"EMAIL","sent":["trf-1#SMS m-1"]}' },
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
    expect(rows).toEqual([
      { '@timestamp': '2026-12-01 10:00:00.000', message: 'notifications sent' },
      {
        '@timestamp': '2026-12-01 10:00:01.000',
        message: 'notifications sent',
        '@message': '{"_aws":{},"channel":"EMAIL","sent":["trf-1#SMS m-1"]}',
      },
    ]);
    const start = logs.commandCalls(StartQueryCommand)[0]?.args[0].input;
    expect(start?.logGroupNames).toEqual(['/i', '/d', '/s']);
    expect(start?.queryString).toContain('filter eventId = "trf-1" or notificationId like "trf-1#"');
    // the lines that list an invocation's ids (batch ingested, notifications sent, deliveries recorded)
    expect(start?.queryString).toContain('or @message like /"trf-1[#" ]/');
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
  const opsIn = async (args: string[], as: VerifiedIdentity = ALICE_ID) => {
    let text = '';
    const where = ['--endpoint', table.endpoint, '--table', table.tableName, '--evidence-dir', auditDir];
    const code = await main(
      [...args, ...where],
      (t) => {
        text += t;
      },
      as,
    );
    return { code, out: text };
  };
  const hash = addressHash('EMAIL', 'ops-case@example.com');
  const suppressed = () => putEmailSuppression(table.doc, table.tableName, 'ops-case@example.com', 'op-1#EMAIL');

  it('lists by hash (never an address), shows a lift without --confirm (exit 3), refuses it confirmed alone (four eyes), lifts it proposed by one operator and approved by another, and says when there is none (exit 3)', async () => {
    await suppressed();
    const listed = await opsIn(['suppressions']);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`${hash}  BOUNCED`);
    expect(listed.out).toContain('from op-1#EMAIL');
    const lift = ['lift-suppression', '--address', 'OPS-CASE@example.com', '--reason', 'mailbox fixed'];
    const unconfirmed = await opsIn(lift);
    expect(unconfirmed).toMatchObject({ code: 3 });
    expect(unconfirmed.out).toContain('npm run ops -- propose lift-suppression');
    await expect(opsIn([...lift, '--confirm'])).rejects.toThrow(/four eyes/);
    // The preview prints its fingerprint: a proposal bound to it is refused if what it acts on changed since.
    const fingerprint = /--fingerprint ([0-9a-f]{64})/.exec(unconfirmed.out)?.[1] as string;
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    await expect(opsIn(['propose', ...lift, '--fingerprint', 'f'.repeat(64)])).rejects.toThrow(
      /changed since it was shown/,
    );
    await expect(opsIn(['propose', ...lift, '--fingerprint', 'abc'])).rejects.toThrow(/64 hex digits/);
    const proposed = await opsIn(['propose', ...lift, '--fingerprint', fingerprint]);
    expect(proposed.code).toBe(0);
    const id = /^(p-\S+)/.exec(proposed.out)?.[1] as string;
    expect((await opsIn(['proposals'], BOB_ID)).out).toContain(`${id}  PENDING  SUPPRESSION_LIFT EMAIL#${hash}`);
    await expect(opsIn(['approve', id, '--reason', 'mine', '--confirm'])).rejects.toThrow(/another identity approves/);
    expect(
      await opsIn(['approve', id, '--reason', 'bounce cleared with the customer', '--confirm'], BOB_ID),
    ).toMatchObject({
      code: 0,
      out: expect.stringContaining('APPROVED'),
    });
    const again = await opsIn(['lift-suppression', '--hash', hash, '--reason', 'again', '--json']);
    expect(again.code).toBe(3);
    expect(JSON.parse(again.out)).toEqual({ lifted: false, channel: 'EMAIL', addressHash: hash });
    const all = JSON.parse((await opsIn(['suppressions', '--all', '--json'])).out) as { addressHash: string }[];
    expect(all.find((i) => i.addressHash === hash)).toMatchObject({
      state: 'LIFTED',
      liftedBy: 'bob',
      liftedVerifiedBy: 'LOCAL_USER',
    });
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
  it('usage errors exit 2; lists the refused notifications as JSON; repair previews the contact points it would send to, is refused confirmed alone, and — proposed by the login of one process, approved by another operator — reports each channel; nothing left to repair exits 3', async () => {
    const ingest = await localIngest(table.endpoint, table.tableName);
    const noCountryCode = (eventId: string) => transferEvent({ eventId, recipient: { phoneNumber: '090-1234-5678' } });
    const corrected = (eventId: string) => transferEvent({ eventId, recipient: { phoneNumber: '+81 90-1234-5678' } });
    await ingest(mskEvent([{ topic: 'ops-cli.repair', partition: 0, offset: 1, value: noCountryCode('rf-cli') }]));
    const cli = (args: string[]) => ops([...args, '--endpoint', table.endpoint, '--table', table.tableName]);
    const file = join(tmpdir(), `repair-${process.pid}.json`);
    writeFileSync(file, JSON.stringify(corrected('rf-cli')));
    expect((await cli(['repair', 'rf-cli', '--reason', 'r'])).code).toBe(2);
    expect((await cli(['repair', 'rf-cli', '--value-file', file])).code).toBe(2);
    expect((await cli(['refused', '--reason', 'NOPE'])).code).toBe(2);
    const list = await cli(['refused', '--json']);
    expect(JSON.parse(list.stdout).map((r: { notificationId: string }) => r.notificationId)).toContain('rf-cli#SMS');
    const repair = ['repair', 'rf-cli', '--value-file', file, '--reason', 'producer sent the number'];
    const shown = await cli(repair);
    expect(shown.code).toBe(3);
    expect(shown.stdout).toContain('SMS   REFUSED (INVALID_CONTACT');
    expect(shown.stdout).toContain('→ +819012345678');
    const alone = await cli([...repair, '--confirm']);
    expect(alone.code).toBe(3);
    expect(alone.stderr).toContain('four eyes');
    const proposed = await cli(['propose', ...repair, '--json']);
    expect(proposed.code).toBe(0);
    const { id } = JSON.parse(proposed.stdout) as { id: string };
    let approved = '';
    const where = ['--endpoint', table.endpoint, '--table', table.tableName];
    expect(
      await main(['approve', id, '--reason', 'number checked', '--confirm', ...where], (t) => (approved += t), BOB_ID),
    ).toBe(0);
    expect(approved).toMatch(/"outcome": "REPAIRED"/);
    expect((await table.eventItems('rf-cli')).find((i) => i.sk === 'NOTIFICATION#SMS')).toMatchObject({
      status: 'PENDING',
    });
    const nothing = await cli(repair);
    expect(nothing.code).toBe(3);
    expect(nothing.stderr).toContain('nothing to repair');
  });
});
