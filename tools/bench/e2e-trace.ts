/**
 * Where a notification's time goes in the end-to-end run, from timestamps taken in this process around the real
 * code (no product code changes for it): committed (ingest's TransactWriteItems answered, a middleware on the
 * handlers' own document client) → handed to dispatch (the first stream batch that carried its INSERT) → claim
 * started (of the attempt that sent) → token asked → token granted (the pacer) → send started → the provider
 * accepted (the emulator's own ledger, matched by the message id the send returned).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { SharedTokenBucket } from '../../functions/dispatch/pacer.ts';
import { ProviderSender } from '../../functions/dispatch/senders.ts';
import { DynamoNotificationStore } from '../../functions/stores/notification-store.ts';

export interface Trace {
  deliveredAt?: number;
  committedAt?: number;
  handedAt?: number;
  claims: number;
  claimAt?: number;
  askedAt?: number;
  grantedAt?: number;
  sendAt?: number;
  messageId?: string;
}

export interface Tracing {
  readonly traces: Map<string, Trace>;
  /** When each event's record was handed to ingest, by eventId. */
  readonly delivered: Map<string, number>;
  /** A dispatch handler that notes when each notification reached it first. */
  traced(
    handler: (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>,
  ): (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;
  /** Puts back what was wrapped. */
  restore(): void;
}

/** Wraps the handlers' own client, store, pacer and sender classes (one module instance per process). */
export async function traceTheHandlers(): Promise<Tracing> {
  const traces = new Map<string, Trace>();
  const trace = (id: string) => {
    const t = traces.get(id) ?? { claims: 0 };
    traces.set(id, t);
    return t;
  };
  await timeCommits(trace);
  // The attempt a pacer call belongs to: set when the claim starts (the first step of every attempt).
  const attempt = new AsyncLocalStorage<{ id?: string }>();
  const claim = DynamoNotificationStore.prototype.claim;
  DynamoNotificationStore.prototype.claim = function (this: DynamoNotificationStore, ...a: Parameters<typeof claim>) {
    const at = Date.now();
    const current: { id?: string } = {};
    attempt.enterWith(current);
    return claim.apply(this, a).then((result) => {
      if (result.kind === 'claimed') {
        current.id = result.item.notificationId;
        const t = trace(result.item.notificationId);
        t.claims++;
        t.claimAt = at;
      }
      return result;
    });
  };
  const acquire = SharedTokenBucket.prototype.acquire;
  SharedTokenBucket.prototype.acquire = async function (this: SharedTokenBucket, ...a: Parameters<typeof acquire>) {
    const current = attempt.getStore();
    const asked = Date.now();
    const got = await acquire.apply(this, a);
    if (got && current?.id !== undefined) {
      const t = trace(current.id);
      t.askedAt = asked;
      t.grantedAt = Date.now();
    }
    return got;
  };
  const send = ProviderSender.prototype.send;
  ProviderSender.prototype.send = async function (this: ProviderSender, ...a: Parameters<typeof send>) {
    const at = Date.now();
    const messageId = await send.apply(this, a);
    const t = trace(a[0].notificationId);
    t.sendAt = at;
    t.messageId = messageId;
    return messageId;
  };
  return {
    traces,
    delivered: new Map(),
    traced: (handler) => async (event, context) => {
      const at = Date.now();
      for (const r of event.Records) {
        const id = r.dynamodb?.NewImage?.notificationId?.S;
        if (id !== undefined) trace(id).handedAt ??= at;
      }
      return handler(event, context);
    },
    restore() {
      DynamoNotificationStore.prototype.claim = claim;
      SharedTokenBucket.prototype.acquire = acquire;
      ProviderSender.prototype.send = send;
    },
  };
}

/** When each notification's transaction was answered: a middleware on the handlers' one document client. */
async function timeCommits(trace: (id: string) => Trace): Promise<void> {
  const { documentClient } = await import('../../functions/commons/dynamodb-client.ts');
  documentClient.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName === 'TransactWriteItemsCommand' || context.commandName === 'TransactWriteCommand') {
        const at = Date.now();
        const items = (args.input as { TransactItems?: { Put?: { Item?: Record<string, unknown> } }[] }).TransactItems;
        for (const put of items ?? []) {
          const item = put.Put?.Item;
          const id = attr(item?.notificationId);
          if (attr(item?.kind) === 'NOTIFICATION' && id !== undefined) trace(id).committedAt ??= at;
        }
      }
      return out;
    },
    { step: 'initialize', name: 'benchEndToEnd' },
  );
}

/** An attribute's value whether the input was still plain (document client) or already marshalled ({ S: … }). */
function attr(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { S?: unknown }).S === 'string')
    return (v as { S: string }).S;
  return undefined;
}
