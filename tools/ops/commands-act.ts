/**
 * The operator CLI's commands that act: each one action of the operations (functions/operator/operations.ts). Without
 * --confirm it previews — the same rule the action applies, so a refusal is said before anything is done, and it
 * says whether the action needs a second identity's approval; with --confirm it asks the operations to do it, which
 * decide again, refuse truthfully and audit the outcome with the verified caller. Every one needs --reason.
 * `propose` asks for any of them to be approved by another identity; `approve`, `reject` and `proposals` decide and
 * list (docs/operations.md "Four eyes").
 */
import { addressHash } from '../../functions/domain/audience.ts';
import { parseNotificationId } from '../../functions/domain/keys.ts';
import {
  customerView,
  type OperatorActionName,
  OperatorError,
  type OutcomeOf,
  type PreviewAnswer,
  type RequestOf,
} from '../../functions/operator/index.ts';
import { UsageError } from '../local/cli.ts';
import { type Command, type Context, type Given, OPS_EXIT } from './command.ts';
import { batchesText, erasureText, previewText, repairText, replayText } from './text/actions.ts';
import { customerText } from './text/customer.ts';
import { heldDoneText } from './text/held.ts';
import { liftedText } from './text/lists.ts';

/** Deliberate actions say why: it is recorded with who and when (ops audit), and on the item where there is one. */
export const needsReason = (c: Given) => {
  if ((c.values.reason ?? '').trim() === '') {
    throw new UsageError(`${c.command} needs --reason "why": it is recorded with who and when (ops audit)`);
  }
};

/** One audited action as a command: how it reads its request, what it prints, what its outcome exits with. */
interface ActionCommand<N extends OperatorActionName> {
  readonly action: N;
  readonly arity: readonly [number, number];
  /** Checks that need nothing read (after --reason's). */
  check?(given: Given): void;
  request(c: Context): RequestOf<N>;
  /** Read first and shown before the preview (a customer's notices before their export or erasure). */
  intro?(c: Context): Promise<string>;
  /** Prints what it did; its exit code. */
  done(c: Context, outcome: OutcomeOf<N>): number;
}

/** A preview's fingerprint, as printed: the digest of what the action read (functions/domain/approval.ts). */
export const checkFingerprint = (c: Given) => {
  const given = c.values.fingerprint;
  if (given !== undefined && !/^[0-9a-f]{64}$/.test(given)) {
    throw new UsageError('--fingerprint is the 64 hex digits a preview printed');
  }
};

/** The command of an action: preview without --confirm (exit 3), the action with it. */
function actionCommand<N extends OperatorActionName>(
  spec: ActionCommand<N>,
): Command & { readonly spec: ActionCommand<N> } {
  return {
    spec,
    arity: spec.arity,
    check(c) {
      spec.check?.(c);
      needsReason(c);
      checkFingerprint(c);
    },
    async run(c) {
      const request = spec.request(c);
      const reason = c.values.reason ?? '';
      if (!c.values.confirm) {
        const answer = await c.target.operations.preview(spec.action, request);
        if (!answer.ok) throw new OperatorError(answer.refusal);
        const intro = spec.intro === undefined ? '' : `${await spec.intro(c)}\n`;
        c.print(`${intro}${previewText(answer)}\n${nextStep(c, answer, reason)}`);
        return OPS_EXIT.REFUSED;
      }
      return spec.done(c, await c.target.operations.confirm(spec.action, request, reason, c.values.fingerprint));
    },
  };
}

/** What the operator does next: confirm it, or — four eyes — propose it for another identity's approval. */
function nextStep(c: Context, answer: Extract<PreviewAnswer, { ok: true }>, reason: string): string {
  // Bound to what this preview showed: refused (CHANGED) if what the action reads differs by then.
  const bound = `--fingerprint ${answer.fingerprint}`;
  if (answer.approvalRequired) {
    return `Four eyes: ${answer.kind} is proposed by one identity and approved by another. Propose it with\n  npm run ops -- propose ${c.command} ${c.args.join(' ')} --reason "${reason}" ${bound} …(the same options)\nand ask a colleague to approve it (ops approve <id>).\n`;
  }
  return `Recorded as by ${c.target.caller}: "${reason}". Add --confirm ${bound} to do it (refused if what it acts on changed since this preview).\n`;
}

export const replayQuarantine = actionCommand({
  action: 'REPLAY',
  arity: [1, 1000],
  check(c) {
    if (c.values['value-file'] !== undefined && c.args.length !== 1) {
      throw new UsageError('a corrected value replaces one record: name exactly one quarantine id');
    }
  },
  request: (c) => ({ ids: [...c.args], ...(c.corrected === undefined ? {} : { corrected: c.corrected }) }),
  done(c, results) {
    c.out(results, replayText(results));
    return results.every((r) => r.outcome !== 'STILL_QUARANTINED') ? OPS_EXIT.OK : OPS_EXIT.FAILED;
  },
});

export const replayBatches = actionCommand({
  action: 'REPLAY_BATCHES',
  arity: [0, 0],
  check(c) {
    if (c.values['dry-run'])
      throw new UsageError('replay-failed-batches previews without --confirm: --dry-run is gone');
  },
  request(c) {
    if (c.target.outputs === undefined) {
      throw new UsageError(
        'replay-failed-batches reads the S3 bucket of a deployed stack (--stage or --stack): the local run retries a failing batch until it succeeds and parks nothing',
      );
    }
    return c.since === undefined ? {} : { sinceIso: new Date(c.since).toISOString() };
  },
  done(c, batches) {
    c.out(batches, batchesText(batches));
    return OPS_EXIT.OK;
  },
});

export const repair = actionCommand({
  action: 'REPAIR',
  arity: [1, 1],
  check(c) {
    if (c.values['value-file'] === undefined) {
      throw new UsageError("repair needs --value-file FILE: the producer's corrected event");
    }
  },
  request: (c) => ({ eventId: c.first, corrected: c.corrected as string }),
  done(c, result) {
    c.out(result, repairText(result));
    return result.outcome === 'REPAIRED' ? OPS_EXIT.OK : OPS_EXIT.FAILED;
  },
});

export const resend = actionCommand({
  action: 'RESEND',
  arity: [1, 1],
  check(c) {
    if (parseNotificationId(c.first) === undefined) {
      throw new OperatorError({
        code: 'INVALID',
        message: `"${c.first}" is not a notification id (<eventId>#EMAIL|PUSH|SMS)`,
      });
    }
  },
  request(c) {
    const despite = c.values['despite-accepted'];
    return { notificationId: c.first, ...(despite === undefined ? {} : { despiteAccepted: despite }) };
  },
  done(c, done) {
    c.out(
      done.item,
      `${c.first}: ${done.fromStatus} → PENDING, recorded (by ${c.target.caller}); dispatch sends it through the stream trigger.`,
    );
    return OPS_EXIT.OK;
  },
});

const userOf = (c: Given) => {
  if (c.values.user === undefined || c.values.user === '') throw new UsageError(`${c.command} needs --user <userId>`);
  return c.values.user;
};
/** The customer's notices, read and shown before their export or erasure. */
const customerIntro = async (c: Context) => customerText(await customerView(c.target.ports, userOf(c)));

export const exportData = actionCommand({
  action: 'EXPORT',
  arity: [0, 0],
  check: (c) => void userOf(c),
  request: (c) => ({ userId: userOf(c) }),
  intro: customerIntro,
  done(c, document) {
    // The export is the document itself, whatever --json says.
    c.print(`${JSON.stringify(document, null, 2)}\n`);
    return OPS_EXIT.OK;
  },
});

export const erase = actionCommand({
  action: 'ERASE',
  arity: [0, 0],
  check: (c) => void userOf(c),
  request: (c) => ({ userId: userOf(c) }),
  intro: customerIntro,
  done(c, result) {
    c.out(result, erasureText(result));
    return OPS_EXIT.OK;
  },
});

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

const liftCommand = actionCommand({
  action: 'SUPPRESSION_LIFT',
  arity: [0, 0],
  check: (c) => void suppressionHashOf(c),
  request: (c) => ({ channel: c.channel, addressHash: suppressionHashOf(c) }),
  done(c, lifted) {
    c.out(lifted, liftedText(c.channel, lifted.addressHash));
    return OPS_EXIT.OK;
  },
});

export const lift: Command = {
  ...liftCommand,
  async run(c) {
    try {
      return await liftCommand.run(c);
    } catch (error) {
      // None active (or lifted meanwhile): said as a result, not as an error.
      if (!(error instanceof OperatorError) || error.refusal.code !== 'NOT_FOUND') throw error;
      c.out({ lifted: false, channel: c.channel, addressHash: suppressionHashOf(c) }, error.message);
      return OPS_EXIT.REFUSED;
    }
  },
};

const notificationIdOf = (c: Given) => {
  if (parseNotificationId(c.first) === undefined) {
    throw new OperatorError({
      code: 'INVALID',
      message: `"${c.first}" is not a notification id (<eventId>#EMAIL|PUSH|SMS#E<epoch>)`,
    });
  }
};

/** A notice a failover held, sent now (late): the preview says whether the customer may get it twice. */
export const releaseHeld = actionCommand({
  action: 'RELEASE_HELD',
  arity: [1, 1],
  check: notificationIdOf,
  request: (c) => ({ notificationId: c.first }),
  done(c, outcome) {
    c.out(outcome, heldDoneText(outcome, 'released', c.target.caller));
    return OPS_EXIT.OK;
  },
});

/** A notice a failover held, closed without sending: handed over with the proof of the old region's send, or not sent. */
export const settleHeld = actionCommand({
  action: 'SETTLE_HELD',
  arity: [1, 1],
  check: notificationIdOf,
  request(c) {
    const proof = c.values['sent-before'];
    return { notificationId: c.first, ...(proof === undefined ? {} : { sentBefore: proof }) };
  },
  done(c, outcome) {
    c.out(outcome, heldDoneText(outcome, 'settled', c.target.caller));
    return OPS_EXIT.OK;
  },
});

/** Every action command, by the name `ops propose <name> …` takes. */
export const ACTION_COMMANDS: Readonly<Record<string, Command & { readonly spec: ActionCommand<OperatorActionName> }>> =
  {
    resend: resend as never,
    repair: repair as never,
    'replay-quarantine': replayQuarantine as never,
    'replay-failed-batches': replayBatches as never,
    'lift-suppression': liftCommand as never,
    export: exportData as never,
    erase: erase as never,
    'release-held': releaseHeld as never,
    'settle-held': settleHeld as never,
  };
