/**
 * Records MSK Replicator copied from the other region's cluster (docs/regions.md "Events read again"): the header read
 * from Lambda's MSK event as AWS gives it, the rule that decides whether a region takes such a record, and the
 * look-up in the other region that may answer "taken there" only while that region says FENCED — and that stops
 * asking for a while once it has failed, so a dead region costs one timeout, not one per event.
 */
import { describe, expect, it } from 'vitest';
import { replayAsIs } from '../../functions/domain/event/replay-cure.ts';
import type { FenceControl } from '../../functions/domain/fence.ts';
import { notTakenDetail, replicatedRecordRule } from '../../functions/domain/replicated-records.ts';
import type { KnownEvents } from '../../functions/ingest/inbox-port.ts';
import { OtherRegionActive, PeerInboxes, PeerLookupUnanswered } from '../../functions/ingest/peer-lookup.ts';
import { producerOf, replicatedFromOf } from '../../functions/ingest/producer-trace.ts';
import { transferEvent } from '../support/events.ts';

const HERE = 'ap-northeast-3';
const OLD = 'ap-northeast-1';
const control = (over: Partial<FenceControl> = {}): FenceControl => ({
  region: HERE,
  state: 'ACTIVE',
  epoch: 2,
  since: 0,
  by: 'test',
  reason: 'failover',
  mode: 'FORCED',
  cutAt: 0,
  predecessor: { region: OLD, epoch: 1 },
  ...over,
});

describe('the __mskmr header, read from the MSK event Lambda delivers', () => {
  const bytes = (text: string) => [...Buffer.from(text, 'utf8')];

  it("is found among the record's headers (an array of one-name objects, each value its bytes) and read as text", () => {
    const headers: Record<string, number[]>[] = [
      { traceparent: bytes('00-abc') },
      { __mskmr: bytes('bank-events-dr/bank-events') },
    ];
    const record = { headers };
    expect(replicatedFromOf(record)).toBe('bank-events-dr/bank-events');
    // The producer's trace keeps it too, as every header (quarantine items show it).
    expect(producerOf(record)?.headers).toMatchObject({ __mskmr: 'bank-events-dr/bank-events' });
  });

  it("AWS's sample event (a `headerKey` header only) and a record without headers are produced in this cluster", () => {
    expect(replicatedFromOf({ headers: [{ headerKey: bytes('headerValue') }] })).toBeUndefined();
    expect(replicatedFromOf({})).toBeUndefined();
    expect(replicatedFromOf({ headers: [] })).toBeUndefined();
  });

  it('a header whose value is not a byte array still marks the record replicated: its presence is the rule', () => {
    expect(replicatedFromOf({ headers: [{ __mskmr: [300] }] })).toBe('?');
    expect(replicatedFromOf({ headers: [{ __mskmr: 'x' as unknown as number[] }] })).toBe('?');
  });
});

describe('whether a region takes a record replicated from the other cluster', () => {
  it('the active successor of the other region holds it while that region is not reconciled', () => {
    expect(replicatedRecordRule(control(), HERE)).toBe('hold');
  });

  it('the active successor looks it up in the reconciled other region, also after lookupUntil', () => {
    const reconciled = control({ predecessor: { region: OLD, epoch: 1, reconciledAt: 5 }, lookupUntil: 6 });
    expect(replicatedRecordRule(reconciled, HERE)).toBe('lookup');
  });

  it('a region with no predecessor — the old region healed with its fence still ACTIVE — does not take it', () => {
    const healedOld = control({ region: OLD, epoch: 1, mode: 'INITIAL', predecessor: undefined, cutAt: undefined });
    expect(replicatedRecordRule(healedOld, OLD)).toBe('notTaken');
    expect(notTakenDetail(healedOld, OLD, 'bank-events-dr/bank-events')).toContain('has no predecessor');
  });

  it('a fenced region, no fence at all, or a predecessor that names this region itself: not taken', () => {
    expect(replicatedRecordRule(control({ state: 'FENCED' }), HERE)).toBe('notTaken');
    expect(replicatedRecordRule(undefined, HERE)).toBe('notTaken');
    expect(replicatedRecordRule(control({ predecessor: { region: HERE, epoch: 1, reconciledAt: 1 } }), HERE)).toBe(
      'notTaken',
    );
  });
});

describe('the look-up in the other region', () => {
  const found: KnownEvents = new Map([['e-1', { payloadHash: 'v2:x' }]]);
  const peer = (fence: () => Promise<FenceControl | undefined>, clock = { now: 0 }) => {
    const asked = { inbox: 0, fence: 0 };
    const inboxes = new PeerInboxes(
      {
        findTaken: async () => {
          asked.inbox++;
          return found;
        },
      },
      {
        control: async () => {
          asked.fence++;
          return fence();
        },
      },
      () => clock.now,
      15_000,
    );
    return { inboxes, asked, clock };
  };

  it("answers from the other region's inbox while its fence says FENCED", async () => {
    const { inboxes } = peer(async () => control({ region: OLD, state: 'FENCED', epoch: 1 }));
    expect(await inboxes.taken(['e-1'])).toBe(found);
  });

  it('refuses to answer while the other region is ACTIVE again, or has no fence: "absent there" would prove nothing', async () => {
    const { inboxes, asked } = peer(async () => control({ region: OLD, state: 'ACTIVE', epoch: 4 }));
    await expect(inboxes.taken(['e-1'])).rejects.toThrow(PeerLookupUnanswered);
    expect(asked.inbox).toBe(0);
    await expect(peer(async () => undefined).inboxes.taken(['e-1'])).rejects.toThrow(/says nothing/);
  });

  it("while paused by an ACTIVE other region, it keeps saying so: a copy of that region's record is never held here", async () => {
    const { inboxes, asked } = peer(async () => control({ region: OLD, state: 'ACTIVE', epoch: 4 }));
    await expect(inboxes.taken(['e-1'])).rejects.toThrow(OtherRegionActive);
    await expect(inboxes.taken(['e-2'])).rejects.toThrow(OtherRegionActive);
    expect(asked.fence).toBe(1);
  });

  it('after a failure it does not ask again for the pause, then asks again', async () => {
    let down = true;
    const { inboxes, asked, clock } = peer(async () => {
      if (down) throw new Error('connect ECONNREFUSED');
      return control({ region: OLD, state: 'FENCED', epoch: 1 });
    });
    await expect(inboxes.taken(['e-1'])).rejects.toThrow('ECONNREFUSED');
    down = false;
    clock.now = 14_999;
    await expect(inboxes.taken(['e-1'])).rejects.toThrow(PeerLookupUnanswered);
    expect(asked.fence).toBe(1);
    clock.now = 15_000;
    expect(await inboxes.taken(['e-1'])).toBe(found);
    expect(asked).toEqual({ fence: 2, inbox: 1 });
  });
});

describe('a replicated record not taken, replayed', () => {
  it('is never cured by a replay, even when its bytes decode: the other region takes it from its own cluster', () => {
    const value = Buffer.from(JSON.stringify(transferEvent({ eventId: 'copied-1' })), 'utf8').toString('base64');
    const verdict = replayAsIs('REPLICATED_NOT_TAKEN', value, 65_536);
    expect(verdict.cures).toBe(false);
    expect(verdict.cures === false && verdict.why).toMatch(/other region takes this record from its own cluster/);
    expect(verdict.cures === false && verdict.why).toMatch(/could send it twice/);
  });
});
