/** What a command of the operator CLI is given, and what it is: its arity, its checks, and what it runs. */
import type { Channel } from '../../functions/domain/channels.ts';
import { EXIT } from '../local/cli.ts';
import type { Target } from './connect.ts';

export const OPS_EXIT = { ...EXIT, REFUSED: 3 } as const;

/** The options of `npm run ops`, as parsed. */
export interface OpsValues {
  readonly json?: boolean;
  readonly since?: string;
  readonly reason?: string;
  readonly status?: string;
  readonly confirm?: boolean;
  readonly 'despite-accepted'?: string;
  readonly 'dry-run'?: boolean;
  readonly 'value-file'?: string;
  /** The fingerprint a preview printed: the action is refused (CHANGED) if what it reads now differs. */
  readonly fingerprint?: string;
  readonly user?: string;
  readonly channel?: string;
  readonly address?: string;
  readonly hash?: string;
  readonly all?: boolean;
  /** `held`: the page mark the previous page printed. */
  readonly after?: string;
  /** `settle-held`: the proof the old region sent it (its provider's message id, an evidence object). */
  readonly 'sent-before'?: string;
}

/** What every command is given before it connects anywhere. */
export interface Given {
  /** The command's name, as typed. */
  readonly command: string;
  readonly args: readonly string[];
  /** The first positional argument, or ''. */
  readonly first: string;
  readonly values: OpsValues;
  readonly channel: Channel;
  /** Start of the `--since` window (epoch ms), or undefined. */
  readonly since: number | undefined;
  readonly now: number;
  print(text: string): void;
  /** One result: with --json, the document; else the text. */
  out(doc: unknown, human: string): void;
}

/** And, once connected, where it acts (and through what, as whom: Target). */
export interface Context extends Given {
  readonly target: Target;
  /** The corrected value of --value-file, when given. */
  readonly corrected: string | undefined;
}

export interface Command {
  /** The positional arguments it takes: at least, at most. */
  readonly arity: readonly [number, number];
  /** Checks that need nothing read: a usage error exits 2 before anything connects. */
  check?(given: Given): void;
  /** Answers without a stack, reading nothing: the command needs no --stage, --stack or --endpoint. */
  offline?(given: Given): number;
  run(context: Context): Promise<number>;
}
