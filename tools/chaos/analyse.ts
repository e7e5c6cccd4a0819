/**
 * Judging a run after convergence: every record's outcome against what was expected of it, the providers' ledgers
 * as the independent witness of what was sent, the stream as the record of every transition, the logs for personal
 * data, and the ingest figures reconciled. Returns the report the one verdict (verdict.ts) reads.
 */

import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Channel } from '../../functions/domain/channels.ts';
import { quarantinePk } from '../../functions/domain/keys.ts';
import { route } from '../../functions/domain/routing.ts';
import {
  admitted,
  decoded,
  faultsOf,
  hashOf,
  inboxWithoutNotifications,
  judgeFigures,
  judgeLogs,
  judgeSends,
  judgeSpecs,
  judgeTexts,
  laterOffsetsWon,
} from './checks.ts';
import { runItems, transitionViolations } from './converge.ts';
import type { ChaosReport } from './model.ts';
import { POISON_KINDS } from './poison.ts';
import { type AnalysisInput, type Stored, sendsOf, type Witnessed } from './run-record.ts';
import { attributeSends } from './witness.ts';
import type { World } from './world.ts';

export async function analyse(w: World, a: AnalysisInput): Promise<ChaosReport> {
  const problems: string[] = [];
  const stored = await storedItems(w, a.prefix);
  const records = judgeRecords(a, stored, problems);
  const witnessed = witness(w, a);
  const resentAfterUnknown = resendsAfterUnknown(w, a, witnessed);
  const staleWrites = w.witness.staleWrites.filter((line) => line.startsWith(a.prefix));
  problems.push(...staleWrites.slice(0, 10).map((line) => `stale write: ${line}`));
  const sends = judgeSends(
    a,
    stored,
    records.expected,
    optOutsInForce(a, stored),
    witnessed,
    resentAfterUnknown,
    problems,
  );
  const specs = judgeSpecs(a, stored, records.expected, witnessed, problems);
  const illegal = transitionViolations(a.stream.seen, a.prefix);
  problems.push(...illegal.slice(0, 10));
  // A send started without the time to finish it (the invocation's end, the lease's end): it could be cut off.
  const sendsWithoutTime = w.witness.sendsWithoutTime.filter((line) => line.startsWith(a.prefix));
  problems.push(...sendsWithoutTime.slice(0, 5).map((line) => `send started without time to finish: ${line}`));
  const logs = judgeLogs(w, a, witnessed, problems);
  const texts = judgeTexts(witnessed.sends, problems);
  const { figures, reconciled } = judgeFigures(w, a, problems);
  return {
    seed: a.options.seed,
    events: a.specs.length,
    scheduleDigest: scheduleDigest(a),
    records: a.parts.flat().length,
    deliveries: a.stats.deliveries,
    redeliveries: a.stats.redeliveries,
    faults: faultsOf(w, a, records.expected),
    expectedSends: sends.expectedSends,
    sentOnce: sends.sentOnce,
    duplicates: sends.duplicates,
    staleWrites: staleWrites.length,
    lost: records.lost + sends.lost,
    unknown: sends.unknown,
    failed: sends.failed,
    quarantined: [...stored.quarantine.values()].length,
    quarantineMismatches: records.quarantineMismatches,
    conflicts: records.conflicts,
    piiLeaks: logs.leaks,
    illegalTransitions: illegal.length,
    inboxWithoutNotifications: inboxWithoutNotifications(stored),
    ...texts,
    displayText: specs.displayText,
    inputCases: specs.inputCases,
    tooOld: specs.tooOld,
    laterOffsetWon: laterOffsetsWon(a, stored, problems),
    prototypePolluted: ({} as Record<string, unknown>).polluted !== undefined,
    failedByQuotaOrAccount: sends.failedByQuotaOrAccount,
    resentAfterAcceptAtMostOnce: sends.resentAfterAcceptAtMostOnce,
    sendsWithoutTime: sendsWithoutTime.length,
    heldTooWide: logs.heldTooWide,
    preferences: sends.preferences,
    figures,
    reconciled,
    problems,
  };
}

async function storedItems(w: World, prefix: string): Promise<Stored> {
  const items = await runItems(w, prefix);
  return {
    inbox: new Map(items.filter((i) => i.sk === 'INBOX').map((i) => [String(i.eventId), i])),
    notifications: new Map(items.filter((i) => i.kind === 'NOTIFICATION').map((i) => [String(i.notificationId), i])),
    quarantine: new Map(items.filter((i) => i.kind === 'QUARANTINE').map((i) => [String(i.pk), i])),
  };
}

/**
 * Every record against what it should have become: a preferences record let in or refused as admission decides; a
 * poison record quarantined with its reason; of every distinct payload per eventId exactly one wins (the inbox hash),
 * every record of another payload is a conflict. The channels each winning event should be sent to.
 */
function judgeRecords(a: AnalysisInput, { inbox, quarantine }: Stored, problems: string[]) {
  let quarantineMismatches = 0;
  let conflicts = 0;
  let lost = 0;
  const expected = new Map<string, Channel[]>();
  const mismatch = (problem: string) => {
    quarantineMismatches++;
    problems.push(problem);
  };
  for (const [p, records] of a.parts.entries()) {
    for (const [offset, r] of records.entries()) {
      const pk = quarantinePk({ topic: a.topic, partition: p, offset });
      if (r.kind === 'preferences') {
        const admission = admitted(r.value);
        const stored = inbox.get(r.eventId);
        if (admission.ok && stored === undefined) {
          lost++;
          problems.push(`preferences ${r.eventId} has no inbox item`);
        } else if (admission.ok && stored?.payloadHash !== admission.payloadHash) {
          mismatch(`preferences ${r.eventId}: the inbox holds another payload`);
        } else if (!admission.ok && quarantine.get(pk)?.reason !== admission.rejection.reason) {
          mismatch(`preferences ${r.eventId} at ${p}/${offset}: quarantined as ${String(quarantine.get(pk)?.reason)}`);
        }
      } else if (r.kind === 'poison') {
        const reason = quarantine.get(pk)?.reason;
        if (reason !== POISON_KINDS[r.poison]!.reason) {
          mismatch(`poison "${POISON_KINDS[r.poison]!.kind}" at ${p}/${offset}: quarantined as ${String(reason)}`);
        }
      } else {
        const stored = inbox.get(r.spec.eventId);
        if (!stored) {
          lost++;
          problems.push(`event ${r.spec.eventId} has no inbox item`);
        } else if (stored.payloadHash === hashOf(r.value)) {
          const d = decoded(r.value);
          if (d !== undefined) {
            const routed = route(d.event, d.contactRefusals);
            expected.set(r.spec.eventId, routed.ok && !r.spec.tooOld ? routed.channels : []);
          }
        } else {
          conflicts++;
          if (quarantine.get(pk)?.reason !== 'EVENT_ID_CONFLICT') {
            mismatch(`conflicting record ${r.spec.eventId} at ${p}/${offset} not quarantined as EVENT_ID_CONFLICT`);
          }
        }
      }
    }
  }
  return { expected, conflicts, quarantineMismatches, lost };
}

/**
 * Preferences: for each transfer written from a partition where its customer published preferences before it, the
 * opt-out set in force when it was written — the newest admitted one (occurredAt, then eventId), as the table keeps
 * it. A transfer written from another partition (a producer's resend delivered first) has no order to keep: Kafka
 * orders a partition, not a topic, so it is not judged.
 */
function optOutsInForce(a: AnalysisInput, { inbox }: Stored): Map<string, Set<Channel>> {
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
  return optedOut;
}

/** The witness: sends the providers accepted, tied back to (eventId, channel) by the run's unique addresses. */
function witness(w: World, a: AnalysisInput): Witnessed {
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
  const sends = sendsOf(w, a);
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
  return { sends, sendCount, sendAttempts, addressOf };
}

/**
 * Whether every send of a notification but the last was made by a distinct, earlier attempt that ended with an unknown
 * outcome (the only legitimate cause of a later attempt's second send) whose acceptance was not known.
 */
function resendsAfterUnknown(w: World, a: AnalysisInput, { sendAttempts }: Witnessed): (id: string) => boolean {
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
  return (id) => {
    const made = sendAttempts.get(id) ?? [];
    if (made.some((x) => x === undefined)) return false;
    const sorted = [...(made as number[])].sort((x, y) => x - y);
    return sorted.every(
      (x, k) =>
        k === sorted.length - 1 ||
        (x < sorted[k + 1]! && unknownAttempts.has(`${id}@${x}`) && !acceptanceKnown(`${id}@${x}`)),
    );
  };
}

/** The run's records and schedule, without its prefix: two runs of one seed have the same digest. */
function scheduleDigest(a: AnalysisInput): string {
  return createHash('sha256')
    .update(
      JSON.stringify({
        records: a.parts.map((records) => records.map((r) => (r.kind === 'poison' ? String(r.value) : r.value))),
        schedule: a.schedule,
      })
        .split(a.prefix)
        .join(''),
    )
    .digest('hex');
}
