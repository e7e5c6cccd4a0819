/**
 * Judging a run after convergence: every record's outcome against what was expected of it, the providers' ledgers
 * as the independent witness of what was sent, the stream as the record of every transition, the logs for personal
 * data, and the ingest figures reconciled. Returns the report the one verdict (verdict.ts) reads.
 */

import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { admitRecord } from '../../functions/domain/admission.ts';
import type { Channel } from '../../functions/domain/channels.ts';
import { cleanDisplayText, NAME_MAX_GRAPHEMES, REASON_MAX_GRAPHEMES } from '../../functions/domain/display-text.ts';
import { type DecodedTransfer, decodeRecordValue, isTransfer } from '../../functions/domain/event/decode.ts';
import { notificationIdOf, parseNotificationId, quarantinePk } from '../../functions/domain/keys.ts';
import { SENT_TO_ENDPOINT } from '../../functions/domain/push-endpoint.ts';
import { route } from '../../functions/domain/routing.ts';
import { type NotificationStatus, TERMINAL_STATUSES } from '../../functions/domain/state-machine.ts';
import { FIGURE_METRICS, type IngestFigures, reconciles } from '../../functions/ingest/figures.ts';
import { clock, faultCounts } from './faults.ts';
import {
  type ChaosOptions,
  type ChaosReport,
  type EventSpec,
  PROVIDER_MODES,
  type ProviderMode,
  type RecordSpec,
} from './model.ts';
import { DISPLAY_TEXT_CASES, INPUT_CASES, POISON_KINDS } from './poison.ts';
import { isSafeDisplayText, isSafeMultilineText } from './text-oracle.ts';
import { attributeSends, MAX_AGE_MS, POLICIES, runItems, transitionViolations, type World } from './world.ts';

/** An email's text alternative keeps the template's line breaks; every other channel's text is one line. */
const SAFE_TEXT: Readonly<Record<Channel, (text: string) => boolean>> = {
  EMAIL: isSafeMultilineText,
  PUSH: isSafeDisplayText,
  SMS: isSafeDisplayText,
};

/** A record's event as ingest reads it: the one decoder (event/decode.ts decodeRecordValue). */
const decoded = (value: unknown): DecodedTransfer | undefined => {
  const d = decodeRecordValue(Buffer.from(JSON.stringify(value)).toString('base64'), 65_536);
  return isTransfer(d) ? d : undefined;
};
const hashOf = (value: unknown): string | undefined => decoded(value)?.payloadHash;

/** The only FAILED reasons a notification may end with: its own (a provider's per-message refusal, its template) or
 * an at-least-once resend budget spent after unknown outcomes. Never a quota, an account state, or age. */
const MESSAGE_OWN_FAILURE =
  /^(MessageRejected|InvalidParameter|InvalidParameterValue|ParameterValueInvalid|EndpointDisabled|NotFound|OptedOut|FOREIGN_ENDPOINT|RENDER_ERROR|RETRIES_EXHAUSTED)\b/;

/** How the chaos world's ingest admits a record (its MAX_EVENT_BYTES default; preferences have no maximum age). */
const admitted = (value: Record<string, unknown>) =>
  admitRecord(
    Buffer.from(JSON.stringify(value), 'utf8').toString('base64'),
    { maxEventBytes: 65_536, maxEventAgeSeconds: 0 },
    clock.now(),
  );

/** The log line dispatch writes when it holds a whole channel (an account-level refusal). */
const CHANNEL_HELD_LOG = 'provider refused the account, not the message: channel held, notification deferred';

/** Records handed to ingest (every try), of which redeliveries; invocations that failed. */
export interface DeliveryStats {
  deliveries: number;
  redeliveries: number;
  failedInvocations: number;
}

/** What the stream side did: every record it produced, and what the mapping dropped, bisected, gave up. */
export interface StreamFigures {
  seen: DynamoDBRecord[];
  dropped: number;
  trimmed: number;
  onFailure: DynamoDBRecord[];
  unfilteredDeliveries: number;
  bisections: number;
}

export interface AnalysisInput {
  prefix: string;
  topic: string;
  parts: RecordSpec[][];
  specs: EventSpec[];
  stats: DeliveryStats;
  stream: StreamFigures;
  logStart: number;
  ledgerStart: { ses: number; sns: number };
  faultsBefore: Record<string, number>;
  providerBefore: { quotaThrottled: number; accountRefusals: number };
  applicationRefusalsBefore: number;
  modeByAddress: Map<string, ProviderMode>;
  metricsBefore: Record<string, number>;
  options: ChaosOptions;
  schedule: string[];
}

export async function analyse(w: World, a: AnalysisInput): Promise<ChaosReport> {
  const problems: string[] = [];
  const items = await runItems(w, a.prefix);
  const inbox = new Map(items.filter((i) => i.sk === 'INBOX').map((i) => [String(i.eventId), i]));
  const notifications = new Map(
    items.filter((i) => i.kind === 'NOTIFICATION').map((i) => [String(i.notificationId), i]),
  );
  const quarantine = new Map(items.filter((i) => i.kind === 'QUARANTINE').map((i) => [String(i.pk), i]));

  // Every distinct payload per eventId: exactly one wins (the inbox hash); every record of another payload is a conflict.
  let quarantineMismatches = 0;
  let conflicts = 0;
  let lost = 0;
  const expected = new Map<string, Channel[]>();
  for (const [p, records] of a.parts.entries()) {
    for (const [offset, r] of records.entries()) {
      const pk = quarantinePk({ topic: a.topic, partition: p, offset });
      if (r.kind === 'preferences') {
        // Let in or refused as admission decides (a far-future one, for instance), and recorded accordingly.
        const admission = admitted(r.value);
        if (admission.ok) {
          const stored = inbox.get(r.eventId);
          if (stored === undefined) {
            lost++;
            problems.push(`preferences ${r.eventId} has no inbox item`);
          } else if (stored.payloadHash !== admission.payloadHash) {
            quarantineMismatches++;
            problems.push(`preferences ${r.eventId}: the inbox holds another payload`);
          }
        } else if (quarantine.get(pk)?.reason !== admission.rejection.reason) {
          quarantineMismatches++;
          problems.push(
            `preferences ${r.eventId} at ${p}/${offset}: quarantined as ${String(quarantine.get(pk)?.reason)}`,
          );
        }
        continue;
      }
      if (r.kind === 'poison') {
        const reason = quarantine.get(pk)?.reason;
        if (reason !== POISON_KINDS[r.poison]!.reason) {
          quarantineMismatches++;
          problems.push(`poison "${POISON_KINDS[r.poison]!.kind}" at ${p}/${offset}: quarantined as ${String(reason)}`);
        }
        continue;
      }
      const stored = inbox.get(r.spec.eventId);
      if (!stored) {
        lost++;
        problems.push(`event ${r.spec.eventId} has no inbox item`);
        continue;
      }
      const mine = hashOf(r.value);
      if (stored.payloadHash === mine) {
        const d = decoded(r.value);
        if (d !== undefined) {
          const routed = route(d.event, d.contactRefusals);
          expected.set(r.spec.eventId, routed.ok && !r.spec.tooOld ? routed.channels : []);
        }
      } else {
        conflicts++;
        if (quarantine.get(pk)?.reason !== 'EVENT_ID_CONFLICT') {
          quarantineMismatches++;
          problems.push(`conflicting record ${r.spec.eventId} at ${p}/${offset} not quarantined as EVENT_ID_CONFLICT`);
        }
      }
    }
  }

  // Preferences: for each transfer written from a partition where its customer published preferences before it, the
  // opt-out set in force when it was written — the newest admitted one (occurredAt, then eventId), as the table keeps
  // it. A transfer written from another partition (a producer's resend delivered first) has no order to keep: Kafka
  // orders a partition, not a topic, so it is not judged.
  const optedOut = new Map<string, Set<Channel>>();
  for (const [eventId, item] of inbox) {
    if (item.type === 'PreferencesUpdated') continue;
    const { partition, offset } = item.source as { partition: number; offset: number };
    const written = a.parts[partition]?.[offset];
    if (written?.kind !== 'event') continue;
    const userId = String((written.value.recipient as Record<string, unknown>).userId);
    const before = a.parts[partition]?.slice(0, offset) ?? [];
    let inForce: { at: number; eventId: string; optOut: Channel[] } | undefined;
    for (const r of before) {
      if (r.kind !== 'preferences' || r.userId !== userId) continue;
      const admission = admitted(r.value);
      if (!admission.ok || !('preferences' in admission)) continue;
      const at = admission.occurredAtMs;
      if (inForce === undefined || inForce.at < at || (inForce.at === at && inForce.eventId < r.eventId)) {
        inForce = { at, eventId: r.eventId, optOut: admission.preferences.optOut };
      }
    }
    if (inForce !== undefined) optedOut.set(eventId, new Set(inForce.optOut));
  }

  // The witness: sends the providers accepted, tied back to (eventId, channel) by the run's unique addresses.
  const addressOwner = new Map<string, string>();
  const addressOf = new Map<string, string>();
  for (const spec of a.specs) {
    // The addresses as ingest reads them (a producer's spelling normalised to what the provider receives).
    const rcp = (decoded(spec.value)?.event.recipient ?? spec.value.recipient) as Record<string, string>;
    for (const address of [rcp.email, rcp.pushEndpointArn, rcp.phoneNumber])
      if (address) addressOwner.set(address, spec.eventId);
    if (rcp.email) addressOf.set(`${spec.eventId}#EMAIL`, rcp.email);
    if (rcp.pushEndpointArn) addressOf.set(`${spec.eventId}#PUSH`, rcp.pushEndpointArn);
    if (rcp.phoneNumber) addressOf.set(`${spec.eventId}#SMS`, rcp.phoneNumber);
  }
  const sends = [...w.ses.sends.slice(a.ledgerStart.ses), ...w.sns.sends.slice(a.ledgerStart.sns)];
  const attempts = attributeSends(sends, w.witness);
  const sendCount = new Map<string, number>();
  const sendAttempts = new Map<string, (number | undefined)[]>();
  for (const [k, s] of sends.entries()) {
    const owner = addressOwner.get(s.to);
    if (owner === undefined) continue;
    const id = `${owner}#${s.channel}`;
    sendCount.set(id, (sendCount.get(id) ?? 0) + 1);
    sendAttempts.set(id, [...(sendAttempts.get(id) ?? []), attempts[k]]);
  }

  // Which attempts ended with an unknown outcome (the only legitimate cause of a later attempt's second send):
  // SENDING of that attempt → PENDING or UNKNOWN, released for an unknown outcome or its lease expired.
  const unknownAttempts = new Set<string>();
  for (const r of a.stream.seen) {
    const before = r.dynamodb?.OldImage;
    const after = r.dynamodb?.NewImage;
    if (r.eventName !== 'MODIFY' || !before || !after) continue;
    const o = unmarshall(before as Record<string, AttributeValue>);
    const n = unmarshall(after as Record<string, AttributeValue>);
    if (
      n.kind === 'NOTIFICATION' &&
      o.status === 'SENDING' &&
      (n.status === 'PENDING' || n.status === 'UNKNOWN') &&
      /^(UNKNOWN_OUTCOME|LEASE_EXPIRED)/.test(String(n.lastError ?? ''))
    )
      unknownAttempts.add(`${n.notificationId}@${o.attempt}`);
  }
  /**
   * A known acceptance is never sent again: the provider answered this attempt with a message id (in time, inside
   * its lease) and its execution environment lived on — whatever DynamoDB did to the writes after that. Only a holder
   * that died between the answer and any write, or whose answer came after its lease, leaves the outcome unknown.
   */
  const acceptanceKnown = (key: string) => {
    if (w.witness.recordedAcceptances.has(key)) return true;
    const answer = w.witness.acceptances.get(key);
    return answer !== undefined && !answer.late && answer.invocation?.crashed !== true;
  };
  /** Every send but the last made by a distinct, earlier attempt that ended unknown, its acceptance not known. */
  const resentAfterUnknown = (id: string): boolean => {
    const made = sendAttempts.get(id) ?? [];
    if (made.some((x) => x === undefined)) return false;
    const sorted = [...(made as number[])].sort((x, y) => x - y);
    return sorted.every(
      (x, k) =>
        k === sorted.length - 1 ||
        (x < sorted[k + 1]! && unknownAttempts.has(`${id}@${x}`) && !acceptanceKnown(`${id}@${x}`)),
    );
  };
  const staleWrites = w.witness.staleWrites.filter((line) => line.startsWith(a.prefix));
  problems.push(...staleWrites.slice(0, 10).map((line) => `stale write: ${line}`));

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
  let inboxWithoutNotifications = 0;
  for (const [eventId, item] of inbox) {
    for (const c of item.channels as Channel[]) {
      if (!notifications.has(`${eventId}#${c}`)) inboxWithoutNotifications++;
    }
  }
  for (const n of notifications.values()) if (!inbox.has(String(n.eventId))) inboxWithoutNotifications++;

  // The lowest offset is the original: the inbox's record is the first of its eventId on its partition.
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

  // Display text: accepted, stored and sent cleaned. Too-old events: recorded as TOO_OLD, nothing sent.
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

  const illegal = transitionViolations(a.stream.seen, a.prefix);
  problems.push(...illegal.slice(0, 10));

  // A send started without the time to finish it (the invocation's end, the lease's end): it could be cut off.
  const sendsWithoutTime = w.witness.sendsWithoutTime.filter((line) => line.startsWith(a.prefix));
  problems.push(...sendsWithoutTime.slice(0, 5).map((line) => `send started without time to finish: ${line}`));

  // No email address or phone number in any log line; no CR/LF in a header; no unescaped markup.
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
  const headerInjections = sends.filter((s) => /[\r\n]/.test(s.subject ?? '')).length;
  const unescapedMarkup = sends.filter((s) => (s.html ?? '').includes('<script')).length;
  // An email's text alternative has the template's line breaks; every other text is one line. Judged by the oracle
  // (tools/chaos/text-oracle.ts), never by the cleaner's own expressions.
  const unsafe = sends.filter(
    (s) => ![s.subject ?? '', s.html ?? ''].every(isSafeDisplayText) || !SAFE_TEXT[s.channel](s.text),
  );
  problems.push(...unsafe.slice(0, 3).map((s) => `unsafe characters sent to ${s.channel}: ${JSON.stringify(s.text)}`));

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

  return {
    seed: a.options.seed,
    events: a.specs.length,
    scheduleDigest: createHash('sha256')
      .update(
        JSON.stringify({
          records: a.parts.map((records) => records.map((r) => (r.kind === 'poison' ? String(r.value) : r.value))),
          schedule: a.schedule,
        })
          .split(a.prefix)
          .join(''),
      )
      .digest('hex'),
    records: a.parts.flat().length,
    deliveries: a.stats.deliveries,
    redeliveries: a.stats.redeliveries,
    faults,
    expectedSends,
    sentOnce,
    duplicates,
    staleWrites: staleWrites.length,
    lost,
    unknown,
    failed,
    quarantined: [...quarantine.values()].length,
    quarantineMismatches,
    conflicts,
    piiLeaks: leaks.length,
    illegalTransitions: illegal.length,
    inboxWithoutNotifications,
    headerInjections,
    unescapedMarkup,
    unsafeText: unsafe.length,
    displayText,
    inputCases,
    tooOld,
    laterOffsetWon,
    prototypePolluted: ({} as Record<string, unknown>).polluted !== undefined,
    failedByQuotaOrAccount,
    resentAfterAcceptAtMostOnce,
    sendsWithoutTime: sendsWithoutTime.length,
    heldTooWide,
    preferences,
    figures,
    reconciled,
    problems,
  };
}
