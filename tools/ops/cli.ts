/**
 * `npm run ops -- <command>`: the operator's tool, against a deployed stack (every name from its outputs) or the local
 * run (`npm start -- --keep`, then --endpoint). The work is in tools/ops/operations.ts; this file parses, connects, prints.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { REJECTION_REASONS } from '../../functions/domain/event/contract.ts';
import { acceptedMessageId, resendRefusal } from '../../functions/domain/resend.ts';
import { DynamoAudienceStore } from '../../functions/stores/audience-store.ts';
import { DynamoEvidenceIndex } from '../../functions/stores/evidence-index.ts';
import { DynamoEvidenceLocator, type EvidenceLocator } from '../../functions/stores/evidence-reader.ts';
import { type EvidenceStore, FileEvidenceStore, S3EvidenceStore } from '../../functions/stores/evidence-store.ts';
import { stackNameOf } from '../../lib/settings.ts';
import type { StackOutputs } from '../../lib/stack-outputs.ts';
import { EXIT, parseCommandLine, runCommand, UsageError } from '../local/cli.ts';
import { LOCAL_EVIDENCE_DIR } from '../local/evidence-dir.ts';
import {
  type AuditAction,
  auditText,
  type CorrectionReview,
  customerText,
  customerView,
  eraseCustomer,
  evidenceOf,
  evidenceText,
  exportCustomer,
  listAudit,
  quarantinedItem,
  reasonsOf,
  recordAudit,
  reviewCorrection,
  reviewText,
} from './customer.ts';
import {
  type IngestInvoker,
  inspectEvent,
  listQuarantine,
  OperatorError,
  parseNotificationId,
  replayFailedBatches,
  replayQuarantine,
  resendNotification,
  traceEvent,
  traceQuery,
} from './operations.ts';
import { listRefused, repairEvent } from './refusals.ts';
import { readStackOutputs, StackOutputsError } from './stack-outputs.ts';
import { liftedText, listSuppressions, parseChannel, suppressionHashOf, suppressionsText } from './suppressions.ts';

export const USAGE = `
Usage: npm run ops -- <command> [arguments] (--stage S | --stack NAME | --endpoint URL [--table NAME]) [--json]

Where notifier runs
  --stage S, --stack NAME   a deployed stack: every name comes from its outputs (region: AWS_REGION or the profile)
  --endpoint URL            the local run's DynamoDB Local (npm start -- --keep prints it); --table: notifier-local

Commands
  inspect <eventId>                  the inbox item and each notification: status, attempt, provider message id,
                                     last error, manual resends
  trace <eventId> [--since 24h]      every log line about the event across the three functions (Logs Insights,
                                     run for you); locally, the run's log file under .local/logs
  quarantine [--since 24h] [--reason R]
                                     quarantined records, newest first, with reason and detail and their id
  replay-quarantine <id>... --reason TEXT [--value-file FILE] --confirm
                                     feeds records back through ingest at their own offset: the stored value, or the
                                     producer's corrected event from FILE (one id; it must keep the record's eventId,
                                     and what it changes is shown first). Already processed: a duplicate. Audited.
  replay-failed-batches [--since 24h] [--dry-run]
                                     replays the batches the MSK mapping parked in S3 (FailedIngestBatchesBucketName)
  refused [--since 24h] [--reason R]
                                     notifications refused for a contact point without a sendable reading
                                     (INVALID_CONTACT, UNSENDABLE_ADDRESS, MISSING_CONTACT), newest first
  repair <eventId> --value-file FILE
                                     feeds the producer's corrected event through ingest: the same event apart from
                                     the refused channels' contact points moves them REFUSED → PENDING (sent once);
                                     anything else is a conflict, quarantined. A resend on the topic does the same.
  resend <eventId#CHANNEL> --reason TEXT [--by NAME] [--despite-accepted MESSAGE_ID] --confirm
                                     one deliberate resend of a FAILED or UNKNOWN notification, recorded on the item
                                     (who, when, why); refused for anything in flight, and for a notification the
                                     provider is known to have accepted (SENT, or its message id recorded) unless
                                     --despite-accepted names that message id. Without --confirm it shows what it
                                     would do, with the message id. Audited.
  evidence <eventId | eventId#CHANNEL> [--user ID]
                                     what the customer received, byte for byte as the provider got it, when, and
                                     what the provider reported — from the evidence store, found through the event's
                                     notifications and its customer's evidence index; after the table's items expired,
                                     --user names the customer (locally: .local/evidence, or --evidence-dir DIR, read
                                     whole when DynamoDB Local is gone)
  customer <userId>                  each notice of the customer with what was sent or exactly why not (opted out,
                                     a suppressed address and the report behind it, a refused contact point, too old)
  export --user ID --reason TEXT --confirm
                                     everything notifier holds about the customer as one JSON document (notifications,
                                     evidence, preferences, suppressions). Audited.
  erase --user ID --reason TEXT --confirm
                                     removes the customer's personal data from the table (nothing still to be sent;
                                     evidence under retention stays: docs/evidence-and-privacy.md). Audited.
  audit [--since 30d]                every audited operator action: who, when, why, what
  suppressions [--channel C] [--all] active suppressions of a channel (EMAIL, PUSH or SMS; default EMAIL) by address
                                     hash, cause, since and the notification behind it; --all: lifted ones too
  lift-suppression (--address ADDR | --hash HEX) [--channel C] --reason TEXT [--by NAME] --confirm
                                     lifts one: the next notification to that address is sent again. Recorded on the
                                     item (who, when, why); without --confirm it shows what it would lift. Audited.
  suppression-hash --address ADDR [--channel C]
                                     the key an address is suppressed under (nothing is read, no stack needed)

  --since D      30m, 24h, 7d, or an ISO 8601 time       --json   standard output is exactly one JSON document
  -h, --help     this text

Exit codes: 0 done; 1 failed (AWS refused a call, a replay failed); 2 usage; 3 refused or not found (a SENT
notification, an unknown id, resend without --confirm).
`;

const OPS_EXIT = { ...EXIT, REFUSED: 3 } as const;
const REFUSAL_REASONS: readonly string[] = ['INVALID_CONTACT', 'UNSENDABLE_ADDRESS', 'MISSING_CONTACT'];

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

interface Target {
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly outputs: StackOutputs | undefined;
  readonly endpoint: string | undefined;
  invokeIngest: IngestInvoker;
  /** The evidence store: the stack's bucket, or the local run's folder. Audit records go here too. */
  readonly evidence: EvidenceStore;
}

async function connect(values: {
  stage?: string;
  stack?: string;
  endpoint?: string;
  table?: string;
  'evidence-dir'?: string;
}): Promise<Target> {
  const given = [values.stage, values.stack, values.endpoint].filter((v) => v !== undefined).length;
  if (given !== 1) throw new UsageError('say where notifier runs: exactly one of --stage, --stack or --endpoint');
  if (values.endpoint !== undefined) {
    if (!/^https?:\/\/[^/]+/.test(values.endpoint)) {
      throw new UsageError(`--endpoint must be a URL like http://127.0.0.1:8000, got "${values.endpoint}"`);
    }
    const endpoint = values.endpoint;
    const tableName = values.table ?? 'notifier-local';
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        maxAttempts: 2,
      }),
    );
    return {
      doc,
      tableName,
      outputs: undefined,
      endpoint,
      evidence: new FileEvidenceStore(values['evidence-dir'] ?? LOCAL_EVIDENCE_DIR),
      // Locally, the real ingest handler in this process, configured as the local run configures it.
      invokeIngest: async (event) => {
        const { localIngest } = await import('./local-ingest.ts');
        await (await localIngest(endpoint, tableName))(event);
      },
    };
  }
  const stackName = values.stack ?? stackNameOf(values.stage as string);
  const outputs = await readStackOutputs(new CloudFormationClient({}), stackName);
  const lambda = new LambdaClient({ maxAttempts: 1, requestHandler: { requestTimeout: 150_000 } });
  return {
    doc: DynamoDBDocumentClient.from(new DynamoDBClient({})),
    tableName: outputs.TableName,
    outputs,
    endpoint: undefined,
    // Reading only: the lock mode matters to writes of evidence, which the CLI never makes (audit records take the
    // bucket's default retention).
    evidence: new S3EvidenceStore(new S3Client({}), outputs.EvidenceBucketName, 'GOVERNANCE'),
    invokeIngest: async (event) => {
      const answer = await lambda.send(
        new InvokeCommand({
          FunctionName: outputs.IngestFunctionName,
          InvocationType: 'RequestResponse',
          Payload: Buffer.from(JSON.stringify(event)),
        }),
      );
      if (answer.FunctionError !== undefined) {
        const payload = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
        throw new Error(
          `ingest ${outputs.IngestFunctionName} failed (${answer.FunctionError}): ${payload.slice(0, 300)}`,
        );
      }
    },
  };
}

/** Where the table and the customers' index name a send's evidence batch. */
const locatorOf = (target: Target): EvidenceLocator =>
  new DynamoEvidenceLocator(target.doc, target.tableName, new DynamoEvidenceIndex(target.doc, target.tableName));

const COMMANDS = [
  'inspect',
  'trace',
  'quarantine',
  'replay-quarantine',
  'replay-failed-batches',
  'resend',
  'refused',
  'repair',
  'evidence',
  'customer',
  'export',
  'erase',
  'audit',
  'suppressions',
  'lift-suppression',
  'suppression-hash',
] as const;
type Command = (typeof COMMANDS)[number];

export async function main(argv: string[], print: (text: string) => void = (t) => process.stdout.write(t)) {
  const { values, positionals } = parseCommandLine(
    {
      usage: USAGE,
      allowPositionals: true,
      options: {
        stage: { type: 'string' },
        stack: { type: 'string' },
        endpoint: { type: 'string' },
        table: { type: 'string' },
        json: { type: 'boolean', default: false },
        since: { type: 'string' },
        reason: { type: 'string' },
        by: { type: 'string' },
        confirm: { type: 'boolean', default: false },
        'despite-accepted': { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        'value-file': { type: 'string' },
        user: { type: 'string' },
        'evidence-dir': { type: 'string' },
        channel: { type: 'string' },
        address: { type: 'string' },
        hash: { type: 'string' },
        all: { type: 'boolean', default: false },
      },
    },
    argv,
  );
  const [command, ...args] = positionals;
  if (command === undefined) throw new UsageError(`name a command: ${COMMANDS.join(', ')} (see --help)`);
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw new UsageError(`unknown command "${command}": ${COMMANDS.join(', ')} (see --help)`);
  }
  const arity: Record<Command, [number, number]> = {
    inspect: [1, 1],
    trace: [1, 1],
    quarantine: [0, 0],
    'replay-quarantine': [1, 1000],
    'replay-failed-batches': [0, 0],
    resend: [1, 1],
    refused: [0, 0],
    repair: [1, 1],
    evidence: [1, 1],
    customer: [1, 1],
    export: [0, 0],
    erase: [0, 0],
    audit: [0, 0],
    suppressions: [0, 0],
    'lift-suppression': [0, 0],
    'suppression-hash': [0, 0],
  };
  const [min, max] = arity[command as Command];
  if (args.length < min || args.length > max) {
    throw new UsageError(
      `${command} takes ${min === max ? min : `${min} or more`} argument${max === 1 ? '' : 's'} (see --help)`,
    );
  }
  const first = args[0] ?? '';
  const now = Date.now();
  const since = parseSince(values.since, now);
  if (
    command === 'quarantine' &&
    values.reason !== undefined &&
    !(REJECTION_REASONS as readonly string[]).includes(values.reason)
  ) {
    throw new UsageError(`--reason must be one of ${REJECTION_REASONS.join(', ')}`);
  }
  if (command === 'refused' && values.reason !== undefined && !REFUSAL_REASONS.includes(values.reason)) {
    throw new UsageError(`--reason must be one of ${REFUSAL_REASONS.join(', ')}`);
  }
  if (command === 'repair' && values['value-file'] === undefined) {
    throw new UsageError("repair needs --value-file FILE: the producer's corrected event");
  }
  if (command === 'resend') {
    parseNotificationId(first);
  }
  const channel = parseChannel(values.channel);
  if (command === 'suppression-hash') {
    if (values.address === undefined) throw new UsageError('suppression-hash needs --address ADDR');
    const hash = suppressionHashOf(channel, { address: values.address });
    print(values.json ? `${JSON.stringify({ channel, addressHash: hash })}\n` : `${channel} ${hash}\n`);
    return OPS_EXIT.OK;
  }
  const liftHash = command === 'lift-suppression' ? suppressionHashOf(channel, values) : undefined;
  if ((command === 'resend' || command === 'lift-suppression') && (values.reason ?? '').trim() === '') {
    throw new UsageError(`${command} needs --reason "why": it is recorded on the item`);
  }
  // Deliberate actions say why, and are recorded (who, when, why) before they happen (resend and lift: above).
  const audited: readonly string[] = ['replay-quarantine', 'export', 'erase'];
  if (audited.includes(command) && (values.reason === undefined || values.reason.trim() === '')) {
    throw new UsageError(`${command} needs --reason "why": it is recorded with who and when (ops audit)`);
  }
  if ((command === 'export' || command === 'erase') && (values.user === undefined || values.user === '')) {
    throw new UsageError(`${command} needs --user <userId>`);
  }
  const corrected = values['value-file'] === undefined ? undefined : readValueFile(values['value-file']);
  const by = values.by ?? process.env.NOTIFIER_OPERATOR ?? userInfo().username;

  const target = await connect(values);
  /** The audit record of a deliberate action, written before the action (docs/evidence-and-privacy.md). */
  const audit = (action: AuditAction, what: string, details: Record<string, unknown>) =>
    recordAudit(target.evidence, { action, by, reason: values.reason as string, target: what, details }, Date.now());
  const json = values.json === true;
  const out = (doc: unknown, human: string) => print(json ? `${JSON.stringify(doc, null, 2)}\n` : `${human}\n`);

  switch (command as Command) {
    case 'inspect': {
      const view = await inspectEvent(target, first);
      if (view.inbox === undefined && view.notifications.length === 0) {
        out(view, `no event ${args[0]} in ${target.tableName} (quarantined? try: quarantine)`);
        return OPS_EXIT.REFUSED;
      }
      out(view, inspectText(view, await reasonsOf(target, view)));
      return OPS_EXIT.OK;
    }
    case 'quarantine': {
      const list = await listQuarantine(target, {
        ...(since === undefined ? {} : { sinceIso: new Date(since).toISOString() }),
        ...(values.reason === undefined ? {} : { reason: values.reason }),
      });
      out(
        list,
        list.length === 0
          ? 'no quarantined records'
          : [
              `${list.length} quarantined record${list.length === 1 ? '' : 's'} (newest first; replay with: replay-quarantine <id>)`,
              ...list.map(
                (q) =>
                  `${q.receivedAt}  ${q.id}  ${q.reason}${q.eventId === null ? '' : `  ${q.eventId}`}\n    ${q.detail}${q.replayedAt === null ? '' : `\n    replayed ${q.replayedAt}`}`,
              ),
            ].join('\n'),
      );
      return OPS_EXIT.OK;
    }
    case 'replay-quarantine': {
      let review: CorrectionReview | undefined;
      if (corrected !== undefined) {
        if (args.length !== 1)
          throw new UsageError('a corrected value replaces one record: name exactly one quarantine id');
        const item = await quarantinedItem(target, first);
        review = reviewCorrection(first, item, corrected);
        if (review.refusal !== null) throw new OperatorError(`${first}: ${review.refusal}`, 'REFUSED');
      }
      if (!values.confirm) {
        print(
          `${
            review === undefined
              ? ''
              : `${reviewText(review)}
`
          }Replaying ${args.join(', ')} through ingest${review === undefined ? ' with the stored value' : ' with the edited value'}, recorded as by ${by}: "${values.reason}". Add --confirm to do it.
`,
        );
        return OPS_EXIT.REFUSED;
      }
      await audit(
        'REPLAY',
        args.join(','),
        review === undefined ? { value: 'stored' } : { value: 'edited', changes: review.changes },
      );
      const results = await replayQuarantine({ ...target, now: Date.now }, args, corrected);
      out(results, results.map((r) => `${r.id}  ${r.outcome}${r.eventId === null ? '' : `  ${r.eventId}`}`).join('\n'));
      return results.every((r) => r.outcome !== 'STILL_QUARANTINED') ? OPS_EXIT.OK : OPS_EXIT.FAILED;
    }
    case 'refused': {
      const list = await listRefused(target, {
        ...(since === undefined ? {} : { sinceIso: new Date(since).toISOString() }),
        ...(values.reason === undefined ? {} : { reason: values.reason }),
      });
      out(
        list,
        list.length === 0
          ? 'no refused notifications'
          : [
              `${list.length} refused notification${list.length === 1 ? '' : 's'} (newest first; once the producer fixes the contact point: repair <eventId> --value-file FILE)`,
              ...list.map((r) => `${r.createdAt}  ${r.notificationId}  ${r.reason}\n    ${r.detail}`),
            ].join('\n'),
      );
      return OPS_EXIT.OK;
    }
    case 'repair': {
      const result = await repairEvent({ ...target, now: Date.now }, first, corrected as string);
      out(
        result,
        [
          `${result.eventId}  ${result.outcome}`,
          ...result.channels.map(
            (c) => `  ${c.channel.padEnd(5)} ${c.status}${c.reason === null ? '' : ` (${c.reason})`}`,
          ),
          ...(result.quarantine === null
            ? []
            : [`  quarantined ${result.quarantine.id}: ${result.quarantine.reason} ${result.quarantine.detail}`]),
        ].join('\n'),
      );
      return result.outcome === 'REPAIRED' ? OPS_EXIT.OK : OPS_EXIT.FAILED;
    }
    case 'replay-failed-batches': {
      if (target.outputs === undefined) {
        throw new UsageError(
          'replay-failed-batches reads the S3 bucket of a deployed stack (--stage or --stack): the local run retries a failing batch until it succeeds and parks nothing',
        );
      }
      const batches = await replayFailedBatches(
        {
          s3: new S3Client({}),
          bucket: target.outputs.FailedIngestBatchesBucketName,
          invokeIngest: target.invokeIngest,
        },
        since === undefined ? undefined : new Date(since),
        { dryRun: values['dry-run'] === true },
      );
      out(
        batches,
        batches.length === 0
          ? 'no parked batches'
          : batches
              .map(
                (b) =>
                  `${values['dry-run'] ? 'would replay' : 'replayed'} ${b.key} (${b.records} records, parked ${b.lastModified.toISOString()})`,
              )
              .join('\n'),
      );
      return OPS_EXIT.OK;
    }
    case 'resend': {
      const id = first;
      const view = await inspectEvent(target, parseNotificationId(id).eventId);
      const item = view.notifications.find((n) => n.notificationId === id);
      if (item === undefined) throw new OperatorError(`no notification ${id}`, 'NOT_FOUND');
      const accepted = acceptedMessageId(item);
      const despite = values['despite-accepted'];
      // The rule the write itself applies, in the preview too: an erased one, an accepted one (its message id on
      // screen, for the operator to check that send before deciding on a second copy), a refused or in-flight one.
      const refusal = resendRefusal(id, item, despite);
      if (refusal !== undefined) throw new OperatorError(refusal, 'REFUSED');
      if (!values.confirm) {
        // Checks everything a resend would, then stops: the operator reads, then confirms.
        print(
          `${id} is ${item.status} (attempt ${item.attempt}${item.lastError ? `, last error ${item.lastError}` : ''}${accepted === undefined ? '' : `, accepted by the provider as message ${accepted}`}).\n` +
            `${item.status === 'UNKNOWN' && accepted === undefined ? 'UNKNOWN means the provider may have accepted it: check its records (SES events, SNS delivery logs) first.\n' : ''}` +
            `Resending sends it once more${accepted === undefined ? '' : ' — a second copy'}, recorded as by ${by}: "${values.reason}". Add --confirm to do it.\n`,
        );
        return OPS_EXIT.REFUSED;
      }
      await audit('RESEND', id, {
        fromStatus: item.status,
        attempt: item.attempt,
        ...(despite === undefined ? {} : { despiteAccepted: despite }),
      });
      const after = await resendNotification(
        { ...target, now: Date.now },
        {
          notificationId: id,
          by,
          reason: values.reason as string,
          ...(despite === undefined ? {} : { despiteAccepted: despite }),
        },
        { status: String(item.status), attempt: Number(item.attempt) },
      );
      out(after, `${id}: ${item.status} → PENDING, recorded (by ${by}); dispatch sends it through the stream trigger.`);
      return OPS_EXIT.OK;
    }
    case 'evidence': {
      const proofs = await evidenceOf(target.evidence, first, locatorOf(target), values.user);
      if (proofs.length === 0) {
        out(proofs, `no evidence of ${first} in the evidence store (not sent, or sent before evidence was kept)`);
        return OPS_EXIT.REFUSED;
      }
      out(proofs, evidenceText(proofs));
      return OPS_EXIT.OK;
    }
    case 'customer': {
      const view = await customerView(target, target.evidence, first, locatorOf(target));
      out(view, customerText(view));
      return OPS_EXIT.OK;
    }
    case 'export':
    case 'erase': {
      const userId = values.user as string;
      if (!values.confirm) {
        const view = await customerView(target, target.evidence, userId, locatorOf(target));
        print(
          `${customerText(view)}
${command === 'export' ? 'Exporting everything above (and its evidence) as one JSON document' : 'Erasing the personal data of every finished notice above from the table (in-flight ones stay; evidence under retention stays)'}, recorded as by ${by}: "${values.reason}". Add --confirm to do it.
`,
        );
        return OPS_EXIT.REFUSED;
      }
      await audit(command === 'export' ? 'EXPORT' : 'ERASE', userId, {});
      if (command === 'export') {
        // The export is the document itself, whatever --json says.
        print(
          `${JSON.stringify(await exportCustomer(target, target.evidence, userId, Date.now(), locatorOf(target)), null, 2)}\n`,
        );
        return OPS_EXIT.OK;
      }
      const result = await eraseCustomer(target, userId, Date.now());
      out(
        result,
        [
          `${userId}: erased ${result.erased.length} notification(s); preferences ${result.preferences}`,
          ...result.kept.map(
            (k) => `  kept ${k.notificationId} (${k.status}: still to be sent; erase again once it is)`,
          ),
        ].join('\n'),
      );
      return OPS_EXIT.OK;
    }
    case 'audit': {
      const records = await listAudit(target.evidence, since === undefined ? undefined : new Date(since).toISOString());
      out(records, auditText(records));
      return OPS_EXIT.OK;
    }
    case 'suppression-hash':
      return OPS_EXIT.OK; // answered above: it reads nothing, so it needs no stack
    case 'suppressions': {
      const all = values.all === true;
      const items = await listSuppressions(new DynamoAudienceStore(target.doc, target.tableName), channel, all);
      out(items, suppressionsText(items, channel, all));
      return OPS_EXIT.OK;
    }
    case 'lift-suppression': {
      const hash = liftHash as string;
      const store = new DynamoAudienceStore(target.doc, target.tableName);
      const active = (await listSuppressions(store, channel, false)).find((i) => i.addressHash === hash);
      if (active === undefined) {
        out({ lifted: false, channel, addressHash: hash }, `no active ${channel} suppression under ${hash}`);
        return OPS_EXIT.REFUSED;
      }
      if (!values.confirm) {
        print(
          `${channel} ${hash} is suppressed (${active.cause} since ${active.since}, from ${active.notificationId}).\n` +
            `Lifting it lets the next notification to this address be sent, recorded as by ${by}: "${values.reason}". Add --confirm to do it.\n`,
        );
        return OPS_EXIT.REFUSED;
      }
      await audit('SUPPRESSION_LIFT', `${channel}#${hash}`, {
        cause: active.cause,
        since: active.since,
        notificationId: active.notificationId,
      });
      const lifted = await store.lift(channel, hash, by, Date.now(), values.reason as string);
      out(
        { lifted, channel, addressHash: hash, by },
        lifted ? liftedText(channel, hash) : `no active ${channel} suppression under ${hash}`,
      );
      return lifted ? OPS_EXIT.OK : OPS_EXIT.REFUSED;
    }
    case 'trace': {
      const eventId = first;
      if (target.outputs === undefined) {
        const lines = localTrace(eventId);
        out(
          lines,
          lines.length === 0
            ? `no log line names ${eventId} in .local/logs (the run logs WARN and above; LOG_LEVEL=INFO npm start logs everything)`
            : lines.join('\n'),
        );
        return OPS_EXIT.OK;
      }
      const o = target.outputs;
      const rows = await traceEvent(
        {
          logs: new CloudWatchLogsClient({}),
          logGroups: [o.IngestLogGroupName, o.DispatchLogGroupName, o.SweeperLogGroupName],
          sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
          now: Date.now,
        },
        eventId,
        since === undefined ? 86_400_000 : now - since,
      );
      out(
        { query: traceQuery(eventId), rows },
        rows.length === 0
          ? `no log line about ${eventId} in the window (widen it with --since 7d)`
          : rows
              .map(
                (r) =>
                  `${r['@timestamp']}  ${(r['@log'] ?? '').split(':').pop()}  ${r.level ?? ''} ${r.message ?? ''}  ${Object.entries(
                    r,
                  )
                    .filter(([k]) => !['@timestamp', '@log', 'level', 'message'].includes(k))
                    .map(([k, v]) => `${k}=${v}`)
                    .join(' ')}`,
              )
              .join('\n'),
      );
      return OPS_EXIT.OK;
    }
  }
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

function inspectText(view: Awaited<ReturnType<typeof inspectEvent>>, reasons: Map<string, string>): string {
  const i = view.inbox;
  const lines = [
    `event ${view.eventId}`,
    i === undefined
      ? '  inbox: none (notifications without an inbox item: this should not happen)'
      : `  inbox: ${i.type}, received ${i.receivedAt} from ${JSON.stringify(i.source)}, channels ${JSON.stringify(i.channels)}${i.skipped ? `, not sent: ${i.skipped}` : ''}${Array.isArray(i.refusedChannels) ? `, refused ${JSON.stringify(i.refusedChannels)}` : ''}`,
  ];
  for (const n of view.notifications) {
    lines.push(
      `  ${String(n.channel).padEnd(5)} ${String(n.status).padEnd(8)} attempt ${n.attempt}  to ${n.recipient}  updated ${n.updatedAt}`,
    );
    const why = reasons.get(String(n.notificationId));
    if (why !== undefined) lines.push(`        ${why}`);
    if (n.providerMessageId)
      lines.push(
        `        provider message id ${n.providerMessageId}${n.acceptedLateAt ? ' (accepted after its lease expired)' : ''}`,
      );
    if (n.lastError) lines.push(`        last error ${n.lastError}`);
    if (n.refusedReason) lines.push(`        refused ${n.refusedReason}: ${n.refusedDetail}`);
    if (n.repairedAt) lines.push(`        repaired ${n.repairedAt} (first created ${n.firstCreatedAt})`);
    for (const r of (n.manualResends as Record<string, unknown>[] | undefined) ?? []) {
      lines.push(`        manual resend ${r.at} by ${r.by} from ${r.fromStatus}: ${r.reason}`);
    }
  }
  return lines.join('\n');
}

/** Locally: the lines of the newest run's log file that name the event. */
function localTrace(eventId: string): string[] {
  const dir = join(import.meta.dirname, '..', '..', '.local', 'logs');
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => join(dir, f))
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  } catch {
    return [];
  }
  const newest = files[0];
  if (newest === undefined) return [];
  return readFileSync(newest, 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"eventId":${JSON.stringify(eventId)}`) || l.includes(`"notificationId":"${eventId}#`));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runCommand('ops', async () => {
    try {
      return await main(process.argv.slice(2));
    } catch (error) {
      if (error instanceof OperatorError) {
        process.stderr.write(`ops: ${error.message}\n`);
        return error.code === 'INVALID' ? OPS_EXIT.USAGE : OPS_EXIT.REFUSED;
      }
      if (error instanceof StackOutputsError) throw new UsageError(error.message);
      throw error;
    }
  });
}
