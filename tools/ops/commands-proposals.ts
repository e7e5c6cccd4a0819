/**
 * Four eyes at the command line (docs/operations.md "Four eyes"): `propose` asks for an action another identity must
 * approve — any action command with its own arguments —; `proposals` lists them; `approve` shows a proposal and what
 * it would do now, then, with --confirm, applies exactly what was proposed; `reject` closes one. Every step is the
 * operations' (functions/operator/operations.ts), audited with the verified caller.
 */
import { OperatorError, PROPOSAL_STATES } from '../../functions/operator/index.ts';
import { UsageError } from '../local/cli.ts';
import { type Command, type Context, type Given, OPS_EXIT } from './command.ts';
import { ACTION_COMMANDS, needsReason } from './commands-act.ts';
import { approvalText, previewText, proposalsText, proposalText } from './text/actions.ts';

/** The action command `propose` names, and the context as that command would have been given it. */
function proposed<C extends Given>(c: C): { command: (typeof ACTION_COMMANDS)[string]; as: C } {
  const names = Object.keys(ACTION_COMMANDS).join(', ');
  const command = ACTION_COMMANDS[c.first];
  if (command === undefined) throw new UsageError(`propose which action? one of ${names}`);
  const args = c.args.slice(1);
  const [min, max] = command.arity;
  if (args.length < min || args.length > max) {
    throw new UsageError(`propose ${c.first} takes ${min === max ? min : `${min} or more`} argument(s) (see --help)`);
  }
  return { command, as: { ...c, command: c.first, args, first: args[0] ?? '' } };
}

export const propose: Command = {
  arity: [1, 1001],
  check(c) {
    const { command, as } = proposed(c);
    command.check?.(as);
  },
  async run(c) {
    const { command, as } = proposed(c);
    const proposal = await c.target.operations.propose(
      command.spec.action,
      command.spec.request(as),
      c.values.reason ?? '',
      c.values.fingerprint,
    );
    c.out(
      proposal,
      `${proposalText(proposal)}\nAsk a colleague to approve it: npm run ops -- approve ${proposal.id} --reason "…"`,
    );
    return OPS_EXIT.OK;
  },
};

export const proposals: Command = {
  arity: [0, 0],
  check(c) {
    const status = c.values.status;
    const statuses: readonly string[] = [...PROPOSAL_STATES, 'EXPIRED'];
    if (status !== undefined && !statuses.includes(status)) {
      throw new UsageError(`--status must be one of ${statuses.join(', ')}`);
    }
  },
  async run(c) {
    const status = c.values.all ? undefined : ((c.values.status ?? 'PENDING') as (typeof PROPOSAL_STATES)[number]);
    const list = await c.target.operations.proposals({
      ...(status === undefined ? {} : { status }),
      ...(c.values.user === undefined ? {} : { userId: c.values.user }),
    });
    c.out(list, proposalsText(list, status));
    return OPS_EXIT.OK;
  },
};

/** The proposal named, as listed now. */
async function proposalNamed(c: Context) {
  const found = (await c.target.operations.proposals({})).find((p) => p.id === c.first);
  if (found === undefined) throw new OperatorError({ code: 'NOT_FOUND', message: `no proposal ${c.first}` });
  return found;
}

export const approve: Command = {
  arity: [1, 1],
  check: needsReason,
  async run(c) {
    const reason = c.values.reason ?? '';
    if (!c.values.confirm) {
      // What the approver approves: the proposal as shown to its proposer, and what the same request would do now.
      const p = await proposalNamed(c);
      const now = await c.target.operations.preview(p.action, p.request as never);
      const still = now.ok && now.fingerprint === p.fingerprint;
      const current = now.ok ? previewText(now) : `now refused: ${now.refusal.message}`;
      c.print(
        `${proposalText(p)}\n${still ? 'Unchanged since it was proposed.' : `CHANGED since it was proposed — an approval will be refused:\n${current}`}\n` +
          `Approving applies it, recorded as by ${c.target.caller}: "${reason}". Add --confirm to approve.\n`,
      );
      return OPS_EXIT.REFUSED;
    }
    const approved = await c.target.operations.approve(c.first, reason);
    c.out(approved, approvalText(approved.proposal, approved.outcome));
    return OPS_EXIT.OK;
  },
};

export const reject: Command = {
  arity: [1, 1],
  check: needsReason,
  async run(c) {
    const rejected = await c.target.operations.reject(c.first, c.values.reason ?? '');
    c.out(rejected, proposalText(rejected));
    return OPS_EXIT.OK;
  },
};
