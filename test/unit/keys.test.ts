/** Every key and id has one builder and its inverse (functions/domain/keys.ts): what is built is read back the same. */
import { describe, expect, it } from 'vitest';
import {
  eventIdOfPk,
  eventPk,
  notificationIdOf,
  notificationKey,
  notificationOfKey,
  parseNotificationId,
  parseQuarantineId,
  quarantineId,
  quarantinePk,
  shardOfSweepPartition,
  sweepKey,
  sweepPartition,
} from '../../functions/domain/keys.ts';

describe('keys: built and parsed in one place', () => {
  it('a notification id and key read back as the (eventId, channel) they were built from', () => {
    const id = notificationIdOf('trf-2026:0001.a', 'PUSH');
    expect(id).toBe('trf-2026:0001.a#PUSH');
    expect(parseNotificationId(id)).toEqual({ eventId: 'trf-2026:0001.a', channel: 'PUSH' });
    expect(notificationKey('trf-1', 'SMS')).toEqual({ pk: 'EVENT#trf-1', sk: 'NOTIFICATION#SMS' });
    expect(notificationOfKey(notificationKey('trf-1', 'SMS'))).toEqual({ eventId: 'trf-1', channel: 'SMS' });
    expect(eventIdOfPk(eventPk('trf-1'))).toBe('trf-1');
  });

  it('refuses what is not of its form', () => {
    for (const id of ['', '#EMAIL', 'trf-1', 'trf-1#', 'trf-1#email', 'trf-1#FAX', 'trf-1#EMAIL ']) {
      expect(parseNotificationId(id)).toBeUndefined();
    }
    expect(notificationOfKey({ pk: 'EVENT#trf-1', sk: 'INBOX' })).toBeUndefined();
    expect(notificationOfKey({ pk: 'QUARANTINE#t#0#1', sk: 'NOTIFICATION#EMAIL' })).toBeUndefined();
    expect(eventIdOfPk('PREFS#u-1')).toBeUndefined();
    expect(parseQuarantineId('topic#x#1')).toBeUndefined();
  });

  it('a quarantine id reads back as its record, with or without the QUARANTINE# prefix, a # in the topic kept', () => {
    const source = { topic: 'banking#transfers', partition: 3, offset: 1207 };
    expect(parseQuarantineId(quarantineId(source))).toEqual(source);
    expect(parseQuarantineId(quarantinePk(source))).toEqual(source);
  });

  it("a sweep key's shard reads back from its partition", () => {
    expect(
      shardOfSweepPartition(sweepPartition({ state: 'SENDING', channel: 'EMAIL', noticeClass: 'normal', shard: 63 })),
    ).toBe(63);
    expect(
      shardOfSweepPartition(sweepPartition({ state: 'PENDING', channel: 'PUSH', noticeClass: 'critical', shard: 5 })),
    ).toBe(5);
    const shard = shardOfSweepPartition(sweepKey('PENDING', 'SMS', 'trf-1#SMS', 64));
    expect(shard).toBeGreaterThanOrEqual(0);
    expect(shard).toBeLessThan(64);
    expect(shardOfSweepPartition('RATE#EMAIL#3')).toBeUndefined();
  });

  it('a PENDING key carries a critical or bulk class; normal keeps the key items had before classes, SENDING none', () => {
    const id = 'trf-1#EMAIL';
    const normal = sweepKey('PENDING', 'EMAIL', id, 8);
    expect(normal).toMatch(/^PENDING#EMAIL#\d$/);
    expect(sweepKey('PENDING', 'EMAIL', id, 8, 'normal')).toBe(normal);
    expect(sweepKey('PENDING', 'EMAIL', id, 8, 'critical')).toBe(normal.replace('EMAIL#', 'EMAIL#critical#'));
    expect(sweepKey('PENDING', 'EMAIL', id, 8, 'bulk')).toBe(normal.replace('EMAIL#', 'EMAIL#bulk#'));
    // The sweeper resolves every expired lease: a SENDING key never carries a class, whatever the caller passes.
    expect(sweepKey('SENDING', 'EMAIL', id, 8, 'critical')).toBe(sweepKey('SENDING', 'EMAIL', id, 8));
  });
});
