/**
 * Records as real producers' serializers write them, read by the real decoder (ingestBatch → wire-records → codec →
 * the one JSON decoder): @kafkajs/confluent-schema-registry (Avro, and Protobuf without message indexes), Confluent's
 * framing with message indexes, AWS Glue's serde framing (a message index over the file's sorted messages), on the
 * docs/wire/ schemas and on schemas producers evolved compatibly. Whatever the format, a record ends as its JSON twin
 * does: accepted with the same payloadHash, or refused for the same reason.
 */
import { readFileSync } from 'node:fs';
import { SchemaRegistry as KafkajsRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRecordValue } from '../../functions/domain/event/decode.ts';
import { confluentRecord, glueRecord, type SchemaRef } from '../../functions/domain/event/wire-format.ts';
import { ingestBatch } from '../../functions/ingest/ingest-batch.ts';
import {
  MAX_SCHEMAS_ASKED_PER_BATCH,
  NOT_FOUND_RETRY_MS,
  REGISTRY_CONCURRENCY,
  REGISTRY_TIMEOUT_MS,
  type RegistrySchema,
  SchemaCache,
  type SchemaRegistry,
} from '../../functions/ingest/schema-registry.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { type LocalSchemaRegistry, serveSchemas } from '../../tools/local/schema-registry.ts';
import { WIRE_DIR } from '../../tools/scripts/wire-schemas.ts';
import { transferEvent } from '../support/events.ts';
import { MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';

const wireFile = (name: string) => readFileSync(`${WIRE_DIR}/${name}`, 'utf8');
const AVSC = JSON.parse(wireFile('TransferCompleted.avsc')) as { fields: object[] };
const PROTO = wireFile('TransferCompleted.proto');

/** The producer's schema, evolved compatibly: an optional nanosecond timestamp notifier does not read. */
const AVSC_WITH_NANOS = JSON.stringify({
  ...AVSC,
  fields: [...AVSC.fields, { name: 'publishedAtNanos', type: ['null', 'long'], default: null }],
});
/** The producer's .proto, evolved compatibly with Google's well-known types. */
const PROTO_WITH_WKT = PROTO.replace(
  'package notifier.events;',
  'package notifier.events;\n\nimport "google/protobuf/timestamp.proto";\nimport "google/protobuf/wrappers.proto";',
).replace(
  '  ChannelsList channels = 6;\n}',
  '  ChannelsList channels = 6;\n  google.protobuf.Timestamp publishedAt = 7;\n  google.protobuf.Int64Value sequence = 8;\n}',
);

const SCHEMAS = new Map<number, { schemaType: string; schema: string }>([
  [101, { schemaType: 'AVRO', schema: JSON.stringify(AVSC) }],
  [102, { schemaType: 'AVRO', schema: AVSC_WITH_NANOS }],
  [103, { schemaType: 'PROTOBUF', schema: PROTO }],
]);

/** The records' registry, as ingest sees it: the same schemas by id. */
class MapRegistry implements SchemaRegistry {
  readonly kind: SchemaRef['registry'];
  calls = 0;
  constructor(
    private readonly schemas: ReadonlyMap<string, RegistrySchema>,
    kind: SchemaRef['registry'] = 'confluent',
  ) {
    this.kind = kind;
  }
  async schema(ref: SchemaRef): Promise<RegistrySchema | undefined> {
    this.calls++;
    return this.schemas.get(String(ref.id));
  }
}
const confluentSchemas = (extra: Record<string, RegistrySchema> = {}) =>
  new MapRegistry(
    new Map([
      ...[...SCHEMAS].map(([id, s]) => [String(id), { format: s.schemaType, definition: s.schema }] as const),
      ...Object.entries(extra),
    ]) as ReadonlyMap<string, RegistrySchema>,
  );

const noWait = { sleep: async () => {} };

async function ingestOne(value: Buffer, registry: SchemaRegistry = confluentSchemas()) {
  const store = new MemoryInboxStore();
  const summary = await ingestBatch(mskEvent([{ topic: 't', partition: 0, offset: 1, value }]), {
    ...memoryBatchDeps(store),
    schemas: new SchemaCache(registry, noWait),
  });
  return {
    result: summary.results[0],
    quarantine: store.quarantined('t', 0, 1),
    hash: store.ofKind('INBOX')[0]?.payloadHash,
  };
}

/** The JSON producer's twin of an event: what the wire record must end as. */
const jsonTwin = (event: object) => decodeRecordValue(Buffer.from(JSON.stringify(event)).toString('base64'), 65_536);

/** A copy of `bytes` with the first occurrence of `from` replaced by `to` (same length). */
function patched(bytes: Buffer, from: string, to: Buffer): Buffer {
  const at = bytes.indexOf(Buffer.from(from, 'utf8'));
  if (at < 0) throw new Error(`${from} not in the record`);
  return Buffer.concat([bytes.subarray(0, at), to, bytes.subarray(at + to.length)]);
}

const BIG = 2n ** 60n + 1n;
const bigLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(n));
    return buf;
  },
  fromJSON: BigInt,
  toJSON: Number,
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

let http: LocalSchemaRegistry;
let kafkajs: KafkajsRegistry;
beforeAll(async () => {
  http = await serveSchemas(SCHEMAS);
  kafkajs = new KafkajsRegistry(
    { host: http.url },
    {
      [SchemaType.AVRO]: {
        typeHook: (s: unknown) => ((s as { type?: unknown })?.type === 'long' || s === 'long' ? bigLong : undefined),
      },
    },
  );
});
afterAll(() => http.stop());

const event = transferEvent({ eventId: 'wire-prod-1', recipient: { userId: 'u-4x' } });

describe('strings that are not UTF-8 are refused alike in JSON, Avro and Protobuf', () => {
  it('Avro (kafkajs): a customer id with a byte that is not UTF-8 is refused, never read as U+FFFD', async () => {
    const bad = patched(await kafkajs.encode(101, event), 'u-4x', Buffer.from('u-4\xff', 'latin1'));
    const { result, quarantine } = await ingestOne(bad);
    expect(result?.kind).toBe('quarantined');
    expect(quarantine?.reason).toBe('INVALID_ENCODING');
    expect(quarantine?.detail).toContain('UTF-8');
    // The same bytes as JSON and as Protobuf: refused for the same reason.
    const json = patched(Buffer.from(JSON.stringify(event)), 'u-4x', Buffer.from('u-4\xff', 'latin1'));
    expect((await ingestOne(json)).quarantine?.reason).toBe('INVALID_ENCODING');
    const proto = patched(await kafkajs.encode(103, event), 'u-4x', Buffer.from('u-4\xff', 'latin1'));
    expect((await ingestOne(proto)).quarantine?.reason).toBe('INVALID_ENCODING');
  });

  it('Avro: also in display text and in a map key nobody reads, as JSON refuses bad bytes anywhere', async () => {
    const counterparty = patched(await kafkajs.encode(101, event), 'Taro', Buffer.from('Ta\xc3\x28', 'latin1'));
    expect((await ingestOne(counterparty)).quarantine?.reason).toBe('INVALID_ENCODING');
    const withMap = JSON.stringify({
      ...AVSC,
      fields: [...AVSC.fields, { name: 'tags', type: { type: 'map', values: 'string' }, default: {} }],
    });
    const payload = avro.Type.forSchema(JSON.parse(withMap)).toBuffer({ ...withNulls(event), tags: { zz: 'v' } });
    const registry = confluentSchemas({ '104': { format: 'AVRO', definition: withMap } });
    const bad = patched(confluentRecord(104, 'AVRO', payload), 'zz', Buffer.from([0xc0, 0xaf]));
    expect((await ingestOne(bad, registry)).quarantine?.reason).toBe('INVALID_ENCODING');
    expect((await ingestOne(confluentRecord(104, 'AVRO', payload), registry)).result?.kind).toBe('accepted');
  });

  it('Avro: a leading U+FEFF is part of the id (refused as a format character), not eaten as a byte-order mark', async () => {
    const bom = patched(await kafkajs.encode(101, event), 'u-4x', Buffer.from('\ufeffu', 'utf8'));
    const { quarantine } = await ingestOne(bom);
    expect(quarantine?.reason).toBe('SCHEMA_VIOLATION');
    expect(quarantine?.detail).toContain('recipient.userId');
  });

  it('Avro: a map that names a key twice is refused, as a JSON object that does', async () => {
    const withMap = JSON.stringify({
      ...AVSC,
      fields: [...AVSC.fields, { name: 'tags', type: { type: 'map', values: 'string' }, default: {} }],
    });
    const payload = avro.Type.forSchema(JSON.parse(withMap)).toBuffer({
      ...withNulls(event),
      tags: { aa: '1', ab: '2' },
    });
    const registry = confluentSchemas({ '104': { format: 'AVRO', definition: withMap } });
    const twice = patched(confluentRecord(104, 'AVRO', payload), 'ab', Buffer.from('aa'));
    const { quarantine } = await ingestOne(twice, registry);
    expect(quarantine?.reason).toBe('INVALID_JSON');
    expect(quarantine?.detail).toContain('tags');
  });

  it('Avro: a block that claims more items than bytes are left is refused at once, not looped over', async () => {
    const withList = JSON.stringify({
      ...AVSC,
      fields: [...AVSC.fields, { name: 'marks', type: { type: 'array', items: 'null' }, default: [] }],
    });
    const registry = confluentSchemas({ '105': { format: 'AVRO', definition: withList } });
    const payload = avro.Type.forSchema(JSON.parse(withList)).toBuffer({ ...withNulls(event), marks: [] });
    // The empty list's end (0x00) replaced by a block of 2^31 - 1 items, then its end.
    const claim = Buffer.concat([payload.subarray(0, -1), Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00])]);
    const { quarantine } = await ingestOne(confluentRecord(105, 'AVRO', claim), registry);
    expect(quarantine?.reason).toBe('INVALID_ENCODING');
    expect(quarantine?.detail).toContain('more than the bytes left');
  });

  it('Protobuf proto2: a string is checked for UTF-8 too (proto2 leaves it unchecked)', async () => {
    const proto2 =
      'syntax = "proto2";\npackage p;\nmessage E { optional string eventId = 1; optional string type = 2; }';
    const registry = confluentSchemas({ '106': { format: 'PROTOBUF', definition: proto2 } });
    const E = protobuf.parse(proto2).root.lookupType('p.E');
    const payload = Buffer.from(E.encode({ eventId: 'e-1', type: 'Tx' }).finish());
    const bad = patched(confluentRecord(106, 'PROTOBUF', payload), 'Tx', Buffer.from([0x54, 0xff]));
    const { quarantine } = await ingestOne(bad, registry);
    expect(quarantine?.reason).toBe('INVALID_ENCODING');
  });
});

describe('a field notifier does not read never refuses an event; one it reads is exact or refused', () => {
  it('Avro (kafkajs): an added optional long beyond 2^53 (a nanosecond timestamp) is ignored, the hash is the JSON one', async () => {
    const value = await kafkajs.encode(102, { ...withNulls(event), publishedAtNanos: BIG });
    const { result, hash } = await ingestOne(value);
    expect(result?.kind).toBe('accepted');
    const twin = jsonTwin(event);
    expect(twin.ok && hash).toBe(twin.ok && twin.payloadHash);
  });

  it('Avro: a long in a field it reads is read with every digit, and refused as its exact JSON twin is', async () => {
    const longId = JSON.stringify({
      ...AVSC,
      fields: AVSC.fields.map((f) =>
        (f as { name: string }).name === 'eventId' ? { name: 'eventId', type: 'long' } : f,
      ),
    });
    const registry = confluentSchemas({ '107': { format: 'AVRO', definition: longId } });
    const type = avro.Type.forSchema(JSON.parse(longId), { typeHook: (s) => (s === 'long' ? bigLong : undefined) });
    const payload = type.toBuffer({ ...withNulls(event), eventId: BIG });
    const { quarantine } = await ingestOne(confluentRecord(107, 'AVRO', payload), registry);
    // The JSON twin with the exact digits: refused for the same reason (an eventId is text).
    const twin = decodeRecordValue(
      Buffer.from(JSON.stringify(event).replace('"wire-prod-1"', BIG.toString())).toString('base64'),
      65_536,
    );
    expect(twin.ok).toBe(false);
    expect(quarantine?.reason).toBe(twin.ok ? 'none' : twin.rejection.reason);
  });

  it('Protobuf: an added int64 and a NaN double nobody reads are ignored; the hash is the JSON one', async () => {
    const evolved = PROTO.replace(
      '  ChannelsList channels = 6;\n}',
      '  ChannelsList channels = 6;\n  int64 nanos = 7;\n  double ratio = 8;\n}',
    );
    const registry = confluentSchemas({ '108': { format: 'PROTOBUF', definition: evolved } });
    const T = protobuf.parse(evolved, { keepCase: true }).root.lookupType('notifier.events.TransferCompleted');
    const object = T.fromObject({ ...withNulls(event), channels: undefined, nanos: BIG.toString(), ratio: Number.NaN });
    const { result, hash } = await ingestOne(
      confluentRecord(108, 'PROTOBUF', Buffer.from(T.encode(object).finish())),
      registry,
    );
    expect(result?.kind).toBe('accepted');
    const twin = jsonTwin(event);
    expect(twin.ok && hash).toBe(twin.ok && twin.payloadHash);
  });
});

describe('an Avro union is read as the branch its bytes name', () => {
  const CARD = JSON.parse(wireFile('CardPayment.avsc')) as object;

  it('a topic schema that is a union of the types’ records (several types on one topic): each record its own event', async () => {
    // What a producer registers to put several event types on one topic without references: one reading per record,
    // the branch index in its bytes. avsc alone hands back {"notifier.events.TransferCompleted": {…}}.
    const union = JSON.stringify([AVSC, CARD]);
    const registry = confluentSchemas({ '109': { format: 'AVRO', definition: union } });
    const payload = avro.Type.forSchema(JSON.parse(union)).toBuffer({
      'notifier.events.TransferCompleted': withNulls(event),
    });
    const { result, hash } = await ingestOne(confluentRecord(109, 'AVRO', payload), registry);
    expect(result?.kind).toBe('accepted');
    const twin = jsonTwin(event);
    expect(twin.ok && hash).toBe(twin.ok && twin.payloadHash);
  });

  it('a field read as a union whose branches JavaScript cannot tell apart (a string or an enum) is its value', async () => {
    const evolved = JSON.stringify({
      ...AVSC,
      fields: AVSC.fields.map((f) =>
        (f as { name: string }).name === 'type'
          ? { name: 'type', type: ['string', { type: 'enum', name: 'Kind', symbols: ['TransferCompleted'] }] }
          : f,
      ),
    });
    const registry = confluentSchemas({ '110': { format: 'AVRO', definition: evolved } });
    const payload = avro.Type.forSchema(JSON.parse(evolved)).toBuffer({
      ...withNulls(event),
      type: { 'notifier.events.Kind': 'TransferCompleted' },
    });
    const { result, hash } = await ingestOne(confluentRecord(110, 'AVRO', payload), registry);
    expect(result?.kind).toBe('accepted');
    const twin = jsonTwin(event);
    expect(twin.ok && hash).toBe(twin.ok && twin.payloadHash);
  });
});

describe("a .proto that imports Google's well-known types is read", () => {
  const common = (root: protobuf.Root, ...files: string[]) => {
    for (const f of files)
      root.addJSON((protobuf.common as unknown as Record<string, protobuf.INamespace>)[f]?.nested ?? {});
    return root;
  };

  it('an evolved schema with a Timestamp and a wrapper it does not read: accepted, the hash is the JSON one', async () => {
    const root = common(new protobuf.Root(), 'google/protobuf/timestamp.proto', 'google/protobuf/wrappers.proto');
    const T = protobuf
      .parse(PROTO_WITH_WKT, root, { keepCase: true })
      .root.lookupType('notifier.events.TransferCompleted');
    const object = T.fromObject({
      ...withNulls(event),
      publishedAt: { seconds: 1_796_029_200, nanos: 5 },
      sequence: { value: BIG.toString() },
    });
    const registry = confluentSchemas({ '109': { format: 'PROTOBUF', definition: PROTO_WITH_WKT } });
    const { result, hash } = await ingestOne(
      confluentRecord(109, 'PROTOBUF', Buffer.from(T.encode(object).finish())),
      registry,
    );
    expect(result?.kind).toBe('accepted');
    const twin = jsonTwin(event);
    expect(twin.ok && hash).toBe(twin.ok && twin.payloadHash);
  });

  it('fields it reads written as well-known types are read as their JSON mapping: a Timestamp an instant, a StringValue its text', async () => {
    const own = `syntax = "proto3";
package bank;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
message Transfer {
  message Recipient { string userId = 1; google.protobuf.StringValue email = 2; google.protobuf.StringValue locale = 3; }
  message Data { string transferId = 1; string amount = 2; string currency = 3; }
  string eventId = 1;
  string type = 2;
  google.protobuf.Timestamp occurredAt = 3;
  Recipient recipient = 4;
  Data data = 5;
}`;
    const root = common(new protobuf.Root(), 'google/protobuf/timestamp.proto', 'google/protobuf/wrappers.proto');
    const T = protobuf.parse(own, root, { keepCase: true }).root.lookupType('bank.Transfer');
    const at = Date.parse('2026-11-30T09:15:00Z') / 1000;
    const message = T.fromObject({
      eventId: 'wkt-1',
      type: 'TransferCompleted',
      occurredAt: { seconds: at, nanos: 123_456_789 },
      recipient: { userId: 'u-7', email: { value: 'hanako@example.com' }, locale: { value: 'ja' } },
      data: { transferId: 't-1', amount: '10000', currency: 'JPY' },
    });
    const registry = confluentSchemas({ '110': { format: 'PROTOBUF', definition: own } });
    const { result, hash } = await ingestOne(
      confluentRecord(110, 'PROTOBUF', Buffer.from(T.encode(message).finish())),
      registry,
    );
    expect(result).toMatchObject({ kind: 'accepted', channels: ['EMAIL'] });
    const twin = jsonTwin({
      eventId: 'wkt-1',
      type: 'TransferCompleted',
      occurredAt: '2026-11-30T09:15:00.123456789Z',
      recipient: { userId: 'u-7', email: 'hanako@example.com', locale: 'ja' },
      data: { transferId: 't-1', amount: '10000', currency: 'JPY' },
    });
    expect(twin.ok && hash).toBe(twin.ok && twin.payloadHash);
  });

  it('custom options declared on descriptor.proto compile; an import notifier does not have is named in the detail', async () => {
    const annotated = `syntax = "proto3";
package bank;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { bool pii = 50001; }
message E { string eventId = 1 [(pii) = true]; }`;
    const registry = confluentSchemas({
      '111': { format: 'PROTOBUF', definition: annotated },
      '112': {
        format: 'PROTOBUF',
        definition: 'syntax = "proto3";\nimport "acme/money.proto";\nmessage E { acme.Money m = 1; }',
      },
    });
    const ok = await ingestOne(confluentRecord(111, 'PROTOBUF', Buffer.from([0x0a, 1, 0x41])), registry);
    expect(ok.quarantine?.reason).toBe('SCHEMA_VIOLATION'); // read: only the event is incomplete
    const missing = await ingestOne(confluentRecord(112, 'PROTOBUF', Buffer.from([])), registry);
    expect(missing.quarantine?.reason).toBe('UNKNOWN_SCHEMA');
    expect(missing.quarantine?.detail).toContain('acme/money.proto');
  });
});

describe('Confluent Protobuf with and without message indexes', () => {
  it('kafkajs writes no message indexes: the one reading is taken, the hash is the JSON one, and it is counted', async () => {
    const value = await kafkajs.encode(103, event);
    expect(value[5]).not.toBe(0); // the message itself, no index
    const { result, hash } = await ingestOne(value);
    expect(result).toMatchObject({
      kind: 'accepted',
      normalised: expect.arrayContaining(['<confluent message indexes>']),
    });
    const twin = jsonTwin(event);
    expect(twin.ok && hash).toBe(twin.ok && twin.payloadHash);
  });

  it('with the index [0] as Confluent writes it, and a path to another message', async () => {
    const value = await kafkajs.encode(103, event);
    expect((await ingestOne(confluentRecord(103, 'PROTOBUF', value.subarray(5)))).result?.kind).toBe('accepted');
    const two = `syntax = "proto3";\npackage p;\nmessage Other { int32 n = 1; }\n${PROTO.slice(PROTO.indexOf('// TransferCompleted'))}`;
    const registry = confluentSchemas({ '113': { format: 'PROTOBUF', definition: two } });
    // Message indexes [1]: count 1, index 1, zig-zag encoded.
    const record = Buffer.concat([confluentRecord(113, 'AVRO', Buffer.from([2, 2])), value.subarray(5)]);
    expect((await ingestOne(record, registry)).result?.kind).toBe('accepted');
  });

  it('bytes with two readings (indexes and a message, or a message alone) are refused, saying the indexes are missing', async () => {
    const ambiguous = `syntax = "proto3";
package demo;
message Event { bytes mark = 1; }
message Other {}
message Deep { message L1 { message L2 { message L3 { message L4 {} } } } }`;
    const registry = confluentSchemas({ '114': { format: 'PROTOBUF', definition: ambiguous } });
    const served = await serveSchemas(new Map([[114, { schemaType: 'PROTOBUF', schema: ambiguous }]]));
    try {
      // As kafkajs writes Event {mark: 00 00 00 00}: 0a 04 00 00 00 00 — which also reads as the message indexes
      // [2, 0, 0, 0, 0] (Deep.L1.L2.L3.L4) and then an empty L4.
      const value = await new KafkajsRegistry({ host: served.url }).encode(114, { mark: Buffer.alloc(4) });
      expect(value.subarray(5).toString('hex')).toBe('0a0400000000');
      const { quarantine } = await ingestOne(value, registry);
      expect(quarantine?.reason).toBe('INVALID_ENCODING');
      expect(quarantine?.detail).toContain('reads two ways');
      expect(quarantine?.detail).toContain('message indexes');
      expect(quarantine?.detail).toContain('0x00');
    } finally {
      await served.stop();
    }
  });

  it('a payload no reading decodes says what was tried, not only "message index -9"', async () => {
    const value = await kafkajs.encode(103, event);
    const cut = value.subarray(0, value.length - 3);
    const { quarantine } = await ingestOne(cut);
    expect(quarantine?.reason).toBe('INVALID_ENCODING');
    expect(quarantine?.detail).toContain('without message indexes');
  });
});

describe("Glue Protobuf, as AWS's serde writes it", () => {
  const glueId = '0f9c5b1e-1c5e-4a47-9f0e-2b7d1f1c0a11';
  const glue = (definition: string) => new MapRegistry(new Map([[glueId, { format: 'PROTOBUF', definition }]]), 'glue');

  it('the message index (an unsigned varint) before the message: read, the hash is the JSON one', async () => {
    const payload = (await kafkajs.encode(103, event)).subarray(5);
    // notifier.events.TransferCompleted sorts first among its file's messages (…, .ChannelsList, .Data, .Recipient).
    const { result, hash } = await ingestOne(
      glueRecord(glueId, Buffer.concat([Buffer.from([0]), payload])),
      glue(PROTO),
    );
    expect(result?.kind).toBe('accepted');
    const twin = jsonTwin(event);
    expect(twin.ok && hash).toBe(twin.ok && twin.payloadHash);
  });

  it("indexes the file's messages as AWS's own serde test does (ComplexNestingSyntax3.proto), and names map entries as protoc does", async () => {
    // From awslabs/aws-glue-schema-registry, serializer-deserializer/src/test/proto/ComplexNestingSyntax3.proto
    // (Apache-2.0), with the indexes its MessageIndexFinderTest expects.
    const nesting = `syntax = "proto3";
import "google/protobuf/timestamp.proto";
package com.amazonaws.services.schemaregistry.tests.protobuf.syntax3;
message A { string A = 1 [json_name="A_A"];
  message B { message C { message J { message K { } } message X { message L { } message D { message F { message M { K choice = 1; enum K { A = 0; L = 1; } } } message G { } } } } }
  message X { int32 D = 1; }
  message I { } }
message N { int32 A = 1; }
message O { message A { repeated google.protobuf.Timestamp B = 2; } }
enum P { ALPHA = 0; BETA = 1; }
service D { rpc A (A.B) returns (O.A) {} }`;
    const expected = [
      'A',
      'A.B',
      'A.B.C',
      'A.B.C.J',
      'A.B.C.J.K',
      'A.B.C.X',
      'A.B.C.X.D',
      'A.B.C.X.D.F',
      'A.B.C.X.D.F.M',
      'A.B.C.X.D.G',
      'A.B.C.X.L',
      'A.I',
      'A.X',
      'N',
      'O',
      'O.A',
    ];
    for (const [index, name] of expected.entries()) {
      // Each message decodes as itself: an empty payload after its index; one past the end names none.
      const { quarantine } = await ingestOne(glueRecord(glueId, Buffer.from([index])), glue(nesting));
      expect(quarantine?.detail ?? '', name).not.toContain('does not decode');
    }
    const past = await ingestOne(glueRecord(glueId, Buffer.from([expected.length])), glue(nesting));
    expect(past.quarantine?.detail).toContain(`names no message of the schema (it has ${expected.length})`);
    // A map field's entry takes its place in the order (foo_bar → FooBarEntry): index 1 is it, not message Z.
    const withMap =
      'syntax = "proto3";\npackage m;\nmessage A { map<string, string> foo_bar = 1; }\nmessage Z { string eventId = 1; }';
    const entry = await ingestOne(glueRecord(glueId, Buffer.from([1, 0x0a, 1, 0x41])), glue(withMap));
    expect(entry.quarantine?.detail).toContain('names the map entry m.A.FooBarEntry');
    const z = await ingestOne(glueRecord(glueId, Buffer.from([2, 0x0a, 1, 0x41])), glue(withMap));
    expect(z.quarantine?.reason).toBe('SCHEMA_VIOLATION'); // decoded as Z: only the event is incomplete
  });
});

describe('a registry node that has not yet read a new schema', () => {
  const flaky = (notFoundTimes: number) => {
    let asked = 0;
    const registry: SchemaRegistry & { asked: () => number } = {
      kind: 'confluent',
      asked: () => asked,
      schema: async () => {
        asked++;
        return asked <= notFoundTimes ? undefined : { format: 'AVRO', definition: JSON.stringify(AVSC) };
      },
    };
    return registry;
  };
  const run = async (schemas: SchemaCache, offset = 1) => {
    const store = new MemoryInboxStore();
    const value = await kafkajs.encode(101, { ...event, eventId: `wire-lag-${offset}` });
    const summary = await ingestBatch(mskEvent([{ topic: 't', partition: 0, offset, value }]), {
      ...memoryBatchDeps(store),
      schemas,
    });
    return { result: summary.results[0], quarantine: store.quarantined('t', 0, offset) };
  };

  it('is asked again, within a bounded wait, before the schema id is called unknown', async () => {
    const waits: number[] = [];
    const registry = flaky(2);
    const { result } = await run(new SchemaCache(registry, { sleep: async (ms) => void waits.push(ms) }));
    expect(result?.kind).toBe('accepted');
    expect(registry.asked()).toBe(3);
    expect(waits).toEqual([250, 500]);
  });

  it('still unknown after the bounded wait: quarantined with the reason; remembered for a minute, then asked again', async () => {
    const waits: number[] = [];
    let now = 1_000_000;
    const registry = flaky(Number.POSITIVE_INFINITY);
    const schemas = new SchemaCache(registry, { sleep: async (ms) => void waits.push(ms), now: () => now });
    const first = await run(schemas, 1);
    expect(first.quarantine?.reason).toBe('UNKNOWN_SCHEMA');
    expect(first.quarantine?.detail).toContain('asked 5 times over 3750 ms');
    expect(waits.reduce((a, b) => a + b, 0)).toBe(3750);
    expect(registry.asked()).toBe(5);
    // The next batch within the minute: quarantined at once, the registry not asked.
    now += 59_000;
    expect((await run(schemas, 2)).quarantine?.reason).toBe('UNKNOWN_SCHEMA');
    expect(registry.asked()).toBe(5);
    // After it: asked again.
    now += 2_000;
    await run(schemas, 3);
    expect(registry.asked()).toBe(10);
  });
});

describe('a batch that names many schema ids the registry does not have (a producer writing garbage after 0x00)', () => {
  /** A registry that has none of them, counting what it is asked and how much at once. */
  const empty = () => {
    const seen = { asked: 0, inFlight: 0, most: 0 };
    const registry: SchemaRegistry = {
      kind: 'confluent',
      schema: async () => {
        seen.asked++;
        seen.most = Math.max(seen.most, ++seen.inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        seen.inFlight--;
        return undefined;
      },
    };
    return { registry, seen };
  };
  const garbage = (count: number, firstId: number) =>
    Array.from({ length: count }, (_, i) => ({
      topic: 't',
      partition: 0,
      offset: i,
      value: confluentRecord(firstId + i, 'AVRO', Buffer.from([2, 0x41])),
    }));

  it('asks about a bounded number of them, a few at a time, and quarantines every record: the batch never fails', async () => {
    const { registry, seen } = empty();
    const store = new MemoryInboxStore();
    const records = garbage(2_000, 10_000);
    const summary = await ingestBatch(mskEvent(records), {
      ...memoryBatchDeps(store),
      schemas: new SchemaCache(registry, noWait),
    });
    expect(summary.failure).toBeUndefined();
    const reasons = records.map((r) => store.quarantined('t', 0, r.offset)?.reason);
    expect(new Set(reasons)).toEqual(new Set(['UNKNOWN_SCHEMA']));
    // Each id asked is asked five times (the bounded wait): so many ids at once would be thousands of requests.
    expect(seen.asked).toBeLessThanOrEqual(MAX_SCHEMAS_ASKED_PER_BATCH * (NOT_FOUND_RETRY_MS.length + 1));
    expect(seen.most).toBeLessThanOrEqual(REGISTRY_CONCURRENCY);
    expect(store.quarantined('t', 0, 1_999)?.detail).toContain('not asked');
  });

  it('the longest a batch can wait on the registry (every request answering "not found" as it times out) fits inside the ingest timeout', () => {
    const requests = MAX_SCHEMAS_ASKED_PER_BATCH * (NOT_FOUND_RETRY_MS.length + 1);
    const worst =
      Math.ceil(requests / REGISTRY_CONCURRENCY) * REGISTRY_TIMEOUT_MS + NOT_FOUND_RETRY_MS.reduce((a, b) => a + b, 0);
    // The ingest function has two minutes (lib/notifier-stack.ts) for this and the batch's own writes.
    expect(worst).toBeLessThanOrEqual(40_000);
  });

  it('what the container remembers of ids not found stays bounded, however many it is shown', async () => {
    const { registry } = empty();
    let now = 1_000_000;
    const schemas = new SchemaCache(registry, { ...noWait, now: () => now });
    for (let batch = 0; batch < 60; batch++) {
      await ingestBatch(mskEvent(garbage(MAX_SCHEMAS_ASKED_PER_BATCH, 100_000 + batch * 1_000)), {
        ...memoryBatchDeps(new MemoryInboxStore()),
        schemas,
      });
      now += 10_000;
    }
    // Six batches a minute: what is remembered is the last minute's, not all 60 batches' ids.
    expect(schemas.rememberedUnknown).toBeLessThanOrEqual(7 * MAX_SCHEMAS_ASKED_PER_BATCH);
  });
});

function withNulls(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value, (_, v) => (v === null ? undefined : v)));
}
