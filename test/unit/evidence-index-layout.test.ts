/**
 * The evidence index's compact layout (domain/evidence-batch.ts, stores/evidence-index.ts indexItemsOf): a send is kept
 * on its customer's item of its event as its record digest's first 128 bits (base64url), its batch after the day and
 * its id after the event's, and nothing the key says again — and the sends of the layout before (whole hex digests) still parse, and a record
 * is still checked against either.
 */
import { describe, expect, it } from 'vitest';
import {
  batchName,
  batchOfIndexPart,
  batchOfShortPart,
  digestMatches,
  type IndexedSend,
  idRestOfShort,
  indexBatchPart,
  indexDigest,
  indexEntriesOf,
  indexMark,
  indexSend,
  parseIndexMark,
  parseIndexSend,
  sendsOf,
  sha256Hex,
  shortBatchPart,
  shortIdRest,
} from '../../functions/domain/evidence-batch.ts';
import { sliceBatchName } from '../../functions/domain/evidence-spool.ts';
import { eventIndexSk, indexItemKind, parseEventIndexSk } from '../../functions/domain/keys.ts';
import { indexItemsOf } from '../../functions/stores/evidence-index.ts';
import { itemBytes } from '../../tools/bench/billing.ts';

const SHA = sha256Hex(Buffer.from('the exact bytes of one send record'));
const SHA_EMAIL = sha256Hex(Buffer.from('EMAIL'));
const SHA_PUSH = sha256Hex(Buffer.from('PUSH'));

describe('a send as the index keeps it', () => {
  const day = '2026-12-05';
  const batch = batchName('dispatch', Date.parse('2026-12-05T09:15:03Z'), 'a1b2c3d4e5');

  it("the compact layout keeps the digest's first 128 bits (22 base64url characters), the batch after its day and the id after its event's", () => {
    const mark = indexMark(SHA, day, batch, 'ev 1#a', 'ev 1#a#SMS#E2');
    expect(mark).toMatch(/^[A-Za-z0-9_-]{22}DIIXa1b2c3d4e5 S#E2$/);
    expect(parseIndexMark(mark, day, 'ev 1#a')).toEqual({
      batch,
      notificationId: 'ev 1#a#SMS#E2',
      sha256: SHA.slice(0, 32),
    });
    // A send whose id names no event is on an item of its own id: nothing after it.
    expect(parseIndexMark(indexMark(SHA, day, batch, 'odd', 'odd'), day, 'odd')).toMatchObject({
      notificationId: 'odd',
    });
  });

  it('a mark written before the short batch and channel (a space after the digest, `#CHANNEL` whole) still parses, whole', () => {
    const spaced = `${indexDigest(SHA)} ${indexBatchPart(day, batch)} #SMS#E2`;
    expect(parseIndexMark(spaced, day, 'ev 1#a')).toEqual({
      batch,
      notificationId: 'ev 1#a#SMS#E2',
      sha256: SHA.slice(0, 32),
    });
    const slice = sliceBatchName(Date.parse('2026-12-05T09:15:30Z'), 2_557);
    expect(parseIndexMark(`${indexDigest(SHA)} 091500-sweeper-spooldays2557 #EMAIL`, day, 'ev')).toMatchObject({
      batch: slice,
      notificationId: 'ev#EMAIL',
    });
    // The same send in either form is the same batch, notification and digest.
    expect(parseIndexMark(indexMark(SHA, day, slice, 'ev', 'ev#EMAIL'), day, 'ev')).toEqual(
      parseIndexMark(`${indexDigest(SHA)} 091500-sweeper-spooldays2557 #EMAIL`, day, 'ev'),
    );
  });

  it("a mark carries its record's attempt after the digest (`2.`): two bytes a send, read back in every batch form; one without it reads as none", () => {
    const slice = sliceBatchName(Date.parse('2026-12-05T09:15:30Z'), 2_557);
    const forms = [batch, slice, batchName('sweeper', Date.parse('2026-12-04T23:59:59Z'), 'f00d1234'), 'other/name'];
    for (const b of forms) {
      const without = indexMark(SHA, day, b, 'ev 1#a', 'ev 1#a#SMS#E2');
      // The widest a writer gives (a safe integer: 16 digits) reads back too.
      for (const attempt of [0, 1, 2, 12, 2026, Number.MAX_SAFE_INTEGER]) {
        const mark = indexMark(SHA, day, b, 'ev 1#a', 'ev 1#a#SMS#E2', attempt);
        expect(mark, b).toBe(`${without.slice(0, 22)}${attempt}.${without.slice(22)}`);
        expect(parseIndexMark(mark, day, 'ev 1#a'), b).toEqual({
          batch: b,
          notificationId: 'ev 1#a#SMS#E2',
          sha256: SHA.slice(0, 32),
          attempt,
        });
      }
      expect(indexMark(SHA, day, b, 'ev', 'ev#SMS', 1).length - indexMark(SHA, day, b, 'ev', 'ev#SMS').length).toBe(2);
      // Written before marks carried it: no attempt, not 0.
      expect(parseIndexMark(without, day, 'ev 1#a'), b).not.toHaveProperty('attempt');
    }
    // A number no claim is (a record written by hand) is left out: the mark is read by the batch rule.
    for (const odd of [1.5, -1, Number.NaN])
      expect(indexMark(SHA, day, batch, 'ev', 'ev#SMS', odd)).toBe(indexMark(SHA, day, batch, 'ev', 'ev#SMS'));
  });

  it('a reader deployed before marks carried the attempt reads a mark with one as none (not indexed yet), never as another send', () => {
    // MARK as it was before the attempt (domain/evidence-batch.ts at f1888ee).
    const before =
      /^([A-Za-z0-9_-]{22})(?:( )(\S+)|()(~[A-Za-z0-9_-]{3,}|[A-Z][A-Za-z0-9_-]{3}[0-9a-z]+|\d{4}-\d{2}-\d{2}\/\S+|\/\S+)) (.*)$/s;
    const slice = sliceBatchName(Date.parse('2026-12-05T09:15:30Z'), 2_557);
    for (const b of [batch, slice, batchName('dispatch', Date.parse('2026-12-04T10:00:00Z'), 'a1b2c3d4'), 'x/y']) {
      expect(before.test(indexMark(SHA, day, b, 'ev', 'ev#SMS')), b).toBe(true);
      for (const attempt of [1, 2026])
        expect(before.test(indexMark(SHA, day, b, 'ev', 'ev#SMS', attempt)), b).toBe(false);
    }
  });

  it("a batch's sends carry their records' attempts into its entries and its marks", () => {
    const record = (attempt: number) =>
      ({
        kind: 'SEND',
        userId: 'u-1',
        acceptedAt: '2026-12-05T09:15:03.000Z',
        notificationId: 'ev-9#SMS',
        attempt,
      }) as never;
    const sends = sendsOf([
      { record: record(1), bytes: Buffer.from('attempt 1') },
      { record: record(2), bytes: Buffer.from('attempt 2') },
    ]);
    const [entry] = indexEntriesOf(batch, sends);
    expect(entry?.sends).toEqual([
      { notificationId: 'ev-9#SMS', sha256: sha256Hex(Buffer.from('attempt 1')), attempt: 1 },
      { notificationId: 'ev-9#SMS', sha256: sha256Hex(Buffer.from('attempt 2')), attempt: 2 },
    ]);
    const [item] = indexItemsOf([{ entry: entry as never, expiresAt: 1 }]);
    const read = [...(item?.s ?? [])].map((m) => parseIndexMark(m, day, 'ev-9')?.attempt).sort();
    expect(read).toEqual([1, 2]);
  });

  it("a channel is kept as its initial, a resend's epoch after it; an id that names no channel is kept as it is", () => {
    expect(['#EMAIL', '#PUSH', '#SMS', '#SMS#E2', '#PUSH#E10'].map(shortIdRest)).toEqual([
      'E',
      'P',
      'S',
      'S#E2',
      'P#E10',
    ]);
    for (const rest of ['#EMAIL', '#PUSH', '#SMS', '#SMS#E2', '', '#FAX', '#EMAILX', '#x y']) {
      expect(idRestOfShort(shortIdRest(rest))).toBe(rest);
    }
    expect(shortIdRest('#FAX')).toBe('#FAX');
    expect(shortIdRest('#EMAILX')).toBe('#EMAILX');
  });

  it('a send of the layout before (the whole hex digest and the id) still parses, whole; anything else does not', () => {
    expect(parseIndexSend(indexSend(SHA, 'ev-1#SMS'))).toEqual({ sha256: SHA, notificationId: 'ev-1#SMS' });
    expect(parseIndexSend(`${SHA.slice(0, 40)} ev-1#SMS`)).toBeUndefined();
    expect(parseIndexSend(indexMark(SHA, day, batch, 'ev-1', 'ev-1#SMS'))).toBeUndefined();
    expect(parseIndexMark(indexSend(SHA, 'ev-1#SMS'), day, 'ev-1')).toBeUndefined();
  });

  it("a record is checked against the whole digest or its first 128 bits; another record's, or a shorter prefix, does not match", () => {
    const other = sha256Hex(Buffer.from('another record'));
    const carried = parseIndexMark(indexMark(SHA, day, batch, 'n', 'n#EMAIL'), day, 'n')?.sha256 as string;
    expect(digestMatches(carried, SHA)).toBe(true);
    expect(digestMatches(SHA, SHA)).toBe(true);
    expect(digestMatches(carried, other)).toBe(false);
    expect(digestMatches(SHA.slice(0, 8), SHA)).toBe(false);
    expect(digestMatches('', SHA)).toBe(false);
  });
});

describe("the batch in a customer item's sort key", () => {
  const day = '2026-12-05';
  it("is shortened to what its day does not say, and read back whole: that day's, another day's, a slice, any other name", () => {
    const own = batchName('dispatch', Date.parse('2026-12-05T09:15:03Z'), 'a1b2c3d4e5');
    const nextDay = batchName('sweeper', Date.parse('2026-12-06T00:00:01Z'), 'rebuild0001');
    const slice = sliceBatchName(Date.parse('2026-12-05T23:59:30Z'), 2_557);
    expect(indexBatchPart(day, own)).toBe('091503-dispatch-a1b2c3d4e5');
    expect(indexBatchPart(day, nextDay)).toBe('2026-12-06/000001-sweeper-rebuild0001');
    expect(indexBatchPart(day, slice)).toBe('235900-sweeper-spooldays2557');
    expect(indexBatchPart(day, 'elsewhere/x')).toBe('/elsewhere/x');
    for (const batch of [own, nextDay, slice, 'elsewhere/x', 'batches/odd']) {
      expect(batchOfIndexPart(day, indexBatchPart(day, batch))).toBe(batch);
    }
  });

  it("a mark keeps a slice of the item's day as `~`, its minute and its days, and a writer's batch of that day as its initial, second and id (the numbers in base64url); any other as before; each read back whole", () => {
    const own = batchName('dispatch', Date.parse('2026-12-05T09:15:03Z'), 'a1b2c3d4e5');
    const report = batchName('feedback', Date.parse('2026-12-05T09:15:03Z'), 'a1b2c3d4e5');
    const rebuilt = batchName('sweeper', Date.parse('2026-12-05T00:00:01Z'), 'rebuild0001');
    const slice = sliceBatchName(Date.parse('2026-12-05T23:59:30Z'), 2_557);
    const nextDaySlice = sliceBatchName(Date.parse('2026-12-06T00:00:30Z'), 90);
    // 23:59 is minute 1,439 (`Wf`), 2,557 days `n9`; 09:15:03 is second 33,303 (`IIX`).
    expect(shortBatchPart(day, slice)).toBe('~Wfn9');
    expect(shortBatchPart(day, own)).toBe('DIIXa1b2c3d4e5');
    expect(shortBatchPart(day, report)).toBe('FIIXa1b2c3d4e5');
    expect(shortBatchPart(day, rebuilt)).toBe('SAABrebuild0001');
    expect(shortBatchPart(day, nextDaySlice)).toBe('2026-12-06/000000-sweeper-spooldays90');
    // A name of the day that is neither form (never a writer's: they are checked) is kept whole, never read as one.
    expect(shortBatchPart(day, 'batches/2026-12-05/D123456abc')).toBe('/batches/2026-12-05/D123456abc');
    for (const batch of [
      own,
      report,
      rebuilt,
      slice,
      nextDaySlice,
      'elsewhere/x',
      'batches/odd',
      'batches/2026-12-05/x',
      'batches/2026-12-05/D123456abc',
      'batches/2026-12-05/246000-dispatch-a1b2c3d4e5',
      'batches/2026-12-05/091500-sweeper-spooldays030',
      `${slice}late0123456789abcdef`,
    ]) {
      expect(batchOfShortPart(day, shortBatchPart(day, batch))).toBe(batch);
    }
    // Every second of the day, every minute's slice of any retention: read back whole.
    for (let second = 0; second < 86_400; second++) {
      const at = Date.parse('2026-12-05T00:00:00Z') + second * 1_000;
      const named = [batchName('dispatch', at, 'f'.repeat(20))];
      if (second % 60 === 0) named.push(...[1, 30, 2_557, 99_999].map((days) => sliceBatchName(at, days)));
      for (const batch of named) expect(batchOfShortPart(day, shortBatchPart(day, batch))).toBe(batch);
    }
  });
});

describe("an event item's sort key", () => {
  it('names the day as four base-36 digits of days since 1970 after a `~`, then the user id; the form before still reads', () => {
    expect(eventIndexSk('2026-12-05', 'u-12')).toBe('~0g1ku-12');
    for (const day of ['1970-01-01', '2026-02-28', '2028-02-29', '2099-12-31']) {
      for (const userId of ['u-12', 'a#b c', '2026-12-05#x']) {
        expect(parseEventIndexSk(eventIndexSk(day, userId))).toEqual({ day, userId });
      }
    }
    expect(parseEventIndexSk('2026-12-05#u-12')).toEqual({ day: '2026-12-05', userId: 'u-12' });
    expect(parseEventIndexSk('batches/2026-12-05/x')).toBeUndefined();
    expect(parseEventIndexSk('~0g1')).toBeUndefined();
  });

  it('refuses a day four base-36 digits cannot hold, rather than write a key that reads back as another day or none', () => {
    expect(parseEventIndexSk(eventIndexSk('6568-08-18', 'u-1'))).toEqual({ day: '6568-08-18', userId: 'u-1' });
    for (const day of ['1969-12-31', '6568-08-19', '2026-13-01', '2026-02-30', '', 'someday']) {
      expect(() => eventIndexSk(day, 'u-1')).toThrow(RangeError);
    }
  });
});

describe('the compact items', () => {
  const slice = sliceBatchName(Date.parse('2026-12-05T09:15:00Z'), 2_557);
  const own = batchName('dispatch', Date.parse('2026-12-05T09:15:01Z'), 'f'.repeat(20));
  const send = (channel: string, i: number) => ({
    userId: 'u-12',
    acceptedAt: `2026-12-05T09:15:0${i}.000Z`,
    notificationId: `cost-mix-12#${channel}`,
    sha256: sha256Hex(Buffer.from(channel)),
  });
  const sends = [send('EMAIL', 0), send('PUSH', 1)];
  const itemsOf = (batch: string, s: IndexedSend[]) =>
    indexItemsOf(indexEntriesOf(batch, s).map((entry) => ({ entry, expiresAt: 2_023_430_400 })));

  it("a customer item holds an event's sends under `s` beside its key and TTL, whatever batch each is in; an event item is its key and TTL alone", () => {
    const items = [...itemsOf(slice, [sends[0] as IndexedSend]), ...itemsOf(own, [sends[1] as IndexedSend])];
    expect(items).toEqual([
      {
        pk: 'u#u-12',
        sk: '2026-12-05#cost-mix-12',
        expiresAt: 2_023_430_400,
        s: new Set([indexMark(SHA_EMAIL, '2026-12-05', slice, 'cost-mix-12', 'cost-mix-12#EMAIL')]),
      },
      { pk: 'e#cost-mix-12', sk: '~0g1ku-12', expiresAt: 2_023_430_400 },
      {
        pk: 'u#u-12',
        sk: '2026-12-05#cost-mix-12',
        expiresAt: 2_023_430_400,
        s: new Set([indexMark(SHA_PUSH, '2026-12-05', own, 'cost-mix-12', 'cost-mix-12#PUSH')]),
      },
      { pk: 'e#cost-mix-12', sk: '~0g1ku-12', expiresAt: 2_023_430_400 },
    ]);
    expect(parseEventIndexSk(items[1]?.sk as string)).toEqual({ day: '2026-12-05', userId: 'u-12' });
    expect(items.map((i) => indexItemKind(i.pk))).toEqual([
      'EVIDENCE_INDEX',
      'EVIDENCE_EVENT',
      'EVIDENCE_INDEX',
      'EVIDENCE_EVENT',
    ]);
  });

  it('billed as DynamoDB counts them, the two items of an event on two channels take little more than half the layout before', () => {
    const before = [
      {
        pk: 'EVIDENCE_INDEX#u-12',
        sk: `2026-12-05#${slice}`,
        kind: 'EVIDENCE_INDEX',
        userId: 'u-12',
        expiresAt: 2_023_430_400,
        sends: new Set(sends.map((s) => indexSend(s.sha256, s.notificationId))),
      },
      {
        pk: 'EVIDENCE_EVENT#cost-mix-12',
        sk: slice,
        kind: 'EVIDENCE_EVENT',
        expiresAt: 2_023_430_400,
        sends: new Set(sends.map((s) => indexSend(s.sha256, s.notificationId))),
      },
    ];
    const bytes = (xs: readonly Record<string, unknown>[]) => xs.reduce((n, i) => n + itemBytes(i) + 100, 0);
    const now = itemsOf(slice, sends);
    expect(now).toHaveLength(2);
    expect(bytes(now)).toBeLessThan(bytes(before) * 0.55);
  });
});
