/**
 * What a DynamoDB call or a stream record is, without its timing — the identity a seeded run's fault decisions are
 * keyed by, so two runs of one seed decide alike however their calls interleave — and which faults a call may meet.
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { type CrashPoint, type DynamoFault, isClaim, isTransactWrite } from './faults.ts';

/**
 * Every random fault decision of a seeded run: a hash of (seed, the operation's identity, how many times that identity
 * was seen in this run). The identity names the operation the way the pipeline does — a transaction by its eventId,
 * an update by its item and what it writes, a stream record by its item and the state it shows — with the run's
 * prefix removed, so two runs of one seed decide alike however their calls interleave. What is still decided by the
 * interleaving is listed in README "Reliability: npm run chaos" (replay).
 */
export class FaultDecisions {
  private readonly seen = new Map<string, number>();
  constructor(
    readonly seed: number,
    private readonly prefix: string,
  ) {}

  /** A number in [0, 1) for this occurrence of `identity`. */
  unit(identity: string): number {
    const id = this.prefix ? identity.split(this.prefix).join('') : identity;
    const n = this.seen.get(id) ?? 0;
    this.seen.set(id, n + 1);
    return createHash('sha256').update(`${this.seed}\u0000${id}\u0000${n}`).digest().readUInt32BE(0) / 2 ** 32;
  }
}

/** The value of a document-client or wire-format attribute. */
const plain = (v: unknown): unknown =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1
    ? ((v as Record<string, unknown>).S ?? (v as Record<string, unknown>).N ?? v)
    : v;

/**
 * What a DynamoDB call is, without its timing: the command, the item (the send-rate window's wall-clock sort key
 * left out), and for an update what it writes (its target status, or the claim).
 */
export function callIdentity(command: string, input: Record<string, unknown>): string {
  if (isTransactWrite(command)) {
    const first = (input.TransactItems as { Put?: { Item?: Record<string, unknown> } }[] | undefined)?.[0]?.Put?.Item;
    return `tx:${String(plain(first?.pk))}`;
  }
  const key = input.Key as Record<string, unknown> | undefined;
  const pk = String(plain(key?.pk) ?? '');
  const sk = pk.startsWith('RATE#') ? '' : String(plain(key?.sk) ?? '');
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  const what = plain(values?.[':to']) ?? (values?.[':claim'] !== undefined ? 'claim' : '');
  const attempt = plain(values?.[':attempt']) ?? '';
  const index = plain(values?.[':key']) ?? '';
  return `${command.replace(/Command$/, '').replace(/Item$/, '')}:${pk}:${sk}:${String(what)}:${String(attempt)}:${String(index)}`;
}

/** A stream record without its timing: the item, the kind of change, and the state it shows. */
export function recordIdentity(r: DynamoDBRecord): string {
  const image = (r.dynamodb?.NewImage ?? r.dynamodb?.OldImage ?? {}) as Record<string, AttributeValue>;
  const i = unmarshall(image);
  return [r.eventName, i.pk, i.sk, i.status, i.attempt, i.deferrals, i.redrives].join(':');
}

export const isUpdate = (command: string) => command === 'UpdateItemCommand' || command === 'UpdateCommand';
/** The item key of an update, plain or marshalled. */
export const keyOf = (input: Record<string, unknown>) => {
  const key = (input.Key ?? {}) as Record<string, unknown>;
  return { pk: String(plain(key.pk)), sk: String(plain(key.sk)) };
};

export function isDynamoFaultFor(
  f: DynamoFault | CrashPoint,
  command: string,
  input: Record<string, unknown>,
): boolean {
  if (f === 'TransactionConflict' || f === 'ThrottlingError' || f === 'ProvisionedThroughputExceeded') {
    return isTransactWrite(command);
  }
  if (f === 'slowClaim') return isUpdate(command) && isClaim(input);
  return (
    f === 'ThrottlingException' ||
    f === 'InternalServerError' ||
    f === 'requestTimeout' ||
    f === 'commitThenTimeout' ||
    f === 'latency'
  );
}

export function randomFaultsFor(command: string, input: Record<string, unknown>): DynamoFault[] {
  const always: DynamoFault[] = [
    ...(isUpdate(command) && isClaim(input) ? (['slowClaim'] as const) : []),
    'ThrottlingException',
    'InternalServerError',
    'requestTimeout',
    'latency',
    'commitThenTimeout',
  ];
  return isTransactWrite(command)
    ? [...always, 'TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']
    : always;
}
