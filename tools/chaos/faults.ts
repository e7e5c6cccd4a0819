/**
 * Fault injection for the chaos suite: a fake clock, a DynamoDB client middleware that injects the failures DynamoDB
 * Local never raises (transaction cancellations, throttling, latency, commit-then-timeout) and crash points, and a
 * per-invocation context that records whether the invocation "crashed".
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

// ── The fake clock: every Date.now() in this process is real time plus an offset the suite advances ──
const realNow = Date.now;
let offsetMs = 0;
export const clock = {
  install(): void {
    Date.now = () => realNow() + offsetMs;
  },
  advance(ms: number): void {
    offsetMs += ms;
  },
  now: () => realNow() + offsetMs,
};

// ── Invocations: a crash anywhere inside one fails the whole invocation, as a dying Lambda does ──
export interface Invocation {
  crashed: boolean;
  /** When it started, on the suite's clock: its deadline is this plus its Lambda timeout (sendsWithoutTime). */
  startedAt?: number;
  /**
   * What this invocation is in the run's schedule (e.g. the Kafka batch, its copy and its try): fault decisions made
   * inside it are keyed by it, so they do not shift with how far a concurrent or crashed invocation got.
   */
  id?: string;
}
export const invocation = new AsyncLocalStorage<Invocation>();

export class InjectedCrash extends Error {
  override name = 'InjectedCrash';
}

export const CRASH_POINTS = [
  'beforeTransaction',
  'afterCommit',
  'afterClaim',
  'afterProviderAccepted',
  'afterSentBeforeResponse',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/**
 * Kill points on the spool path (an invocation of few records puts each send's record in the evidence spool before its
 * SENT write, and indexes it at its end): armed by test/integration/spool-kill-points.test.ts. The chaos world does
 * not spool, so its runs never meet them, and they are not among CRASH_POINTS (each of which a seeded run must meet).
 */
export const SPOOL_CRASH_POINTS = ['beforeSpoolPut', 'afterSpoolPut', 'beforeEvidenceIndex'] as const;
export type SpoolCrashPoint = (typeof SPOOL_CRASH_POINTS)[number];

export const DYNAMO_FAULTS = [
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'ThrottlingException',
  /** A 500 from DynamoDB once the SDK's retries are spent: nothing written. */
  'InternalServerError',
  /** The request timed out before DynamoDB took it: nothing written (the other timeout is commitThenTimeout). */
  'requestTimeout',
  'commitThenTimeout',
  'latency',
  /**
   * A claim that takes nearly a whole invocation (the suite's clock moves SLOW_CLAIM_MS on while it runs): the send
   * must not start after it (no time left, the lease nearly over).
   */
  'slowClaim',
] as const;
export type DynamoFault = (typeof DYNAMO_FAULTS)[number];
/** How long a slow claim takes: a whole dispatch invocation (the chaos world's Lambda context is 60 s). */
export const SLOW_CLAIM_MS = 58_500;

/** Decides, per DynamoDB call, which fault (if any) to inject; the suite's scenario drives it. */
export interface FaultPlan {
  dynamo(command: string, input: Record<string, unknown>): DynamoFault | CrashPoint | SpoolCrashPoint | undefined;
}

export const faultCounts: Record<string, number> = {};
const count = (k: string) => {
  faultCounts[k] = (faultCounts[k] ?? 0) + 1;
};

export const isClaim = (input: Record<string, unknown>) =>
  input.ConditionExpression === '#status = :fromStatus AND (attribute_not_exists(retryAt) OR retryAt <= :nowMs)';
/** The input may already be marshalled ({ S: 'SENT' }) by the document client when this middleware sees it. */
export const isMarkSent = (input: Record<string, unknown>) => {
  const to = (input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':to'];
  return to === 'SENT' || (to as { S?: string } | undefined)?.S === 'SENT';
};
/** The document client's commands run as the low-level ones: accept either name. */
export const isTransactWrite = (command: string) =>
  command === 'TransactWriteItemsCommand' || command === 'TransactWriteCommand';
const isUpdate = (command: string) => command === 'UpdateItemCommand' || command === 'UpdateCommand';

/** Which crash points can fire on this call. */
export function crashPointsFor(command: string, input: Record<string, unknown>): CrashPoint[] {
  if (isTransactWrite(command)) return ['beforeTransaction', 'afterCommit'];
  if (isUpdate(command) && isClaim(input)) return ['afterClaim'];
  if (isUpdate(command) && isMarkSent(input)) return ['afterProviderAccepted', 'afterSentBeforeResponse'];
  return [];
}

/** Which spool kill points can fire on this call, given the spool's and the evidence index's tables. */
export function spoolCrashPointsFor(
  command: string,
  input: Record<string, unknown>,
  tables: { readonly spool: string; readonly index: string },
): SpoolCrashPoint[] {
  if (command.startsWith('Put') && input.TableName === tables.spool) return ['beforeSpoolPut', 'afterSpoolPut'];
  const batched = Object.keys((input.RequestItems as Record<string, unknown> | undefined) ?? {});
  if (input.TableName === tables.index || batched.includes(tables.index)) return ['beforeEvidenceIndex'];
  return [];
}

const cancelled = (code: string) =>
  new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${code}]`,
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: [{ Code: code }],
  });

const throttled = () =>
  Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
    name: 'ThrottlingException',
    $metadata: { httpStatusCode: 400 },
  });

const internalServerError = () =>
  Object.assign(new Error('Internal server error'), {
    name: 'InternalServerError',
    $metadata: { httpStatusCode: 500 },
  });

const requestTimedOut = () =>
  Object.assign(new Error('connect ETIMEDOUT'), { name: 'TimeoutError', code: 'ETIMEDOUT' });

const timeoutAfterCommit = () =>
  Object.assign(new Error('socket hang up after the request was written'), {
    name: 'TimeoutError',
    code: 'ECONNRESET',
  });

/** Adds the fault middleware to the handlers' own DynamoDB client (the document client shares its stack). */
export function injectDynamoFaults(client: DynamoDBDocumentClient, plan: FaultPlan): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName ?? '');
      const input = args.input as Record<string, unknown>;
      // A dead execution environment talks to nobody: whatever its code still tries after the crash fails too.
      if (invocation.getStore()?.crashed === true) throw new InjectedCrash('the execution environment is dead');
      const fault = plan.dynamo(command, input);
      if (fault === undefined) return next(args);
      count(fault);
      switch (fault) {
        case 'TransactionConflict':
        case 'ThrottlingError':
        case 'ProvisionedThroughputExceeded':
          if (isTransactWrite(command)) throw cancelled(fault);
          return next(args);
        case 'ThrottlingException':
          throw throttled();
        case 'InternalServerError':
          throw internalServerError();
        case 'requestTimeout':
          throw requestTimedOut();
        case 'latency':
          await new Promise((r) => setTimeout(r, 5));
          return next(args);
        case 'slowClaim': {
          const answer = await next(args);
          clock.advance(SLOW_CLAIM_MS);
          return answer;
        }
        case 'commitThenTimeout':
          // Armed here, fired below the SDK's retry middleware: the write commits, the reply is lost, and the SDK
          // retries the request as it would in AWS.
          (context as { chaosCommitThenTimeout?: boolean }).chaosCommitThenTimeout = true;
          return next(args);
        case 'beforeTransaction':
          return crash();
        case 'afterCommit':
        case 'afterClaim':
        case 'afterSentBeforeResponse':
        case 'afterSpoolPut': {
          await next(args);
          return crash();
        }
        case 'afterProviderAccepted':
        case 'beforeSpoolPut':
        case 'beforeEvidenceIndex':
          return crash();
      }
    },
    { step: 'initialize', name: 'chaosFaults', priority: 'high' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const armed = context as { chaosCommitThenTimeout?: boolean };
      if (!armed.chaosCommitThenTimeout) return next(args);
      armed.chaosCommitThenTimeout = false;
      await next(args);
      throw timeoutAfterCommit();
    },
    { step: 'deserialize', name: 'chaosCommitThenTimeout', priority: 'low' },
  );
}

function crash(): never {
  const current = invocation.getStore();
  if (current) current.crashed = true;
  throw new InjectedCrash('the execution environment died here');
}
