/**
 * What a replay of quarantined records promises and what its audit says (functions/operator/replay.ts), on DynamoDB
 * Local with the real ingest handler: the preview runs a corrected value, and a stored value of a type or channel
 * still unknown, through the decoder ingest runs; a replay of several records is audited with each record's result.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  apply,
  type IngestInvoker,
  listAudit,
  listQuarantine,
  type OperatorPorts,
  preview,
  replayQuarantine,
} from '../../functions/operator/index.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { localIngest } from '../../tools/ops/local-ingest.ts';
import { transferEvent } from '../support/events.ts';
import { type LocalTable, newLocalTable } from '../support/local-table.ts';
import { ALICE, operatorOn } from '../support/operator.ts';

let table: LocalTable;
let ingest: IngestInvoker;
const TOPIC = 'ops.test';
const record = (offset: number, value: string | object) => mskEvent([{ topic: TOPIC, partition: 0, offset, value }]);

beforeAll(async () => {
  table = await newLocalTable(inject('dynamoEndpoint'));
  ingest = await localIngest(table.endpoint, table.tableName);
});

const ports = (extra: Partial<OperatorPorts> = {}): OperatorPorts => ({
  ...operatorOn(table, { invokeIngest: ingest }),
  ...extra,
});

describe('replay: the preview asks the decoder, the audit says what happened', () => {
  it('the preview runs a corrected value, and a stored value of a type or channel still unknown, through the decoder: WOULD_QUARANTINE, nothing fed to ingest', async () => {
    await ingest(record(16, transferEvent({ eventId: 'ops-still', channels: ['EMAIL'], data: { amount: 2.5 } })));
    await ingest(record(17, { ...transferEvent({ eventId: 'ops-no-type', channels: ['EMAIL'] }), type: 'NoSuchType' }));
    expect((await listQuarantine(ports())).find((q) => q.id === `${TOPIC}#0#17`)?.reason).toBe('UNKNOWN_TYPE');
    let fed = 0;
    const counting = ports({
      invokeIngest: async (e) => {
        fed++;
        return ingest(e);
      },
    });
    const stillBad = JSON.stringify(
      transferEvent({ eventId: 'ops-still', channels: ['EMAIL'], data: { amount: 3.5 } }),
    );
    expect(await preview(replayQuarantine, counting, { ids: [`${TOPIC}#0#16`], corrected: stillBad })).toEqual({
      ok: false,
      refusal: {
        code: 'WOULD_QUARANTINE',
        message: expect.stringMatching(
          /^ops\.test#0#16: the corrected value would be quarantined again \(INVALID_AMOUNT: .+\): correct it/,
        ),
      },
    });
    const unknownType = JSON.stringify({ ...transferEvent({ eventId: 'ops-still', channels: ['EMAIL'] }), type: 'X' });
    expect(await preview(replayQuarantine, counting, { ids: [`${TOPIC}#0#16`], corrected: unknownType })).toMatchObject(
      { ok: false, refusal: { code: 'WOULD_QUARANTINE', message: expect.stringContaining('(UNKNOWN_TYPE: ') } },
    );
    // The type is still not in the catalogue: replaying the stored value would only quarantine it again.
    expect(await preview(replayQuarantine, counting, { ids: [`${TOPIC}#0#17`] })).toMatchObject({
      ok: false,
      refusal: {
        code: 'WOULD_QUARANTINE',
        message: expect.stringMatching(/^ops\.test#0#17 was quarantined for UNKNOWN_TYPE, .*\(UNKNOWN_TYPE: /),
      },
    });
    // Confirmed anyway: the same rule refuses it before ingest.
    await expect(
      apply(replayQuarantine, counting, { ids: [`${TOPIC}#0#16`], corrected: stillBad }, ALICE),
    ).rejects.toThrow(/the corrected value would be quarantined again \(INVALID_AMOUNT/);
    expect(fed).toBe(0);
    const corrected = JSON.stringify(
      transferEvent({ eventId: 'ops-still', channels: ['EMAIL'], data: { amount: '3' } }),
    );
    expect((await preview(replayQuarantine, counting, { ids: [`${TOPIC}#0#16`], corrected })).ok).toBe(true);
  });

  it('a copy from the other region not taken here is never replayed, as stored or corrected: TAKEN_ELSEWHERE in the preview, refused and audited on confirm, nothing fed to ingest', async () => {
    const event = transferEvent({ eventId: 'ops-copied', channels: ['EMAIL'] });
    await ingest(record(40, 'not json at all'));
    // As ingest quarantines a record MSK Replicator copied from the other cluster (its bytes decode fine).
    await table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: `QUARANTINE#${TOPIC}#0#40`, sk: 'RECORD' },
        UpdateExpression: 'SET #raw = :raw, reason = :reason, eventId = :id',
        ExpressionAttributeNames: { '#raw': 'raw' },
        ExpressionAttributeValues: {
          ':raw': Buffer.from(JSON.stringify(event)).toString('base64'),
          ':reason': 'REPLICATED_NOT_TAKEN',
          ':id': 'ops-copied',
        },
      }),
    );
    let fed = 0;
    const counting = ports({
      invokeIngest: async (e) => {
        fed++;
        return ingest(e);
      },
    });
    const id = `${TOPIC}#0#40`;
    for (const request of [{ ids: [id] }, { ids: [id], corrected: JSON.stringify(event) }]) {
      expect(await preview(replayQuarantine, counting, request)).toEqual({
        ok: false,
        refusal: {
          code: 'TAKEN_ELSEWHERE',
          message: expect.stringMatching(/the other region takes this record from its own cluster; .*send it twice/),
        },
      });
    }
    await expect(apply(replayQuarantine, counting, { ids: [id] }, ALICE)).rejects.toThrow(/could send it twice/);
    expect(fed).toBe(0);
    const audit = (await listAudit(counting)).find((r) => r.action === 'REPLAY' && r.target === id);
    expect(audit?.outcome).toMatchObject({ result: 'REFUSED', details: { code: 'TAKEN_ELSEWHERE' } });
  });

  it('a replay of several records, some accepted and some quarantined again, is audited DONE with each result and the counts; none accepted is REFUSED', async () => {
    // Quarantined for a fault on our side (which a replay cures), one readable now and one not.
    const requarantine = async (offset: number, raw: string, eventId?: string) => {
      await ingest(record(offset, 'not json at all'));
      await table.doc.send(
        new UpdateCommand({
          TableName: table.tableName,
          Key: { pk: `QUARANTINE#${TOPIC}#0#${offset}`, sk: 'RECORD' },
          UpdateExpression: `SET #raw = :raw, reason = :reason${eventId === undefined ? '' : ', eventId = :id'}`,
          ExpressionAttributeNames: { '#raw': 'raw' },
          ExpressionAttributeValues: {
            ':raw': Buffer.from(raw).toString('base64'),
            ':reason': 'UNPROCESSABLE',
            ...(eventId === undefined ? {} : { ':id': eventId }),
          },
        }),
      );
    };
    await requarantine(18, JSON.stringify(transferEvent({ eventId: 'ops-mixed', channels: ['EMAIL'] })), 'ops-mixed');
    await requarantine(19, 'still not json');
    await requarantine(22, 'not json either');
    const on = ports();
    const results = await apply(replayQuarantine, on, { ids: [`${TOPIC}#0#18`, `${TOPIC}#0#19`] }, ALICE);
    expect(results).toEqual([
      { id: `${TOPIC}#0#18`, outcome: 'ACCEPTED', eventId: 'ops-mixed' },
      {
        id: `${TOPIC}#0#19`,
        outcome: 'STILL_QUARANTINED',
        eventId: null,
        why: expect.stringMatching(/^INVALID_JSON: /),
      },
    ]);
    expect((await table.eventItems('ops-mixed')).find((i) => i.sk === 'NOTIFICATION#EMAIL')?.status).toBe('PENDING');
    const audited = (target: string) => listAudit(on).then((l) => l.find((r) => r.target === target));
    const mixed = await audited(`${TOPIC}#0#18,${TOPIC}#0#19`);
    expect(mixed?.outcome?.result).toBe('DONE');
    expect(mixed?.outcome?.details).toEqual({
      results,
      accepted: 1,
      duplicates: 0,
      stillQuarantined: [`${TOPIC}#0#19`],
    });
    // Nothing admitted: REFUSED, with the reason.
    const [alone] = await apply(replayQuarantine, on, { ids: [`${TOPIC}#0#22`] }, ALICE);
    expect(alone?.outcome).toBe('STILL_QUARANTINED');
    expect((await audited(`${TOPIC}#0#22`))?.outcome).toMatchObject({
      result: 'REFUSED',
      details: {
        code: 'STILL_QUARANTINED',
        message: expect.stringMatching(/^replayed, and ingest quarantined it again: ops\.test#0#22 \(INVALID_JSON: /),
        accepted: 0,
        stillQuarantined: [`${TOPIC}#0#22`],
      },
    });
  });
});
