/** An instant in-memory NotificationStore with the same conditional semantics, for CPU-bound measurements. */

import { messageIdAttribute, messageIdOf } from '../../functions/domain/message-id.ts';
import type { NotificationItem } from '../../functions/domain/notification.ts';
import type { NotificationStatus } from '../../functions/domain/state-machine.ts';
import type {
  ClaimResult,
  NotificationKey,
  NotificationStore,
  Release,
  Transition,
  UnsentEnd,
} from '../../functions/stores/notification-store.ts';

export class MemoryNotificationStore implements NotificationStore {
  readonly items = new Map<string, NotificationItem>();
  private readonly id = (k: NotificationKey) => `${k.pk}|${k.sk}`;

  put(item: NotificationItem): void {
    this.items.set(this.id(item), { ...item });
  }
  async get(key: NotificationKey) {
    return this.items.get(this.id(key));
  }
  async claim(key: NotificationKey, _claimId: string, now: number, leaseMs: number): Promise<ClaimResult> {
    const item = this.items.get(this.id(key));
    if (item?.status !== 'PENDING') return { kind: 'taken' };
    if (item.retryAt !== undefined && item.retryAt > now) return { kind: 'notDue', retryAt: item.retryAt };
    const { retryAt: _, ...rest } = item;
    const next = { ...rest, status: 'SENDING' as const, attempt: item.attempt + 1, leaseUntil: now + leaseMs };
    this.items.set(this.id(key), next);
    return { kind: 'claimed', item: next };
  }
  private async move(
    item: NotificationItem,
    to: NotificationStatus,
    extra: Partial<NotificationItem>,
  ): Promise<Transition> {
    const current = this.items.get(this.id(item));
    if (current?.status !== 'SENDING' || current.attempt !== item.attempt) return 'lost';
    this.items.set(this.id(item), { ...current, ...extra, status: to });
    return 'applied';
  }
  markSent(item: NotificationItem, providerMessageId: string) {
    return this.move(item, 'SENT', { [messageIdAttribute(item.channel)]: providerMessageId });
  }
  markFailed(item: NotificationItem, reason: string) {
    return this.move(item, 'FAILED', { lastError: reason });
  }
  markUnknown(item: NotificationItem, reason: string) {
    return this.move(item, 'UNKNOWN', { lastError: reason });
  }
  async markSuppressed(key: NotificationKey, reason: string, now: number): Promise<Transition> {
    const current = this.items.get(this.id(key));
    if (current?.status !== 'PENDING') return 'lost';
    const { sweepKey: _k, sweepAt: _a, retryAt: _r, ...rest } = current;
    this.items.set(this.id(key), {
      ...rest,
      status: 'SUPPRESSED',
      suppressedReason: reason,
      updatedAt: new Date(now).toISOString(),
    });
    return 'applied';
  }
  suppress(item: NotificationItem, reason: string) {
    return this.move(item, 'SUPPRESSED', { suppressedReason: reason });
  }
  extendLease(
    item: NotificationItem,
    leaseUntil: number,
    _now: number,
    providerMessageId?: string,
    evidence?: NotificationItem['evidence'],
  ) {
    return this.move(item, 'SENDING', {
      leaseUntil,
      sweepAt: leaseUntil,
      ...(providerMessageId === undefined
        ? {}
        : { [messageIdAttribute(item.channel)]: providerMessageId, ...(evidence && { evidence }) }),
    });
  }
  async recordLateAcceptance(item: NotificationItem, providerMessageId: string): Promise<Transition> {
    const current = this.items.get(this.id(item));
    if (current?.status !== 'UNKNOWN' || current.attempt !== item.attempt || messageIdOf(current) !== undefined)
      return 'lost';
    this.items.set(this.id(item), { ...current, [messageIdAttribute(item.channel)]: providerMessageId });
    return 'applied';
  }
  release(item: NotificationItem, r: Release) {
    return this.move(item, 'PENDING', {
      lastError: r.reason,
      retryAt: r.retryAt,
      sweepAt: r.sweepAt,
      deferrals: (item.deferrals ?? 0) + (r.deferral ? 1 : 0),
    });
  }
  hold(item: NotificationItem, until: number, zone: string) {
    return this.move(item, 'HELD', {
      heldUntil: new Date(until).toISOString(),
      heldZone: zone,
      sweepAt: until,
      deferrals: (item.deferrals ?? 0) + 1,
    });
  }
  endUnsent(item: NotificationItem, end: UnsentEnd) {
    const { status, ...facts } = end;
    return this.move(item, status, facts);
  }
}
