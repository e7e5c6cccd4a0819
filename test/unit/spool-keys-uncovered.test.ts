/**
 * `ops spool-keys` prints one Query per key it keeps (tools/ops/spool-keys.ts `uncovered`): every spooled item must be
 * reached by exactly one kept key — none left for a court-ordered erasure to miss, none asked twice. The same record
 * can be named by identical keys (a record locked late is indexed under its slice and under its late object's name)
 * or by its whole key and a prefix of it (its notification names the whole digest, the index 128 bits of it).
 */
import { expect, it } from 'vitest';
import { type SpoolKeyOfSend, uncovered } from '../../tools/ops/spool-keys.ts';

const key = (skPrefix: string, pk = 'EVIDENCE_SPOOL#3', notificationId = 'e1#SMS'): SpoolKeyOfSend => ({
  notificationId,
  batch: 'slice',
  pk,
  skPrefix,
});

it('keeps one of two identical keys', () => {
  expect(uncovered([key('0001#30#abc'), key('0001#30#abc')])).toEqual([key('0001#30#abc')]);
});

it('keeps the prefix that reaches a whole key, whichever comes first', () => {
  expect(uncovered([key('0001#30#abcdef'), key('0001#30#abc')])).toEqual([key('0001#30#abc')]);
  expect(uncovered([key('0001#30#abc'), key('0001#30#abcdef')])).toEqual([key('0001#30#abc')]);
});

it('keeps keys that reach different items: other digests, or the same prefix in another partition', () => {
  const two = [key('0001#30#abc'), key('0001#30#abd')];
  expect(uncovered(two)).toEqual(two);
  const apart = [key('0001#30#abc'), key('0001#30#abc', 'EVIDENCE_SPOOL#4')];
  expect(uncovered(apart)).toEqual(apart);
});

it('keeps a prefix that reaches several keys given before it, in the order given', () => {
  expect(uncovered([key('0001#30#abd'), key('0001#30#abc'), key('0001#30#ab')])).toEqual([key('0001#30#ab')]);
  const order = [key('0001#30#b'), key('0001#30#a')];
  expect(uncovered(order)).toEqual(order);
});

it('keeps each of many distinct keys once, even when the very same key is given twice', () => {
  const many = Array.from({ length: 1_000 }, (_, i) => key(`0001#30#${i.toString(16).padStart(8, '0')}`));
  expect(uncovered([...many, ...many])).toEqual(many);
});
