/**
 * The checks the verdict reads, one per question: every expected send made once (or its second send explained), the
 * planted cases met, the logs free of personal data, the texts sent safe, the ingest figures reconciled, the faults
 * met counted. Each adds what it found wrong to `problems`.
 */
import { FIGURE_METRICS, type IngestFigures, reconciles } from '../../functions/contracts/ingest-figures.ts';
import { admitRecord } from '../../functions/domain/admission.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { cleanDisplayText, NAME_MAX_GRAPHEMES, REASON_MAX_GRAPHEMES } from '../../functions/domain/display-text.ts';
import { type DecodedTransfer, decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { notificationIdOf, parseNotificationId } from '../../functions/domain/keys.ts';
import { SENT_TO_ENDPOINT } from '../../functions/domain/push-endpoint.ts';
import { type NotificationStatus, TERMINAL_STATUSES } from '../../functions/domain/state-machine.ts';
import { clock, faultCounts } from './faults.ts';
import { PROVIDER_MODES, type RecordSpec } from './model.ts';
import { DISPLAY_TEXT_CASES, INPUT_CASES } from './poison.ts';
import type { AnalysisInput, Stored, Witnessed } from './run-record.ts';
import { isSafeDisplayText, isSafeMultilineText } from './text-oracle.ts';
import { MAX_AGE_MS, POLICIES, type World } from './world.ts';

/** An email's text alternative keeps the template's line breaks; every other channel's text is one line. */
const SAFE_TEXT: Readonly<Record<Channel, (text: string) => boolean>> = {
  EMAIL: isSafeMultilineText,
  PUSH: isSafeDisplayText,
  SMS: isSafeDisplayText,
};

/** A record's event as ingest reads it: the one decoder (event/decode.ts decodeRecordValue). */
export const decoded = (value: unknown): DecodedTransfer | undefined => {
  const d = decodeRecordValue(Buffer.from(JSON.stringify(value)).toString('base64'), 65_536);
  return isTransfer(d) ? d : undefined;
};
export const hashOf = (value: unknown): string | undefined => decoded(value)?.payloadHash;

/** The only FAILED reasons a notification may end with: its own (a provider's per-message refusal, its template) or
 * an at-least-once resend budget spent after unknown outcomes. Never a quota, an account state, or age. */
const MESSAGE_OWN_FAILURE =
  /^(MessageRejected|InvalidParameter|InvalidParameterValue|ParameterValueInvalid|EndpointDisabled|NotFound|OptedOut|FOREIGN_ENDPOINT|RENDER_ERROR|RETRIES_EXHAUSTED)\b/;

/** How the chaos world's ingest admits a record (its MAX_EVENT_BYTES default; preferences have no maximum age). */
export const admitted = (value: Record<string, unknown>) =>
  admitRecord(
    Buffer.from(JSON.stringify(value), 'utf8').toString('base64'),
    { maxEventBytes: 65_536, maxEventAgeSeconds: 0 },
    clock.now(),
  );

/** The log line dispatch writes when it holds a whole channel (an account-level refusal). */
const CHANNEL_HELD_LOG = 'provider refused the account, not the message: channel held, notification deferred';

/**
 * Every notification that should have been sent, against the witness: ended in a terminal status, FAILED only for a
 * reason of its own, sent once — a second send only after an unknown outcome on an at-least-once channel, never after
 * an acceptance on an at-most-once one —, and nothing sent on a channel its customer opted out of before it.
 */
export function judgeSends(
  a: AnalysisInput,
  { notifications }: Stored,
  expected: Map<string, Channel[]>,
  optedOut: Map<string, Set<Channel>>,
  { sendCount, sendAttempts, addressOf }: Witnessed,
  resentAfterUnknown: (id: string) => boolean,
  problems: string[],
) {
  let lost = 0;
  let expectedSends = 0;
  let sentOnce = 0;
  let unknown = 0;
  let failed = 0;
  let failedByQuotaOrAccount = 0;
  let resentAfterAcceptAtMostOnce = 0;
  const duplicates = { bug: 0, afterUnknownOutcome: 0 };
  const preferences = { cases: 0, mismatches: 0 };
  for (const [eventId, channels] of expected) {
    const optOut = optedOut.get(eventId);
    if (optOut !== undefined && channels.length > 0) preferences.cases++;
    for (const channel of channels) {
      expectedSends++;
      const id = `${eventId}#${channel}`;
      const n = notifications.get(id);
      const status = n?.status as NotificationStatus | undefined;
      const sent = sendCount.get(id) ?? 0;
      // What the customer sees: nothing on a channel they opted out of before the transfer (it ends SUPPRESSED — or
      // UNKNOWN/FAILED unsent, when its holder died before the check: the lease's own window), and no channel they did
      // not opt out of withheld for preferences.
      const suppressed = status === 'SUPPRESSED' && n?.suppressedReason === 'OPTED_OUT';
      if (optOut?.has(channel) === true ? sent > 0 || status === 'SENT' : suppressed) {
        preferences.mismatches++;
        problems.push(
          `${id}: ${optOut?.has(channel) === true ? 'opted out before it, yet' : 'not opted out, yet'} ${status} with ${sent} sends`,
        );
      }
      if (status === undefined || !TERMINAL_STATUSES.includes(status)) {
        lost++;
        problems.push(`${id} ended ${status ?? 'missing'}`);
        continue;
      }
      if (status === 'UNKNOWN') unknown++;
      if (status === 'FAILED') failed++;
      // EXPIRED is legitimate only for a notification really past the maximum age on the suite's clock.
      const expiredInTime = n?.lastError === 'EXPIRED' && clock.now() - Date.parse(String(n?.createdAt)) > MAX_AGE_MS;
      if (status === 'FAILED' && !MESSAGE_OWN_FAILURE.test(String(n?.lastError ?? '')) && !expiredInTime) {
        failedByQuotaOrAccount++;
        problems.push(`${id} ended FAILED for a reason not its own: ${String(n?.lastError)}`);
      }
      const count = sendCount.get(id) ?? 0;
      const mode = a.modeByAddress.get(addressOf.get(id) ?? '');
      if (
        count > 1 &&
        POLICIES[channel] === 'AT_MOST_ONCE' &&
        (mode === 'acceptThen500' || mode === 'acceptThenReset')
      ) {
        resentAfterAcceptAtMostOnce++;
        problems.push(`${id} was sent again after a ${mode} on an at-most-once channel`);
      }
      if (count === 1) sentOnce++;
      if (count > 1) {
        if (POLICIES[channel] === 'AT_LEAST_ONCE' && resentAfterUnknown(id)) duplicates.afterUnknownOutcome++;
        else {
          duplicates.bug++;
          problems.push(`${id} was sent ${count} times, by attempts ${JSON.stringify(sendAttempts.get(id))}`);
        }
      }
      if (status === 'SENT' && count === 0) {
        lost++;
        problems.push(`${id} is SENT but no provider accepted it`);
      }
    }
  }
  return {
    expectedSends,
    sentOnce,
    unknown,
    failed,
    failedByQuotaOrAccount,
    resentAfterAcceptAtMostOnce,
    duplicates,
    preferences,
    lost,
  };
}

/** Inbox items and notifications agree: each channel of an inbox item has its notification, each notification its inbox. */
export function inboxWithoutNotifications({ inbox, notifications }: Stored): number {
  let missing = 0;
  for (const [eventId, item] of inbox) {
    for (const c of item.channels as Channel[]) {
      if (!notifications.has(`${eventId}#${c}`)) missing++;
    }
  }
  for (const n of notifications.values()) if (!inbox.has(String(n.eventId))) missing++;
  return missing;
}

/** The lowest offset is the original: the inbox's record is the first of its eventId on its partition. */
export function laterOffsetsWon(a: AnalysisInput, { inbox }: Stored, problems: string[]): number {
  let laterOffsetWon = 0;
  const eventIdOf = (r: RecordSpec) =>
    r.kind === 'event' ? r.spec.eventId : r.kind === 'preferences' ? r.eventId : undefined;
  for (const [eventId, item] of inbox) {
    const { partition, offset } = item.source as { partition: number; offset: number };
    const first = a.parts[partition]?.findIndex((r) => eventIdOf(r) === eventId);
    if (first !== offset) {
      laterOffsetWon++;
      problems.push(`${eventId}: written from offset ${partition}/${offset}, its first record is at ${first}`);
    }
  }
  return laterOffsetWon;
}

/**
 * The cases the generator planted: producers' inputs accepted (never quarantined), a bad contact point refusing its
 * channel alone; display text stored and sent cleaned; too-old events recorded as TOO_OLD, nothing sent.
 */
export function judgeSpecs(
  a: AnalysisInput,
  { inbox, notifications }: Stored,
  expected: Map<string, Channel[]>,
  { sendCount }: Witnessed,
  problems: string[],
) {
  const displayText = { cases: 0, mismatches: 0 };
  const tooOld = { events: 0, mismatches: 0 };
  const inputCases = { cases: 0, mismatches: 0 };
  for (const spec of a.specs) {
    const stored = inbox.get(spec.eventId);
    if (spec.input !== undefined) {
      // Producers' inputs: accepted (never quarantined), and a bad contact point refuses its channel alone.
      inputCases.cases++;
      const c = INPUT_CASES[spec.input]!;
      const refused = c.refuses === undefined ? undefined : notifications.get(`${spec.eventId}#${c.refuses.channel}`);
      const sent = c.refuses === undefined ? 0 : (sendCount.get(`${spec.eventId}#${c.refuses.channel}`) ?? 0);
      const problem =
        stored === undefined || stored.payloadHash !== hashOf(spec.value)
          ? 'not accepted'
          : c.refuses !== undefined &&
              (refused?.status !== 'REFUSED' || refused.refusedReason !== c.refuses.reason || sent > 0)
            ? `${c.refuses.channel} ${String(refused?.status)} ${String(refused?.refusedReason)}, sent ${sent}`
            : undefined;
      if (problem !== undefined) {
        inputCases.mismatches++;
        problems.push(`input case "${c.kind}" of ${spec.eventId}: ${problem}`);
      }
    }
    if (stored === undefined || stored.payloadHash !== hashOf(spec.value)) continue; // not this payload's event
    if (spec.display !== undefined) {
      displayText.cases++;
      const c = DISPLAY_TEXT_CASES[spec.display]!;
      const max = c.field === 'reason' ? REASON_MAX_GRAPHEMES : NAME_MAX_GRAPHEMES;
      const want = cleanDisplayText(c.value, max).text || undefined;
      for (const channel of expected.get(spec.eventId) ?? []) {
        const got = (notifications.get(`${spec.eventId}#${channel}`)?.data as Record<string, unknown> | undefined)?.[
          c.field
        ];
        if (got !== want) {
          displayText.mismatches++;
          problems.push(`display text "${c.kind}" of ${spec.eventId}#${channel}: stored ${JSON.stringify(got)}`);
        }
      }
    }
    if (spec.tooOld) {
      tooOld.events++;
      const sent = [...sendCount.keys()].filter((k) => k.startsWith(`${spec.eventId}#`)).length;
      if (stored.skipped !== 'TOO_OLD' || sent > 0) {
        tooOld.mismatches++;
        problems.push(`too-old event ${spec.eventId}: skipped=${String(stored.skipped)}, ${sent} channels sent`);
      }
    }
  }

  return { displayText, tooOld, inputCases };
}

/** No email address or phone number in any log line; a whole channel never held for what one endpoint or app did. */
export function judgeLogs(w: World, a: AnalysisInput, { addressOf }: Witnessed, problems: string[]) {
  const logs = w.logLines.slice(a.logStart);
  // A whole channel held for what one endpoint or one platform application did: never.
  let heldTooWide = 0;
  for (const line of logs) {
    if (!line.includes(CHANNEL_HELD_LOG)) continue;
    const entry = JSON.parse(line) as { notificationId?: string; code?: string };
    const ref = parseNotificationId(String(entry.notificationId ?? ''));
    if (ref === undefined || !ref.eventId.startsWith(a.prefix)) continue;
    const { channel } = ref;
    const mode = a.modeByAddress.get(addressOf.get(notificationIdOf(ref.eventId, channel)) ?? '');
    const ownFault = mode === 'foreignEndpoint' || (SENT_TO_ENDPOINT[channel] && mode === 'reject');
    if (ownFault || entry.code === 'PlatformApplicationDisabled') {
      heldTooWide++;
      problems.push(`${entry.notificationId} held ${channel} for ${entry.code} (mode ${mode})`);
    }
  }
  const pii = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z.]{2,}|\+\d{8,15}/;
  const leaks = logs.filter((l) => pii.test(l));
  problems.push(...leaks.slice(0, 3).map((l) => `PII in a log line: ${l.slice(0, 160)}`));
  return { heldTooWide, leaks: leaks.length };
}

/** No CR/LF in a header, no unescaped markup, nothing unsafe in any text sent. */
export function judgeTexts(sends: Witnessed['sends'], problems: string[]) {
  const headerInjections = sends.filter((s) => /[\r\n]/.test(s.subject ?? '')).length;
  const unescapedMarkup = sends.filter((s) => (s.html ?? '').includes('<script')).length;
  // An email's text alternative has the template's line breaks; every other text is one line. Judged by the oracle
  // (tools/chaos/text-oracle.ts), never by the cleaner's own expressions.
  const unsafe = sends.filter(
    (s) => ![s.subject ?? '', s.html ?? ''].every(isSafeDisplayText) || !SAFE_TEXT[s.channel](s.text),
  );
  problems.push(...unsafe.slice(0, 3).map((s) => `unsafe characters sent to ${s.channel}: ${JSON.stringify(s.text)}`));

  return { headerInjections, unescapedMarkup, unsafeText: unsafe.length };
}

export function judgeFigures(w: World, a: AnalysisInput, problems: string[]) {
  // The ingest function's own figures over this run: delivered = accepted + duplicates + conflicts + quarantined +
  // requarantined + failed, and delivered is what the Kafka simulator handed it.
  const figures = Object.fromEntries(
    Object.entries(FIGURE_METRICS).map(([k, metric]) => [
      k,
      (w.output.metrics[metric] ?? 0) - (a.metricsBefore[metric] ?? 0),
    ]),
  ) as unknown as IngestFigures;
  const reconciled = reconciles(figures) && figures.received === a.stats.deliveries;
  if (!reconciled)
    problems.push(`figures do not reconcile: ${JSON.stringify(figures)}, deliveries ${a.stats.deliveries}`);

  return { figures, reconciled };
}

/** The faults this run met, by kind: what the verdict reports as exercised. */
export function faultsOf(w: World, a: AnalysisInput, expected: Map<string, Channel[]>): Record<string, number> {
  const faults: Record<string, number> = {};
  for (const [k, v] of Object.entries(faultCounts))
    if (v - (a.faultsBefore[k] ?? 0) > 0) faults[k] = v - (a.faultsBefore[k] ?? 0);
  const poisonRecords = a.parts.flat().filter((r) => r.kind === 'poison').length;
  if (poisonRecords) faults.poisonRecords = poisonRecords;
  if (a.stream.dropped) faults.streamRecordsDropped = a.stream.dropped;
  if (a.stream.trimmed) faults.streamRecordsTrimmed = a.stream.trimmed;
  if (a.stream.onFailure.length) faults.streamRecordsGivenUp = a.stream.onFailure.length;
  if (a.stream.unfilteredDeliveries) faults.unfilteredStreamBatches = a.stream.unfilteredDeliveries;
  if (a.stream.bisections) faults.streamBatchBisections = a.stream.bisections;
  if (a.stats.failedInvocations) faults.failedIngestInvocations = a.stats.failedInvocations;
  const quotaThrottled = w.quotaThrottled() - a.providerBefore.quotaThrottled;
  if (quotaThrottled) faults.quotaThrottled = quotaThrottled;
  const accountRefusals = w.accountRefusals - a.providerBefore.accountRefusals;
  if (accountRefusals) faults.accountPausedRefusals = accountRefusals;
  const applicationRefusals = w.applicationRefusals - a.applicationRefusalsBefore;
  if (applicationRefusals) faults.applicationDisabledRefusals = applicationRefusals;
  const preferenceRecords = a.parts.flat().filter((r) => r.kind === 'preferences').length;
  if (preferenceRecords) faults.preferenceRecords = preferenceRecords;
  for (const m of PROVIDER_MODES.slice(1)) {
    const n = a.specs.reduce(
      (acc, s) => acc + (expected.get(s.eventId) ?? []).filter((c) => s.modes[c] === m).length,
      0,
    );
    if (n) faults[`provider:${m}`] = n;
  }

  return faults;
}
