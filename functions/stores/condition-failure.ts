/**
 * The one place that recognises DynamoDB's "your condition did not hold" answers, whoever sent the request. A single
 * write answers ConditionalCheckFailedException; a transaction answers TransactionCanceledException with one reason per
 * item, ConditionalCheckFailed on those whose condition failed. The SDK's error classes are matched by name as well as
 * by class: a second copy of @aws-sdk/client-dynamodb (or a test fake) throws errors of another class with the same name.
 */
import {
  type CancellationReason,
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** A single write's condition did not hold (the error carries the old item when the request asked for ALL_OLD). */
export const isConditionFailure = (error: unknown): error is ConditionalCheckFailedException =>
  error instanceof ConditionalCheckFailedException ||
  (error as Error | undefined)?.name === 'ConditionalCheckFailedException';

/**
 * The item a refused single write answered with (ReturnValuesOnConditionCheckFailure ALL_OLD), as plain values: the SDK
 * hands it back in wire format (lib-dynamodb does not unmarshall errors). Undefined when there was none (no item
 * stored, the request did not ask, or an answer that is not an item in wire format).
 */
export function refusedItem(error: ConditionalCheckFailedException): Record<string, unknown> | undefined {
  const item = (error as { Item?: Record<string, unknown> }).Item;
  if (item === undefined) return undefined;
  try {
    return unmarshall(item as Parameters<typeof unmarshall>[0]);
  } catch {
    // Not an item in wire format: nothing to decide on. The caller reads the item instead (its safe fallback).
    return undefined;
  }
}

/** A transaction was cancelled, for whatever reasons (see cancellationCodes). */
export const isTransactionCancelled = (error: unknown): error is TransactionCanceledException =>
  error instanceof TransactionCanceledException ||
  (error as Error | undefined)?.name === 'TransactionCanceledException';

/** The cancellation reason of each item of the transaction, in request order ('None' where the item was fine). */
export const cancellationCodes = (error: TransactionCanceledException): string[] =>
  (error.CancellationReasons ?? []).map((r: CancellationReason) => r.Code ?? 'None');

/** The reason code DynamoDB gives an item of a cancelled transaction whose condition failed. */
export const CONDITION_FAILED_REASON = 'ConditionalCheckFailed';

/** A cancelled transaction in which at least one item's condition failed. */
export const isCancelledByCondition = (error: unknown): error is TransactionCanceledException =>
  isTransactionCancelled(error) && cancellationCodes(error).includes(CONDITION_FAILED_REASON);
