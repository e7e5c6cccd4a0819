/**
 * `npm run ops:suppressions -- <list|lift|hash> …`: the operator's view of suppressed addresses (issue 16).
 *
 *   list [--channel EMAIL] [--all] [--json]         active suppressions of a channel (--all: lifted ones too)
 *   lift (--address ADDR | --hash HEX) [--channel EMAIL] [--by NAME]
 *                                                    lift one: the next notification to it is sent again
 *   hash --address ADDR [--channel EMAIL]            the key an address is suppressed under (nothing is read)
 *
 * The table: --table NAME, or --stage STAGE (read from the deployed stack's TableName output). Locally, point the
 * SDK at DynamoDB Local as the handlers are: AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:PORT (npm start -- --keep
 * prints it) with --table notifier-local.
 *
 * No address is stored: a suppression is keyed by the sha-256 of the normalised address. To find who it was, read the
 * notification it names (its `recipient`), which is what an operator with table access can see anyway.
 *
 * Exit codes: 0 done; 1 nothing to lift (no active suppression under that key); 2 bad arguments or setup.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoAudienceStore } from '../../functions/commons/audience-store.ts';
import { addressHash } from '../../functions/domain/audience.ts';
import { CHANNELS, type Channel } from '../../functions/domain/channels.ts';
import { stackNameOf } from '../../lib/settings.ts';
import { readStackOutputs } from './stack-outputs.ts';

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface Command {
  readonly action: 'list' | 'lift' | 'hash';
  readonly channel: Channel;
  readonly all: boolean;
  readonly json: boolean;
  readonly hash?: string;
  readonly by: string;
  readonly table?: string;
  readonly stage?: string;
}

export function parseCommand(argv: string[], env: Record<string, string | undefined> = process.env): Command {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      channel: { type: 'string', default: 'EMAIL' },
      address: { type: 'string' },
      hash: { type: 'string' },
      all: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      by: { type: 'string' },
      table: { type: 'string' },
      stage: { type: 'string' },
    },
  });
  const action = positionals[0];
  if (action !== 'list' && action !== 'lift' && action !== 'hash') {
    throw new UsageError('usage: ops:suppressions -- <list|lift|hash> [--channel EMAIL|PUSH|SMS] …');
  }
  const channel = String(values.channel).toUpperCase() as Channel;
  if (!CHANNELS.includes(channel)) throw new UsageError(`--channel must be one of ${CHANNELS.join(', ')}`);
  if (values.address !== undefined && values.hash !== undefined) {
    throw new UsageError('give --address or --hash, not both');
  }
  let hash: string | undefined;
  if (values.address !== undefined) hash = addressHash(channel, values.address);
  else if (values.hash !== undefined) {
    if (!/^[0-9a-f]{64}$/.test(values.hash)) throw new UsageError('--hash must be 64 lower-case hex characters');
    hash = values.hash;
  }
  if ((action === 'lift' || action === 'hash') && hash === undefined) {
    throw new UsageError(`${action} needs --address${action === 'lift' ? ' or --hash' : ''}`);
  }
  if (action !== 'hash' && values.table === undefined && values.stage === undefined) {
    throw new UsageError('name the table: --table NAME, or --stage STAGE for a deployed stack');
  }
  return {
    action,
    channel,
    all: values.all === true,
    json: values.json === true,
    ...(hash === undefined ? {} : { hash }),
    by: values.by ?? env.USER ?? 'operator',
    ...(values.table === undefined ? {} : { table: values.table }),
    ...(values.stage === undefined ? {} : { stage: values.stage }),
  };
}

export interface Io {
  readonly print: (line: string) => void;
  readonly now: () => number;
}

/** Runs one command against a store; returns the exit code. */
export async function run(command: Command, store: DynamoAudienceStore | undefined, io: Io): Promise<number> {
  if (command.action === 'hash') {
    io.print(`${command.channel} ${command.hash}`);
    return 0;
  }
  if (store === undefined) throw new UsageError('no table');
  if (command.action === 'lift') {
    const lifted = await store.lift(command.channel, command.hash as string, command.by, io.now());
    io.print(
      lifted
        ? `lifted ${command.channel} ${command.hash}: notifier sends to this address again` +
            (command.channel === 'EMAIL'
              ? ' — lift it from SES too (aws sesv2 delete-suppressed-destination --email-address …), or SES drops the next email as OnAccountSuppressionList and its bounce suppresses the address here again'
              : '')
        : `no active ${command.channel} suppression under ${command.hash}`,
    );
    return lifted ? 0 : 1;
  }
  const items = (await store.list(command.channel)).filter((i) => command.all || i.state === 'ACTIVE');
  if (command.json) {
    io.print(
      JSON.stringify(
        items.map(({ pk: _pk, sk, ...rest }) => ({ addressHash: sk, ...rest })),
        null,
        2,
      ),
    );
    return 0;
  }
  io.print(`${items.length} ${command.all ? '' : 'active '}${command.channel} suppression(s)`);
  for (const i of items) {
    const lifted = i.state === 'LIFTED' ? `  LIFTED ${i.liftedAt ?? ''} by ${i.liftedBy ?? '?'}` : '';
    io.print(`  ${i.sk}  ${i.cause.padEnd(10)} since ${i.since}  from ${i.notificationId}${lifted}`);
  }
  return 0;
}

async function main(): Promise<number> {
  const command = parseCommand(process.argv.slice(2));
  let store: DynamoAudienceStore | undefined;
  if (command.action !== 'hash') {
    const table =
      command.table ??
      (await readStackOutputs(new CloudFormationClient({}), stackNameOf(command.stage as string), ['TableName']))
        .TableName;
    store = new DynamoAudienceStore(DynamoDBDocumentClient.from(new DynamoDBClient({})), table);
  }
  return run(command, store, { print: (l) => process.stdout.write(`${l}\n`), now: Date.now });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    (code) => process.exit(code),
    (error: Error) => {
      process.stderr.write(
        `ops:suppressions: ${error.name === 'UsageError' ? '' : `${error.name}: `}${error.message}\n`,
      );
      process.exit(2);
    },
  );
}
