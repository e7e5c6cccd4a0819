/**
 * `npm run ops -- <command>`: the operator's tool, against a deployed stack (every name from its outputs) or the local
 * run (`npm start -- --keep`, then --endpoint). It parses, connects and prints; the work — every read and every
 * write — is the product's (functions/operator), and each command is a row of the table below.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CHANNELS, type Channel } from '../../functions/domain/channels.ts';
import { OperatorError, type VerifiedIdentity } from '../../functions/operator/index.ts';
import { parseCommandLine, runCommand, UsageError } from '../local/cli.ts';
import { type Command, type Given, OPS_EXIT, type OpsValues } from './command.ts';
import * as act from './commands-act.ts';
import * as held from './commands-held.ts';
import * as four from './commands-proposals.ts';
import * as read from './commands-read.ts';
import { connect } from './connect.ts';
import { REGION_COMMANDS, regionsMain } from './regions.ts';
import { spoolKeys } from './spool-keys.ts';
import { StackOutputsError } from './stack-outputs.ts';
import { USAGE } from './usage.ts';

export { USAGE };

/** Every command, in the order of --help. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  inspect: read.inspect,
  trace: read.trace,
  quarantine: read.quarantine,
  'replay-quarantine': act.replayQuarantine,
  'replay-failed-batches': act.replayBatches,
  resend: act.resend,
  refused: read.refused,
  repair: act.repair,
  evidence: read.evidence,
  customer: read.customer,
  export: act.exportData,
  erase: act.erase,
  audit: read.audit,
  suppressions: read.suppressions,
  'lift-suppression': act.lift,
  'suppression-hash': read.suppressionHash,
  propose: four.propose,
  proposals: four.proposals,
  approve: four.approve,
  reject: four.reject,
  held: held.held,
  'release-held': act.releaseHeld,
  'settle-held': act.settleHeld,
  'spool-keys': spoolKeys,
};

const OPTIONS = {
  stage: { type: 'string' },
  stack: { type: 'string' },
  endpoint: { type: 'string' },
  table: { type: 'string' },
  json: { type: 'boolean', default: false },
  since: { type: 'string' },
  reason: { type: 'string' },
  status: { type: 'string' },
  confirm: { type: 'boolean', default: false },
  'despite-accepted': { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  'value-file': { type: 'string' },
  fingerprint: { type: 'string' },
  user: { type: 'string' },
  'evidence-dir': { type: 'string' },
  channel: { type: 'string' },
  address: { type: 'string' },
  hash: { type: 'string' },
  all: { type: 'boolean', default: false },
  after: { type: 'string' },
  'sent-before': { type: 'string' },
} as const;

export function parseSince(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)([mhd])$/.exec(value);
  if (m !== null) return now - Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
  const t = Date.parse(value);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new UsageError(`--since must be like 30m, 24h, 7d or an ISO 8601 time, got "${value}"`);
  }
  return t;
}

function parseChannel(value: string | undefined): Channel {
  const channel = String(value ?? 'EMAIL').toUpperCase() as Channel;
  if (!CHANNELS.includes(channel)) throw new UsageError(`--channel must be one of ${CHANNELS.join(', ')}`);
  return channel;
}

function commandOf(name: string | undefined, args: readonly string[]): Command {
  const names = Object.keys(COMMANDS).join(', ');
  if (name === undefined) throw new UsageError(`name a command: ${names} (see --help)`);
  const command = COMMANDS[name];
  if (command === undefined) throw new UsageError(`unknown command "${name}": ${names} (see --help)`);
  const [min, max] = command.arity;
  if (args.length < min || args.length > max) {
    throw new UsageError(
      `${name} takes ${min === max ? min : `${min} or more`} argument${max === 1 ? '' : 's'} (see --help)`,
    );
  }
  return command;
}

export async function main(
  argv: string[],
  print: (text: string) => void = (t) => process.stdout.write(t),
  /** Locally, who acts when not this process's login: a test's second identity (never a command-line option). */
  as?: VerifiedIdentity,
) {
  if ((REGION_COMMANDS as readonly string[]).includes(argv[0] ?? '')) return regionsMain(argv, print);
  const { values, positionals } = parseCommandLine({ usage: USAGE, allowPositionals: true, options: OPTIONS }, argv);
  const [name, ...args] = positionals;
  const command = commandOf(name, args);
  const now = Date.now();
  const given: Given = {
    command: name as string,
    args,
    first: args[0] ?? '',
    values: values as OpsValues,
    since: parseSince(values.since, now),
    now,
    channel: parseChannel(values.channel),
    print,
    out: (doc, human) => print(values.json ? `${JSON.stringify(doc, null, 2)}\n` : `${human}\n`),
  };
  command.check?.(given);
  if (command.offline !== undefined) return command.offline(given);
  const corrected = values['value-file'] === undefined ? undefined : readValueFile(values['value-file']);
  return command.run({ ...given, target: await connect({ ...values, identity: as }), corrected });
}

function readValueFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new UsageError(
      `cannot read --value-file "${path}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runCommand('ops', async () => {
    try {
      return await main(process.argv.slice(2));
    } catch (error) {
      if (error instanceof OperatorError) {
        process.stderr.write(`ops: ${error.message}\n`);
        return error.kind === 'INVALID' ? OPS_EXIT.USAGE : OPS_EXIT.REFUSED;
      }
      if (error instanceof StackOutputsError) throw new UsageError(error.message);
      throw error;
    }
  });
}
