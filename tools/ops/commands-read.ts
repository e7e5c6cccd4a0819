/** The operator CLI's commands that read: they change nothing and need no reason. */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { addressHash } from '../../functions/domain/audience.ts';
import { REJECTION_REASONS } from '../../functions/domain/event/contract.ts';
import {
  customerView,
  evidenceFound,
  inspectEvent,
  listAudit,
  listQuarantine,
  listRefused,
  listSuppressions,
} from '../../functions/operator/index.ts';
import { UsageError } from '../local/cli.ts';
import { type Command, type Context, type Given, OPS_EXIT } from './command.ts';
import { customerText, inspectText } from './text/customer.ts';
import { evidenceText, noEvidenceText } from './text/evidence.ts';
import { auditText, quarantineText, refusedText, suppressionsText } from './text/lists.ts';
import { localTrace, traceEvent, traceQuery, traceText } from './trace.ts';

const REFUSAL_REASONS: readonly string[] = ['INVALID_CONTACT', 'UNSENDABLE_ADDRESS', 'MISSING_CONTACT'];

const sinceIso = (c: Given) => (c.since === undefined ? {} : { sinceIso: new Date(c.since).toISOString() });
const reasonFilter = (c: Given) => (c.values.reason === undefined ? {} : { reason: c.values.reason });
const reasonOneOf = (reasons: readonly string[]) => (c: Given) => {
  if (c.values.reason !== undefined && !reasons.includes(c.values.reason)) {
    throw new UsageError(`--reason must be one of ${reasons.join(', ')}`);
  }
};

export const inspect: Command = {
  arity: [1, 1],
  async run(c) {
    const inspected = await inspectEvent(c.target.ports, c.first);
    const { view } = inspected;
    if (view.inbox === undefined && view.notifications.length === 0) {
      c.out(view, `no event ${c.first} in ${c.target.tableName} (quarantined? try: quarantine)`);
      return OPS_EXIT.REFUSED;
    }
    c.out(view, inspectText(inspected));
    return OPS_EXIT.OK;
  },
};

export const quarantine: Command = {
  arity: [0, 0],
  check: reasonOneOf(REJECTION_REASONS),
  async run(c) {
    const list = await listQuarantine(c.target.ports, { ...sinceIso(c), ...reasonFilter(c) });
    c.out(list, quarantineText(list));
    return OPS_EXIT.OK;
  },
};

export const refused: Command = {
  arity: [0, 0],
  check: reasonOneOf(REFUSAL_REASONS),
  async run(c) {
    const list = await listRefused(c.target.ports, { ...sinceIso(c), ...reasonFilter(c) });
    c.out(list, refusedText(list));
    return OPS_EXIT.OK;
  },
};

export const evidence: Command = {
  arity: [1, 1],
  async run(c) {
    const { evidence, evidenceLocator } = c.target.ports;
    const { proofs, unfound } = await evidenceFound(evidence, c.first, evidenceLocator, c.values.user);
    if (proofs.length === 0 && unfound.length === 0) {
      c.out(proofs, noEvidenceText(c.first, c.values.user));
      return OPS_EXIT.REFUSED;
    }
    // JSON: the proofs as before, with `unfound` beside them when a send named could not be shown (never "not sent").
    c.out(unfound.length === 0 ? proofs : { proofs, unfound }, evidenceText(proofs, unfound));
    return proofs.length === 0 ? OPS_EXIT.REFUSED : OPS_EXIT.OK;
  },
};

export const customer: Command = {
  arity: [1, 1],
  async run(c) {
    const view = await customerView(c.target.ports, c.first);
    c.out(view, customerText(view));
    return OPS_EXIT.OK;
  },
};

export const audit: Command = {
  arity: [0, 0],
  async run(c) {
    const records = await listAudit(c.target.ports, sinceIso(c).sinceIso);
    c.out(records, auditText(records));
    return OPS_EXIT.OK;
  },
};

export const suppressions: Command = {
  arity: [0, 0],
  async run(c) {
    const all = c.values.all === true;
    const items = await listSuppressions(c.target.ports, c.channel, all);
    c.out(items, suppressionsText(items, c.channel, all));
    return OPS_EXIT.OK;
  },
};

export const suppressionHash: Command = {
  arity: [0, 0],
  check(c) {
    if (c.values.address === undefined) throw new UsageError('suppression-hash needs --address ADDR');
  },
  offline(c) {
    const hash = addressHash(c.channel, c.values.address as string);
    c.print(
      c.values.json ? `${JSON.stringify({ channel: c.channel, addressHash: hash })}\n` : `${c.channel} ${hash}\n`,
    );
    return OPS_EXIT.OK;
  },
  run: async () => OPS_EXIT.OK,
};

export const trace: Command = {
  arity: [1, 1],
  async run(c: Context) {
    const eventId = c.first;
    const o = c.target.outputs;
    if (o === undefined) {
      const log = c.target.localRun?.logPath;
      const lines = localTrace(eventId, log);
      c.out(
        lines,
        lines.length === 0
          ? `no log line names ${eventId} in ${log ?? 'the log of a local run on this endpoint (none recorded)'} (the run logs WARN and above; LOG_LEVEL=INFO npm start logs everything)`
          : lines.join('\n'),
      );
      return OPS_EXIT.OK;
    }
    const rows = await traceEvent(
      {
        logs: new CloudWatchLogsClient({}),
        // The feedback function's too: its "deliveries recorded" and "delivery feedback" lines name the event's notifications.
        logGroups: [o.IngestLogGroupName, o.DispatchLogGroupName, o.SweeperLogGroupName, o.FeedbackLogGroupName],
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
        now: Date.now,
      },
      eventId,
      c.since === undefined ? 86_400_000 : c.now - c.since,
    );
    c.out(
      { query: traceQuery(eventId), rows },
      rows.length === 0
        ? `no log line about ${eventId} in the window (widen it with --since 7d)`
        : traceText(rows, eventId),
    );
    return OPS_EXIT.OK;
  },
};
