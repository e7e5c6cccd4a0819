/**
 * `ops quarantine`'s closing suggestion: a replay of the kept bytes as they are is offered only for the records it can
 * cure (something changed on our side); the others would land in quarantine again, and the list says what they need.
 */
import { describe, expect, it } from 'vitest';
import type { QuarantineView } from '../../functions/operator/index.ts';
import { quarantineText } from '../../tools/ops/text/lists.ts';

const record = (offset: number, reason: string): QuarantineView => ({
  id: `banking.transfers#0#${offset}`,
  reason,
  detail: 'd',
  eventId: `e-${offset}`,
  receivedAt: '2026-12-05T10:00:00.000Z',
  source: { topic: 'banking.transfers', partition: 0, offset },
  rawTruncated: false,
  replayedAt: null,
  producer: null,
});

describe('the quarantine list', () => {
  it('suggests a replay as is only of the reasons a replay can cure, and says what the others need', () => {
    const text = quarantineText([
      record(1, 'UNKNOWN_TYPE'),
      record(2, 'INVALID_JSON'),
      record(3, 'EVENT_ID_CONFLICT'),
      record(4, 'UNPROCESSABLE'),
    ]);
    expect(text).toContain('replay-quarantine banking.transfers#0#1 banking.transfers#0#4 --reason');
    expect(text).not.toMatch(/replay-quarantine [^\n]*#0#2/);
    expect(text).toContain('2 records would land here again if replayed as they are (INVALID_JSON, EVENT_ID_CONFLICT)');
  });
});
