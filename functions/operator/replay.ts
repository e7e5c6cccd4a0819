/**
 * Replaying quarantined records (docs/operations.md "The operator CLI"): each record fed back through the ingest
 * function at its own topic, partition and offset, as the MSK mapping would deliver it — with its stored value, or
 * with the producer's corrected event (one record at a time). The inbox makes anything already processed a
 * duplicate: a replay never sends twice.
 *
 * Input: quarantine ids, and optionally the corrected value. Output: per record, ACCEPTED (the inbox has the event
 * from this record), DUPLICATE (it had it from another record: nothing sent again) or STILL_QUARANTINED.
 * Steps: read each quarantined record; decide (a malformed or unknown id, a value cut short without a correction,
 * a stored value or a correction the decoder would quarantine again, a correction that changes the eventId are
 * refused); audited; invoke ingest per record; read the inbox; mark the record replayed when ingest accepted it.
 * Audited DONE with each record's result and the counts when any record was accepted; REFUSED with the reasons when
 * none was and one was quarantined again.
 */
import { decodeRecordValue } from '../domain/event/decode.ts';
import { decodedVerdict, NEVER_REPLAYED, replayAsIs } from '../domain/event/replay-cure.ts';
import { type KafkaSource, parseQuarantineId } from '../domain/keys.ts';
import { loadPhoneNumbers } from '../domain/phone-numbers.ts';
import { refusal } from '../domain/refusal.ts';
import type { QuarantinedRecord } from '../stores/quarantine-store.ts';
import { type OperatorAction, ok, type Result, refused } from './action.ts';
import { replayEvent } from './msk-event.ts';
import type { OperatorPorts } from './ports.ts';
import { type CorrectionReview, eventIdOf, reviewCorrection } from './review.ts';

export interface ReplayRequest {
  readonly ids: readonly string[];
  /** The producer's corrected event, replacing the stored value of the one record named. */
  readonly corrected?: string;
}

interface Named {
  readonly id: string;
  readonly source: KafkaSource | undefined;
  readonly item: QuarantinedRecord | undefined;
}

export interface ReplayPlan {
  readonly records: readonly { readonly id: string; readonly source: KafkaSource; readonly item: QuarantinedRecord }[];
  /** What the corrected value changes, when there is one. */
  readonly review: CorrectionReview | undefined;
}

export interface ReplayResult {
  readonly id: string;
  readonly outcome: 'ACCEPTED' | 'DUPLICATE' | 'STILL_QUARANTINED';
  readonly eventId: string | null;
  /** STILL_QUARANTINED: why, as the decoder reads the value replayed (else the reason it was first quarantined for). */
  readonly why?: string;
}

/** Only to compare meanings: the ingest function applies its own MAX_EVENT_BYTES. */
const RAW_BYTES_MAX = 1_048_576;

export const replayQuarantine: OperatorAction<ReplayRequest, Named[], ReplayPlan, ReplayResult[]> = {
  audit: 'REPLAY',
  target: (request) => request.ids.join(','),
  // A corrected value is content an operator supplied (its contact points included): four eyes by default.
  kind: (request) => (request.corrected === undefined ? 'REPLAY' : 'OPERATOR_CONTENT'),
  customer: (plan) => {
    const users = new Set(plan.records.map((r) => r.item.userId).filter((u) => typeof u === 'string'));
    return users.size === 1 ? [...users][0] : undefined;
  },

  // decide reads each record as ingest does, and a phone number written otherwise than E.164 needs the rules ingest
  // loads on demand (domain/phone-numbers.ts): loaded here, in the step before the pure decision.
  read: async (ports, request) => {
    await loadPhoneNumbers();
    return Promise.all(
      request.ids.map(async (id) => {
        const source = parseQuarantineId(id);
        return { id, source, item: source === undefined ? undefined : await ports.quarantine.get(source) };
      }),
    );
  },

  decide(named, request) {
    const { corrected } = request;
    if (corrected !== undefined && named.length !== 1) {
      return refused('INVALID', 'a corrected value replaces one record: name exactly one quarantine id');
    }
    const records: ReplayPlan['records'][number][] = [];
    for (const { id, source, item } of named) {
      if (source === undefined)
        return refused('INVALID', `"${id}" is not a quarantine id (<topic>#<partition>#<offset>)`);
      if (item === undefined) return refused('NOT_FOUND', `no quarantined record ${id}`);
      // Neither as stored nor corrected: no replay here is right for it.
      const never = NEVER_REPLAYED.get(item.reason);
      if (never !== undefined) return refused('TAKEN_ELSEWHERE', `${id} is not replayed: ${never}`);
      if (corrected === undefined && item.rawTruncated === true) {
        return refused(
          'VALUE_TRUNCATED',
          `${id} was quarantined with its value cut to 4 KB: replay it with --value-file (the corrected event)`,
        );
      }
      const asIs = corrected === undefined ? replayAsIs(item.reason, String(item.raw), RAW_BYTES_MAX) : undefined;
      if (asIs?.cures === false) {
        return refused(
          'WOULD_QUARANTINE',
          `${id} was quarantined for ${item.reason}, and its stored value would be quarantined again (${asIs.why}): replay it with --value-file (the producer's corrected event), or have the producer send it again`,
        );
      }
      records.push({ id, source, item });
    }
    const first = records[0];
    const review =
      corrected === undefined || first === undefined ? undefined : reviewCorrection(first.id, first.item, corrected);
    if (review?.refusal) return refused('CORRECTION_REFUSED', `${review.id}: ${review.refusal}`);
    // A correction goes through the same decoder ingest runs: one it would quarantine is refused before anyone
    // reviews or approves it.
    const fixed =
      corrected === undefined
        ? undefined
        : decodedVerdict(Buffer.from(corrected, 'utf8').toString('base64'), RAW_BYTES_MAX);
    if (fixed?.cures === false) {
      return refused(
        'WOULD_QUARANTINE',
        `${first?.id}: the corrected value would be quarantined again (${fixed.why}): correct it and preview again`,
      );
    }
    return ok({ records, review });
  },

  shown: (plan) => ({
    records: plan.records.map((r) => ({ id: r.id, reason: r.item.reason, eventId: r.item.eventId ?? null })),
    ...(plan.review === undefined ? { value: 'stored' } : { value: 'edited', review: plan.review }),
  }),

  async perform(ports, plan, request) {
    const results: ReplayResult[] = [];
    for (const record of plan.records) results.push(await replayOne(ports, record, request.corrected));
    return ok(results) as Result<ReplayResult[]>;
  },

  // The counts beside each record's result: an auditor reads at a glance how many were admitted and how many not.
  done: (results) => ({
    results,
    accepted: results.filter((r) => r.outcome === 'ACCEPTED').length,
    duplicates: results.filter((r) => r.outcome === 'DUPLICATE').length,
    stillQuarantined: results.filter((r) => r.outcome === 'STILL_QUARANTINED').map((r) => r.id),
  }),

  // REFUSED only when nothing was admitted: a record accepted is sent, and its replay was done (DONE, with the
  // records still quarantined counted in `done`).
  shortfall(results) {
    const again = results.filter((r) => r.outcome === 'STILL_QUARANTINED');
    if (again.length === 0 || results.some((r) => r.outcome === 'ACCEPTED')) return undefined;
    const each = again.map((r) => `${r.id} (${r.why ?? 'quarantined'})`).join(', ');
    return refusal('STILL_QUARANTINED', `replayed, and ingest quarantined it again: ${each}`);
  },
};

async function replayOne(
  ports: OperatorPorts,
  { id, source, item }: ReplayPlan['records'][number],
  corrected: string | undefined,
): Promise<ReplayResult> {
  const value = corrected === undefined ? Buffer.from(String(item.raw), 'base64') : Buffer.from(corrected, 'utf8');
  await ports.invokeIngest(replayEvent([{ source, value }]));
  const eventId = corrected === undefined ? (item.eventId ?? null) : eventIdOf(corrected);
  const inbox = eventId === null ? undefined : (await ports.events.read(eventId)).inbox;
  const accepted = inbox !== undefined && isSameSource(inbox.source as KafkaSource | undefined, source);
  if (accepted) await ports.quarantine.markReplayed(source, new Date(ports.now()).toISOString());
  if (accepted) return { id, outcome: 'ACCEPTED', eventId };
  // Already in the inbox from another record: a duplicate if it means the same (the payload hash), else a conflict.
  const decoded = decodeRecordValue(value.toString('base64'), RAW_BYTES_MAX);
  if (inbox !== undefined && decoded.ok && decoded.payloadHash === inbox.payloadHash) {
    return { id, outcome: 'DUPLICATE', eventId };
  }
  const why = decoded.ok
    ? inbox === undefined
      ? item.reason
      : 'EVENT_ID_CONFLICT'
    : `${decoded.rejection.reason}: ${decoded.rejection.detail}`;
  return { id, outcome: 'STILL_QUARANTINED', eventId, why };
}

const isSameSource = (a: KafkaSource | undefined, b: KafkaSource) =>
  a !== undefined && a.topic === b.topic && a.partition === b.partition && a.offset === b.offset;
