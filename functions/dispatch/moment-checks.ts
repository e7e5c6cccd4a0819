/**
 * The right moment, between the claim and the provider call (docs/dispatch.md "The right moment"): whether a claimed
 * notification is still worth sending, now, to this customer.
 *
 * - Before rendering and the send token (`momentFirst`, pure): past its validity → EXPIRED; outside its type's send
 *   window in the customer's time zone → HELD until the window opens. No token is taken for either.
 * - Last, after the audience check and right before the deadline (`momentLast`): a newer notice of its series (read
 *   consistently) → SUPERSEDED; the customer's flood guard window full → THROTTLED (a slot is counted, and given back
 *   if the send then does not start); the validity and the window once more, since the pacing wait may have crossed
 *   them. What a push carries of the moment — its remaining validity as SNS's TTL, its series' collapse id — is
 *   computed here, right before the call.
 * Every path to a provider call passes here: the first send, a retry, a sweeper wake or release, an operator's resend.
 */
import type { Brand } from '../domain/brand.ts';
import { floodGuardOf, supersedeKeyOf } from '../domain/catalogue.ts';
import { unknownChannel } from '../domain/channels.ts';
import { floodKey, seriesCollapseId, seriesPk } from '../domain/keys.ts';
import { loadLocalTime } from '../domain/local-time.ts';
import type { NotificationItem } from '../domain/notification.ts';
import {
  floodWindow,
  momentVerdict,
  type NoticeTiming,
  needsLocalTime,
  occurredMsOf,
  type PushMoment,
  remainingSeconds,
  validUntilOf,
} from '../domain/send-moment.ts';
import type { Message } from '../domain/templates.ts';
import type { FloodSlotKey, MomentStore } from '../stores/moment-store.ts';
import type { Transition, UnsentEnd } from '../stores/notification-port.ts';
import type { NotificationStore } from '../stores/notification-store.ts';

/** Why the moment stops a claimed notification: held until its window opens, or ended unsent. */
export type MomentStop =
  | { readonly kind: 'hold'; readonly until: number; readonly zone: string }
  | { readonly kind: 'end'; readonly end: UnsentEnd };

const iso = (ms: number) => new Date(ms).toISOString();
const fallbackZone = (item: NotificationItem, brand: Brand) =>
  brand.defaultTimeZone[item.locale] ?? brand.defaultTimeZone.en ?? 'UTC';

/**
 * What `momentFirst` reads that is loaded on first need: local time, for a type with a send window (not in a replay,
 * which judges no window). A failure to load is the deploy's, thrown for the stream to retry — never the notice's.
 */
export async function loadMomentRules(item: NotificationItem, deps: Pick<MomentDeps, 'timing'>): Promise<void> {
  if (deps.timing !== 'REPLAY' && needsLocalTime(item)) await loadLocalTime();
}

/** The pure checks: validity, then the send window (neither in a replay). Undefined: the moment allows the send. */
export function momentFirst(
  item: NotificationItem,
  deps: Pick<MomentDeps, 'brand' | 'timing'>,
  now: number,
): MomentStop | undefined {
  if (deps.timing === 'REPLAY') return undefined;
  const verdict = momentVerdict(item, fallbackZone(item, deps.brand), now);
  switch (verdict.kind) {
    case 'send':
      return undefined;
    case 'expired':
      return { kind: 'end', end: { status: 'EXPIRED', validUntil: iso(verdict.validUntil) } };
    case 'held':
      return { kind: 'hold', until: verdict.until, zone: verdict.zone };
  }
}

export interface MomentDeps {
  readonly moment?: MomentStore | undefined;
  readonly brand: Brand;
  readonly now: () => number;
  /** ENFORCED unless a local replay of dated events says otherwise (send-moment.ts NoticeTiming). */
  readonly timing?: NoticeTiming | undefined;
}

/** The send may start: the message with what a push carries of the moment, and the flood slot it took (if any). */
export interface MomentReady {
  readonly message: Message;
  readonly giveBack: () => Promise<void>;
}

/**
 * The last checks, right before the deadline and the call: the series, the flood guard, then the pure checks again.
 * Throws when a read or the count fails (DynamoDB): the caller defers the claim, as for any failed read.
 */
export async function momentLast(
  item: NotificationItem,
  message: Message,
  deps: MomentDeps,
): Promise<{ stop: MomentStop } | MomentReady> {
  const series = seriesOf(item);
  const occurredAtMs = occurredMsOf(item);
  if (deps.moment !== undefined && series !== undefined && occurredAtMs !== undefined) {
    const newer = await deps.moment.newerNotice(series, occurredAtMs);
    if (newer !== undefined) {
      const end: UnsentEnd = {
        status: 'SUPERSEDED',
        supersededBy: newer.eventId,
        supersededByOccurredAt: newer.occurredAt,
      };
      return { stop: { kind: 'end', end } };
    }
  }
  let slot: FloodSlotKey | undefined;
  const guard = floodGuardOf(item.template);
  if (deps.moment !== undefined && guard !== undefined) {
    const window = floodWindow(guard, deps.now());
    const key = {
      ...floodKey(item.userId, item.template, item.channel, window.start),
      notificationId: item.notificationId,
    };
    if (!(await deps.moment.takeFloodSlot(key, guard.limit, Math.ceil(window.end / 1000) + 86_400))) {
      const throttledWindow = `${guard.limit} per ${guard.windowSeconds} s, ${iso(window.start)}–${iso(window.end)}`;
      return { stop: { kind: 'end', end: { status: 'THROTTLED', throttledWindow } } };
    }
    slot = key;
  }
  const store = deps.moment;
  const giveBack = async () => {
    if (slot !== undefined) await store?.giveBackFloodSlot(slot);
  };
  const now = deps.now();
  const again = momentFirst(item, deps, now);
  if (again !== undefined) {
    await giveBack();
    return { stop: again };
  }
  return { message: withPushMoment(message, item, series, now, deps.timing), giveBack };
}

/** The series a notification belongs to (its type supersedes), or undefined. */
function seriesOf(item: NotificationItem): string | undefined {
  const key = supersedeKeyOf(item.template);
  return key === undefined
    ? undefined
    : seriesPk(
        item.template,
        item.userId,
        key.map((name) => item.data[name] ?? ''),
      );
}

/** A push carries its remaining validity (SNS's TTL) and its series' collapse id; other channels take neither. */
function withPushMoment(
  message: Message,
  item: NotificationItem,
  series: string | undefined,
  now: number,
  timing: NoticeTiming | undefined,
): Message {
  switch (message.channel) {
    case 'PUSH': {
      const validUntil = timing === 'REPLAY' ? undefined : validUntilOf(item);
      const moment: PushMoment = {
        ...(validUntil === undefined ? {} : { ttlSeconds: remainingSeconds(validUntil, now) }),
        ...(series === undefined ? {} : { collapseId: seriesCollapseId(series) }),
      };
      return { ...message, ...moment };
    }
    // SNS takes no TTL for an SMS, SES none for an email (docs/dispatch.md "The right moment").
    case 'SMS':
    case 'EMAIL':
      return message;
    default:
      return unknownChannel(message);
  }
}

/** What dispatch answers when the moment stopped a send: HELD until its window opens, or ended unsent. */
export type MomentResult =
  | { kind: 'held'; item: NotificationItem; until: number; zone: string }
  | { kind: 'unsent'; item: NotificationItem; end: UnsentEnd };

/** Records a stop on the claimed item, fenced on the claim (`record` is the holder's kept-trying write). */
export async function recordStop(
  item: NotificationItem,
  stop: MomentStop,
  store: NotificationStore,
  record: (write: (now: number) => Promise<Transition>) => Promise<Transition>,
): Promise<{ transition: Transition; result: MomentResult }> {
  const transition =
    stop.kind === 'hold'
      ? await record((now) => store.hold(item, stop.until, stop.zone, now))
      : await record((now) => store.endUnsent(item, stop.end, now));
  const result: MomentResult =
    stop.kind === 'hold'
      ? { kind: 'held', item, until: stop.until, zone: stop.zone }
      : { kind: 'unsent', item, end: stop.end };
  return { transition, result };
}
