/**
 * The operator CLI's commands that act. Each previews first — the same rule the write applies, so a refusal is
 * said before anything is done — and those that change what a customer receives or what is held about them need
 * --reason and --confirm, and are audited by the use case (functions/operator).
 */
import { addressHash } from '../../functions/domain/audience.ts';
import { parseNotificationId } from '../../functions/domain/keys.ts';
import {
  type Actor,
  apply,
  customerView,
  eraseCustomer,
  exportCustomer,
  liftSuppression,
  type OperatorAction,
  OperatorError,
  type OperatorPorts,
  preview,
  repair as repairAction,
  replayQuarantine as replayAction,
  replayFailedBatches,
  resend as resendAction,
} from '../../functions/operator/index.ts';
import { UsageError } from '../local/cli.ts';
import { type Command, type Context, type Given, OPS_EXIT } from './command.ts';
import {
  batchesText,
  confirmText,
  erasureText,
  repairText,
  replayText,
  resendPreviewText,
  reviewText,
} from './text/actions.ts';
import { customerText } from './text/customer.ts';
import { liftedText } from './text/lists.ts';

const actor = (c: Context): Actor => ({ by: c.by, reason: c.values.reason ?? '' });

/** Deliberate actions say why: it is recorded on the item, or with who and when (ops audit). */
const needsReason = (recordedOnItem: boolean) => (c: Given) => {
  if ((c.values.reason ?? '').trim() === '') {
    const where = recordedOnItem ? 'it is recorded on the item' : 'it is recorded with who and when (ops audit)';
    throw new UsageError(`${c.command} needs --reason "why": ${where}`);
  }
};

/** The plan, or the refusal thrown (exit 3, or 2 for a mistaken request): nothing is written or audited. */
async function planOf<Q, S, P, O>(action: OperatorAction<Q, S, P, O>, ports: OperatorPorts, request: Q): Promise<P> {
  const decided = await preview(action, ports, request);
  if (!decided.ok) throw new OperatorError(decided.refusal);
  return decided.value;
}

export const replayQuarantine: Command = {
  arity: [1, 1000],
  check: needsReason(false),
  async run(c) {
    if (c.corrected !== undefined && c.args.length !== 1) {
      throw new UsageError('a corrected value replaces one record: name exactly one quarantine id');
    }
    const request = { ids: c.args, ...(c.corrected === undefined ? {} : { corrected: c.corrected }) };
    if (!c.values.confirm) {
      const plan = await planOf(replayAction, c.target.ports, request);
      const review = plan.review === undefined ? '' : `${reviewText(plan.review)}\n`;
      const value = plan.review === undefined ? ' with the stored value' : ' with the edited value';
      c.print(
        `${review}${confirmText(`Replaying ${c.args.join(', ')} through ingest${value}`, c.by, c.values.reason ?? '')}`,
      );
      return OPS_EXIT.REFUSED;
    }
    const results = await apply(replayAction, c.target.ports, request, actor(c));
    c.out(results, replayText(results));
    return results.every((r) => r.outcome !== 'STILL_QUARANTINED') ? OPS_EXIT.OK : OPS_EXIT.FAILED;
  },
};

export const replayBatches: Command = {
  arity: [0, 0],
  async run(c) {
    if (c.target.outputs === undefined) {
      throw new UsageError(
        'replay-failed-batches reads the S3 bucket of a deployed stack (--stage or --stack): the local run retries a failing batch until it succeeds and parks nothing',
      );
    }
    const request = c.since === undefined ? {} : { since: new Date(c.since) };
    const dryRun = c.values['dry-run'] === true;
    const batches = dryRun
      ? (await planOf(replayFailedBatches, c.target.ports, request)).map(({ event: _event, ...b }) => b)
      : await apply(replayFailedBatches, c.target.ports, request, actor(c));
    c.out(batches, batchesText(batches, dryRun));
    return OPS_EXIT.OK;
  },
};

export const repair: Command = {
  arity: [1, 1],
  check(c) {
    if (c.values['value-file'] === undefined) {
      throw new UsageError("repair needs --value-file FILE: the producer's corrected event");
    }
  },
  async run(c) {
    const result = await apply(
      repairAction,
      c.target.ports,
      { eventId: c.first, corrected: c.corrected as string },
      actor(c),
    );
    c.out(result, repairText(result));
    return result.outcome === 'REPAIRED' ? OPS_EXIT.OK : OPS_EXIT.FAILED;
  },
};

export const resend: Command = {
  arity: [1, 1],
  check(c) {
    if (parseNotificationId(c.first) === undefined) {
      throw new OperatorError({
        code: 'INVALID',
        message: `"${c.first}" is not a notification id (<eventId>#EMAIL|PUSH|SMS)`,
      });
    }
    needsReason(true)(c);
  },
  async run(c) {
    const despite = c.values['despite-accepted'];
    const request = { notificationId: c.first, ...(despite === undefined ? {} : { despiteAccepted: despite }) };
    if (!c.values.confirm) {
      // Checks everything a resend would, then stops: the operator reads, then confirms.
      const plan = await planOf(resendAction, c.target.ports, request);
      c.print(resendPreviewText(c.first, plan, c.by, c.values.reason ?? ''));
      return OPS_EXIT.REFUSED;
    }
    const done = await apply(resendAction, c.target.ports, request, actor(c));
    c.out(
      done.item,
      `${c.first}: ${done.fromStatus} → PENDING, recorded (by ${c.by}); dispatch sends it through the stream trigger.`,
    );
    return OPS_EXIT.OK;
  },
};

/** export and erase: the customer view first; with --confirm, the document or the erasure. */
const customerAction = (kind: 'export' | 'erase'): Command => ({
  arity: [0, 0],
  check(c) {
    needsReason(false)(c);
    if (c.values.user === undefined || c.values.user === '') throw new UsageError(`${kind} needs --user <userId>`);
  },
  async run(c) {
    const userId = c.values.user as string;
    if (!c.values.confirm) {
      const what =
        kind === 'export'
          ? 'Exporting everything above (and its evidence) as one JSON document'
          : 'Erasing the personal data of every finished notice above from the table (in-flight ones stay; evidence under retention stays)';
      c.print(
        `${customerText(await customerView(c.target.ports, userId))}\n${confirmText(what, c.by, c.values.reason ?? '')}`,
      );
      return OPS_EXIT.REFUSED;
    }
    if (kind === 'export') {
      // The export is the document itself, whatever --json says.
      const document = await apply(exportCustomer, c.target.ports, { userId }, actor(c));
      c.print(`${JSON.stringify(document, null, 2)}\n`);
      return OPS_EXIT.OK;
    }
    const result = await apply(eraseCustomer, c.target.ports, { userId }, actor(c));
    c.out(result, erasureText(result));
    return OPS_EXIT.OK;
  },
});
export const exportData = customerAction('export');
export const erase = customerAction('erase');

/** The key a suppression is stored under: from --address (hashed here, nothing read) or --hash. */
export function suppressionHashOf(c: Given): string {
  const { address, hash } = c.values;
  if (address !== undefined && hash !== undefined) throw new UsageError('give --address or --hash, not both');
  if (address !== undefined) return addressHash(c.channel, address);
  if (hash !== undefined) {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new UsageError('--hash must be 64 lower-case hex characters');
    return hash;
  }
  throw new UsageError('name the address: --address ADDR or --hash HEX');
}

export const lift: Command = {
  arity: [0, 0],
  check(c) {
    suppressionHashOf(c);
    needsReason(true)(c);
  },
  async run(c) {
    const request = { channel: c.channel, addressHash: suppressionHashOf(c) };
    const none = { lifted: false, channel: c.channel, addressHash: request.addressHash };
    try {
      if (!c.values.confirm) {
        const active = await planOf(liftSuppression, c.target.ports, request);
        c.print(
          `${c.channel} ${request.addressHash} is suppressed (${active.cause} since ${active.since}, from ${active.notificationId}).\n` +
            confirmText('Lifting it lets the next notification to this address be sent', c.by, c.values.reason ?? ''),
        );
        return OPS_EXIT.REFUSED;
      }
      const lifted = await apply(liftSuppression, c.target.ports, request, actor(c));
      c.out(lifted, liftedText(c.channel, request.addressHash));
      return OPS_EXIT.OK;
    } catch (error) {
      // None active (or lifted meanwhile): said as a result, not as an error.
      if (!(error instanceof OperatorError) || error.refusal.code !== 'NOT_FOUND') throw error;
      c.out(none, error.message);
      return OPS_EXIT.REFUSED;
    }
  },
};
