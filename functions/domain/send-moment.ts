/**
 * The right moment to send (docs/dispatch.md "The right moment"): whether a notice is still worth sending (its type's
 * validity since occurredAt), whether now is a time the customer takes it (the type's send window in their time zone),
 * the flood guard's window, and what a push carries of it (SNS's TTL for the endpoint's platform, a collapse id).
 * Pure: the clock is passed in; local time is read with Temporal (temporal-polyfill until Node ships it), whose
 * time-zone rules are the runtime's own IANA database — loaded only for a type with a send window (local-time.ts:
 * `needsLocalTime` says which; the caller loads it before the verdict).
 */
import type { FloodGuard, SendWindow } from './catalogue.ts';
import { sendWindowOf, validityMsOf } from './catalogue.ts';
import { localTime } from './local-time.ts';
import { readInstant } from './moment.ts';
import { parsePushEndpoint } from './push-endpoint.ts';

/**
 * Whether the clock judges a notice's validity and window: always in AWS (ENFORCED); not in a local replay of a file
 * of dated events (REPLAY), whose dates are long past and whose wall clock is any hour.
 */
export const NOTICE_TIMINGS = ['ENFORCED', 'REPLAY'] as const;
export type NoticeTiming = (typeof NOTICE_TIMINGS)[number];

/** What the moment checks read of a notification. */
export interface MomentFacts {
  readonly template: string;
  /** The event's occurredAt; absent on items written before it was kept (no validity can be judged: sent). */
  readonly occurredAt?: string | undefined;
  /** The customer's IANA time zone; absent: the brand's default for the language. */
  readonly timeZone?: string | undefined;
  /** When notifier received it: createdAt, or firstCreatedAt once a release, repair or resend moved createdAt. */
  readonly createdAt?: string | undefined;
  readonly firstCreatedAt?: string | undefined;
}

/**
 * When the notice occurred, as the moment reads it (epoch ms): its occurredAt, never later than its arrival — an event
 * cannot have occurred after notifier received it. Ingest accepts an occurredAt up to a day ahead (a producer's clock
 * running ahead, local time written as UTC); read as given, such a notice would gain that much validity (a five-minute
 * code sent hours late) and be the newest of its series until that hour, superseding every real notice meanwhile.
 */
export function occurredMsOf(n: Pick<MomentFacts, 'occurredAt' | 'createdAt' | 'firstCreatedAt'>): number | undefined {
  const occurred = n.occurredAt === undefined ? undefined : readInstant(n.occurredAt)?.epochMs;
  const arrivedAt = n.firstCreatedAt ?? n.createdAt;
  const arrived = arrivedAt === undefined ? undefined : readInstant(arrivedAt)?.epochMs;
  return occurred === undefined || arrived === undefined ? occurred : Math.min(occurred, arrived);
}

/** Why a claimed notification is not sent now, by the moment alone. */
export type MomentVerdict =
  | { readonly kind: 'send' }
  /** Its validity ended: EXPIRED, never sent. */
  | { readonly kind: 'expired'; readonly validUntil: number }
  /** Outside its type's send window in the customer's time zone: HELD until the window opens. */
  | { readonly kind: 'held'; readonly until: number; readonly zone: string };

/** When the notice stops being worth sending (epoch ms, from occurredMsOf), or undefined when its type sets none. */
export function validUntilOf(n: MomentFacts): number | undefined {
  const validity = validityMsOf(n.template);
  const occurred = occurredMsOf(n);
  return validity === undefined || occurred === undefined ? undefined : occurred + validity;
}

/** Whether the verdict on this notice reads local time (its type has a send window): load it first (local-time.ts). */
export const needsLocalTime = (n: Pick<MomentFacts, 'template'>) => sendWindowOf(n.template) !== undefined;

/**
 * The verdict at `now`: past its validity → expired (whatever the window: a notice never worth sending is not held);
 * outside its window → held until the window opens; otherwise send. `fallbackZone` is the brand's zone for the
 * notification's language, used when the customer named none or the runtime does not know theirs.
 */
export function momentVerdict(n: MomentFacts, fallbackZone: string, now: number): MomentVerdict {
  const validUntil = validUntilOf(n);
  if (validUntil !== undefined && now >= validUntil) return { kind: 'expired', validUntil };
  const window = sendWindowOf(n.template);
  if (window === undefined) return { kind: 'send' };
  const zone = knownZone(n.timeZone) ?? knownZone(fallbackZone) ?? 'UTC';
  const until = windowOpening(window, zone, now);
  return until === undefined ? { kind: 'send' } : { kind: 'held', until, zone };
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * When the window next opens after `now` (epoch ms), or undefined while it is open. The window is local wall-clock
 * time, `from` (included) to `until` (excluded); `from` after `until` spans midnight (22:00–06:00). The opening is
 * `from` on the local day that has it next, read with Temporal's "compatible" disambiguation: across a DST change the
 * wall clock decides (08:00 is 08:00 local on either side); a `from` inside a spring-forward gap opens at the same
 * wall time shifted by the gap, and one inside a fall-back overlap at its first occurrence.
 */
export function windowOpening(window: SendWindow, zone: string, now: number): number | undefined {
  const local = localTime().Instant.fromEpochMilliseconds(now).toZonedDateTimeISO(zone);
  const minute = local.hour * 60 + local.minute;
  const [from, until] = [minutesOf(window.from), minutesOf(window.until)];
  const open = from < until ? minute >= from && minute < until : minute >= from || minute < until;
  if (open) return undefined;
  const at = { hour: Math.floor(from / 60), minute: from % 60 };
  const today = local.withPlainTime(at).epochMilliseconds;
  return today > now ? today : local.add({ days: 1 }).withPlainTime(at).epochMilliseconds;
}

/** The zone when the runtime's time-zone database knows it. */
function knownZone(zone: string | undefined): string | undefined {
  if (zone === undefined) return undefined;
  const temporal = localTime();
  try {
    temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(zone);
    return zone;
  } catch {
    return undefined;
  }
}

/** The flood guard's fixed window holding `now`: [start, end), aligned to multiples of its length since the epoch. */
export function floodWindow(guard: FloodGuard, now: number): { readonly start: number; readonly end: number } {
  const length = guard.windowSeconds * 1000;
  const start = Math.floor(now / length) * length;
  return { start, end: start + length };
}

/**
 * SNS's TTL message attribute per platform of the endpoint ARN (https://docs.aws.amazon.com/sns/latest/dg/sns-ttl.html:
 * ADM, APNS, APNS_SANDBOX, BAIDU, FCM — the `GCM` platform of an endpoint ARN — and WNS; MPNS takes none). SNS counts
 * it from the publish and does not attempt a push whose TTL is shorter than its dwell time.
 */
const TTL_ATTRIBUTE: Readonly<Record<string, string>> = {
  ADM: 'AWS.SNS.MOBILE.ADM.TTL',
  APNS: 'AWS.SNS.MOBILE.APNS.TTL',
  APNS_SANDBOX: 'AWS.SNS.MOBILE.APNS_SANDBOX.TTL',
  BAIDU: 'AWS.SNS.MOBILE.BAIDU.TTL',
  GCM: 'AWS.SNS.MOBILE.FCM.TTL',
  WNS: 'AWS.SNS.MOBILE.WNS.TTL',
};
/**
 * The longest TTL a platform takes: FCM keeps a message at most 28 days and takes a TTL of 0–2,419,200 s
 * (https://firebase.google.com/docs/cloud-messaging/customize-messages/setting-message-lifespan). A longer validity is
 * sent as the platform's longest, never as a TTL it refuses.
 */
const MAX_TTL_SECONDS: Readonly<Record<string, number>> = { GCM: 2_419_200 };
/** APNs' collapse id travels as this SNS attribute (the apns-collapse-id header); FCM's collapse_key in the payload. */
export const APNS_COLLAPSE_ATTRIBUTE = 'AWS.SNS.MOBILE.APNS.COLLAPSE_ID';
const APPLE_PLATFORMS = ['APNS', 'APNS_SANDBOX'];

/** What a push carries of the moment: its remaining validity (whole seconds, at least 1) and its series' collapse id. */
export interface PushMoment {
  readonly ttlSeconds?: number;
  readonly collapseId?: string;
}

/** The remaining validity at `now` as whole seconds (at least 1: SNS reads 0 as "now or never" on APNs and FCM). */
export const remainingSeconds = (validUntil: number, now: number) => Math.max(1, Math.floor((validUntil - now) / 1000));

/** The SNS message attributes a push to this endpoint carries for its moment; the platform decides their names. */
export function pushAttributes(targetArn: string, moment: PushMoment): Record<string, string> {
  const platform = parsePushEndpoint(targetArn)?.platform ?? '';
  const attributes: Record<string, string> = {};
  const ttl = TTL_ATTRIBUTE[platform];
  if (moment.ttlSeconds !== undefined && ttl !== undefined)
    attributes[ttl] = String(Math.min(moment.ttlSeconds, MAX_TTL_SECONDS[platform] ?? moment.ttlSeconds));
  if (moment.collapseId !== undefined && APPLE_PLATFORMS.includes(platform))
    attributes[APNS_COLLAPSE_ATTRIBUTE] = moment.collapseId;
  return attributes;
}
