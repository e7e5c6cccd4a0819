/**
 * Events as schema-registry producers write them: the generated .avsc and .proto are what the generator writes from
 * the contract's JSON Schema; every example event encodes in both and decodes back to the same JSON and the same
 * payloadHash; a record that cannot be read is quarantined with a reason and its original bytes; a registry that
 * cannot answer fails the batch (redelivered), never a record; Protobuf field numbers never move.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadIngestConfig } from '../../functions/commons/config.ts';
import { EVENT_TYPES } from '../../functions/domain/catalogue.ts';
import { decodeRecordValue } from '../../functions/domain/event/decode.ts';
import {
  compileSchema,
  confluentRecord,
  encodeAvro,
  encodeProtobuf,
  glueRecord,
  readWireHeader,
  type SchemaRef,
  type WireFormat,
} from '../../functions/domain/event/wire-format.ts';
import { ingestBatch, reconciles } from '../../functions/ingest/ingest-batch.ts';
import {
  ConfluentSchemaRegistry,
  type RegistrySchema,
  SchemaCache,
  type SchemaRegistry,
  SchemaRegistryUnavailable,
  schemaRegistryFor,
} from '../../functions/ingest/schema-registry.ts';
import { schemasOnFirstUse } from '../../functions/ingest/wire-records.ts';
import { mskEvent } from '../../tools/local/msk.ts';
import { SCHEMA_FILE } from '../../tools/scripts/schema.ts';
import {
  EXAMPLE_AVRO,
  entryFor,
  exampleAvroLines,
  protoOf,
  WIRE_DIR,
  wireFilesOf,
} from '../../tools/scripts/wire-schemas.ts';
import { transferEvent } from '../support/events.ts';
import { MemoryInboxStore, memoryBatchDeps } from '../support/memory-inbox-store.ts';
import { storedHashOf } from '../support/secret-mac.ts';

const root = join(import.meta.dirname, '..', '..');
const wire = wireFilesOf([JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))]);
const fileOf = (name: string) => wire.files.get(name) as string;
const examples = ['events.jsonl', 'real-world.jsonl', 'catalogue.jsonl'].flatMap((f) =>
  readFileSync(join(root, 'examples', f), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { type: string; eventId: string }),
);

/** The folder as a registry, in memory: Confluent ids from registry.json. */
class FolderRegistry implements SchemaRegistry {
  readonly kind = 'confluent' as const;
  calls = 0;
  async schema(ref: SchemaRef): Promise<RegistrySchema | undefined> {
    this.calls++;
    const entry = wire.registry.find((e) => e.id === ref.id);
    return entry === undefined ? undefined : { format: entry.schemaType, definition: fileOf(entry.file) };
  }
}

const encode = (event: object, format: 'AVRO' | 'PROTOBUF'): Buffer => {
  const entry = entryFor(wire, (event as { type: string }).type, format);
  const payload = format === 'AVRO' ? encodeAvro(fileOf(entry.file), event) : encodeProtobuf(fileOf(entry.file), event);
  return confluentRecord(entry.id, format, payload);
};
const withoutNulls = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(withoutNulls)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, x]) => x !== null)
            .map(([k, x]) => [k, withoutNulls(x)]),
        )
      : v;

describe('the generated schemas', () => {
  it('are what the generator writes from docs/event.schema.json (npm run schema:wire)', () => {
    for (const [name, text] of wire.files) expect(readFileSync(join(WIRE_DIR, name), 'utf8'), name).toBe(text);
    expect(readFileSync(EXAMPLE_AVRO, 'utf8')).toBe(exampleAvroLines(wire));
  });

  it('one schema per type: every notice type and PreferencesUpdated each have an Avro and a Protobuf subject, ids never reused', () => {
    const types = [...EVENT_TYPES, 'PreferencesUpdated'];
    expect(wire.registry.map((e) => `${e.schemaType} ${e.subject}`).sort()).toEqual(
      types.flatMap((t) => [`AVRO notifier.events.${t}`, `PROTOBUF notifier.events.${t}`]).sort(),
    );
    const ids = wire.registry.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    // 1 and 3 were the shared Transfer subject before each notice type had its own: a registry never reuses an id.
    expect(ids).not.toContain(1);
    expect(ids).not.toContain(3);
  });

  it('Protobuf field numbers never move: a removed field is reserved, a new one takes the next number', () => {
    const before = protoOf('T', {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
      required: ['a'],
    });
    const after = protoOf(
      'T',
      { type: 'object', properties: { c: { type: 'string' }, d: { type: 'string' }, a: { type: 'string' } } },
      before,
    );
    expect(after).toContain('optional string a = 1;');
    expect(after).toContain('optional string c = 3;');
    expect(after).toContain('optional string d = 4;');
    expect(after).toContain('reserved 2;');
    expect(after).toContain('reserved "b";');
    // And once reserved, stays reserved: a field named b again gets a new number.
    expect(protoOf('T', { type: 'object', properties: { b: { type: 'string' } } }, after)).toContain(
      'optional string b = 5;',
    );
  });
});

describe('every example event, in Avro and in Protobuf', () => {
  for (const format of ['AVRO', 'PROTOBUF'] as const) {
    it(`${format}: encodes, and decodes back to the same JSON and the same payloadHash`, async () => {
      const store = new MemoryInboxStore();
      const schemas = new SchemaCache(new FolderRegistry());
      const records = examples.map((event, offset) => ({
        topic: 't',
        partition: 0,
        offset,
        value: encode(event, format),
      }));
      const summary = await ingestBatch(mskEvent(records), {
        ...memoryBatchDeps(store),
        schemas,
        maxEventAgeSeconds: 0,
      });
      expect(summary.failure).toBeUndefined();
      for (const [i, event] of examples.entries()) {
        const json = decodeRecordValue(Buffer.from(JSON.stringify(event)).toString('base64'), 65_536);
        const result = summary.results[i];
        // Both readings of the event end alike (accepted, or quarantined for the same reason).
        if (!json.ok)
          expect(result, event.eventId).toMatchObject({
            kind: 'quarantined',
            rejection: { reason: json.rejection.reason },
          });
        else {
          expect(result?.kind, event.eventId).not.toBe('quarantined');
          // The first record of an eventId is the one its inbox item holds (a later one is a resend or repair).
          if (examples.findIndex((e) => e.eventId === event.eventId) === i) {
            const inbox = store.ofKind('INBOX').find((item) => item.eventId === event.eventId);
            expect(inbox?.payloadHash, event.eventId).toBe(storedHashOf(json));
          }
        }
      }
      // The decoded JSON is the event itself (null means absent, in both contracts).
      const resolved = await schemas.resolve(wire.registry.map((e) => ({ registry: 'confluent', id: e.id })));
      for (const event of examples) {
        const header = readWireHeader(encode(event, format), 65_536);
        if (header.kind !== 'wire') throw new Error('not a wire record');
        const codec = resolved.get(`confluent:${header.schema.id}`);
        if (codec === undefined || !codec.ok) throw new Error('no codec');
        const decoded = codec.codec.decode(header.payload);
        expect(decoded.ok && withoutNulls(JSON.parse(decoded.text)), event.eventId).toEqual(withoutNulls(event));
      }
    });
  }

  it('an empty channel list stays empty and an absent one absent (proto3 cannot tell them apart without the wrapper)', () => {
    const entry = entryFor(wire, 'TransferCompleted', 'PROTOBUF');
    const codec = compileSchema('PROTOBUF', fileOf(entry.file), 'confluent');
    if (!codec.ok) throw new Error(codec.detail);
    const decode = (event: object) => {
      const d = codec.codec.decode(Buffer.concat([Buffer.from([0]), encodeProtobuf(fileOf(entry.file), event)]));
      return d.ok ? (JSON.parse(d.text) as { channels?: unknown }).channels : 'failed';
    };
    expect(decode(transferEvent({ channels: [] }))).toEqual([]);
    expect(decode(transferEvent({}))).toBeUndefined();
  });
});

describe('a record that cannot be read is quarantined with its reason and its original bytes', () => {
  const event = transferEvent({ eventId: 'wire-1' });
  const avro = encode(event, 'AVRO');
  const run = async (value: Buffer, registry: SchemaRegistry | 'none' = new FolderRegistry()) => {
    const store = new MemoryInboxStore();
    const summary = await ingestBatch(mskEvent([{ topic: 't', partition: 0, offset: 1, value }]), {
      ...memoryBatchDeps(store),
      // A schema id not found is asked again after waits (a lagging registry node): none here.
      schemas: new SchemaCache(registry === 'none' ? undefined : registry, { sleep: async () => {} }),
    });
    return { summary, item: store.quarantined('t', 0, 1) };
  };

  it.each([
    ['a header cut short (no schema id)', avro.subarray(0, 3), 'INVALID_ENCODING', 'no room for a schema id'],
    ['an Avro payload cut short', avro.subarray(0, avro.length - 4), 'INVALID_ENCODING', 'does not decode'],
    ['bytes after the Avro record', Buffer.concat([avro, Buffer.from([1, 2])]), 'INVALID_ENCODING', 'does not decode'],
    [
      'schema id 0',
      Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), avro.subarray(5)]),
      'INVALID_ENCODING',
      'not a registry id',
    ],
    [
      'a schema id the registry does not have',
      confluentRecord(999, 'AVRO', avro.subarray(5)),
      'UNKNOWN_SCHEMA',
      'has no schema 999',
    ],
    [
      'a Protobuf message index past the schema',
      Buffer.concat([
        confluentRecord(entryFor(wire, 'TransferCompleted', 'PROTOBUF').id, 'AVRO', Buffer.from([2, 6])),
        encodeProtobuf(fileOf('TransferCompleted.proto'), event),
      ]),
      'INVALID_ENCODING',
      'names no message',
    ],
    [
      'an unknown Glue compression byte',
      Buffer.concat([Buffer.from([3, 9]), Buffer.alloc(16), Buffer.from('x')]),
      'INVALID_ENCODING',
      'compression',
    ],
    [
      'a Glue record while the registry is Confluent',
      glueRecord('11111111-2222-3333-4444-555555555555', avro.subarray(5)),
      'UNKNOWN_SCHEMA',
      'the registry is confluent',
    ],
  ])('%s', async (_, value, reason, detail) => {
    const { summary, item } = await run(value);
    expect(summary.failure).toBeUndefined();
    expect(item?.reason).toBe(reason);
    expect(item?.detail).toContain(detail);
    expect(item?.raw).toBe(value.toString('base64'));
    expect(reconciles(summary.figures)).toBe(true);
  });

  it('a wrong magic byte is not a wire record: read as JSON, and refused as such', async () => {
    const { item } = await run(Buffer.concat([Buffer.from([1]), avro.subarray(1)]));
    expect(item?.reason).toMatch(/INVALID_JSON|INVALID_ENCODING/);
  });

  it('without a registry configured, a wire record says so', async () => {
    const { item } = await run(avro, 'none');
    expect(item?.reason).toBe('UNKNOWN_SCHEMA');
    expect(item?.detail).toContain('no schema registry is configured');
  });

  it('a wire record larger than the event limit is refused before it is decoded', async () => {
    const big = confluentRecord(1, 'AVRO', Buffer.alloc(70_000, 1));
    const { item } = await run(big);
    expect(item?.reason).toBe('TOO_LARGE');
  });

  it('a zlib-compressed Glue record that inflates past the event limit is refused as too large, never inflated whole', async () => {
    // 64 KB of zlib inflates to 64 MB: a batch of a few such records would exhaust the function's memory, fail the
    // batch and block the partition. The limit holds for what the payload inflates to, as for the record itself.
    const bomb = Buffer.concat([Buffer.from([3, 5]), Buffer.alloc(16, 7), deflateSync(Buffer.alloc(64 << 20, 0x31))]);
    expect(bomb.length).toBeLessThan(65_536);
    const header = readWireHeader(bomb, 65_536);
    expect(header.kind).toBe('tooLarge');
    const glue: SchemaRegistry = { kind: 'glue', schema: async () => ({ format: 'JSON', definition: '{}' }) };
    const { item } = await run(bomb, glue);
    expect(item?.reason).toBe('TOO_LARGE');
    expect(item?.detail).toContain('inflates to more than 65536 bytes');
  });

  it('a JSON Schema record behind a registry header is read as the JSON it carries', async () => {
    const json: SchemaRegistry = { kind: 'confluent', schema: async () => ({ format: 'JSON', definition: '{}' }) };
    const value = confluentRecord(42, 'JSON', Buffer.from(JSON.stringify(event)));
    expect((await run(value, json)).summary.results[0]?.kind).toBe('accepted');
  });

  it('an Avro string holding JSON text is a string, not an event (only a JSON Schema record carries JSON text)', async () => {
    const stringSchema: SchemaRegistry = {
      kind: 'confluent',
      schema: async () => ({ format: 'AVRO', definition: '"string"' }),
    };
    const value = confluentRecord(43, 'AVRO', encodeAvro('"string"', JSON.stringify(event) as unknown as object));
    expect((await run(value, stringSchema)).item?.reason).toBe('SCHEMA_VIOLATION');
  });

  it('Glue Avro and Glue Protobuf (its message index, then the message), zlib-compressed, decode', async () => {
    const id = '0f9c5b1e-1c5e-4a47-9f0e-2b7d1f1c0a11';
    const glue: SchemaRegistry = {
      kind: 'glue',
      schema: async (ref) =>
        ref.id === id
          ? { format: 'AVRO', definition: fileOf('TransferCompleted.avsc') }
          : { format: 'PROTOBUF', definition: fileOf('TransferCompleted.proto') },
    };
    const zlib = (schemaVersionId: string, payload: Buffer) => {
      const record = Buffer.concat([glueRecord(schemaVersionId, Buffer.alloc(0)), deflateSync(payload)]);
      record[1] = 5;
      return record;
    };
    expect((await run(zlib(id, avro.subarray(5)), glue)).summary.results[0]?.kind).toBe('accepted');
    const proto = Buffer.concat([Buffer.from([0]), encodeProtobuf(fileOf('TransferCompleted.proto'), event)]);
    const protoId = '22222222-2222-3333-4444-555555555555';
    expect((await run(zlib(protoId, proto), glue)).summary.results[0]?.kind).toBe('accepted');
  });
});

describe("a container's schema cache, made when a batch first holds a wire record", () => {
  it("is never made for a JSON producer's batches, then once, for the first batch with a wire record", async () => {
    const store = new MemoryInboxStore();
    let made = 0;
    const schemas = schemasOnFirstUse(async () => {
      made++;
      return new SchemaCache(new FolderRegistry());
    });
    const batch = (offset: number, value: Buffer | object) =>
      ingestBatch(mskEvent([{ topic: 't', partition: 0, offset, value }]), { ...memoryBatchDeps(store), schemas });
    await batch(1, transferEvent({ eventId: 'json-1' }));
    await batch(2, transferEvent({ eventId: 'json-2' }));
    expect(made).toBe(0);
    const avro = await batch(3, encode(transferEvent({ eventId: 'avro-1' }), 'AVRO'));
    const again = await batch(4, encode(transferEvent({ eventId: 'avro-2' }), 'AVRO'));
    expect(made).toBe(1);
    expect([avro.figures.accepted, again.figures.accepted]).toEqual([1, 1]);
  });

  it('is not made for a batch whose wire records are refused before any schema (malformed): they are quarantined even when it cannot be loaded', async () => {
    const store = new MemoryInboxStore();
    let made = 0;
    const schemas = schemasOnFirstUse(async () => {
      made++;
      throw new Error('the chunk could not be read');
    });
    // A magic byte and nothing after it: too short for a schema id.
    const malformed = Buffer.from([0x00, 0x01]);
    await ingestBatch(mskEvent([{ topic: 't', partition: 0, offset: 1, value: malformed }]), {
      ...memoryBatchDeps(store),
      schemas,
    });
    expect(made).toBe(0);
    expect(store.quarantined('t', 0, 1)?.reason).toBe('INVALID_ENCODING');
  });

  it('without one given, a wire record is quarantined as naming a schema no registry answers', async () => {
    const store = new MemoryInboxStore();
    const deps = { ...memoryBatchDeps(store) };
    delete (deps as { schemas?: unknown }).schemas;
    await ingestBatch(
      mskEvent([{ topic: 't', partition: 0, offset: 1, value: encode(transferEvent(), 'AVRO') }]),
      deps,
    );
    const item = store.quarantined('t', 0, 1);
    expect(item?.reason).toBe('UNKNOWN_SCHEMA');
    expect(item?.detail).toContain('no schema registry is configured');
  });
});

describe('the registry', () => {
  it('unreachable: nothing is written and the whole batch is redelivered, never quarantined', async () => {
    const store = new MemoryInboxStore();
    const down: SchemaRegistry = {
      kind: 'confluent',
      schema: async () => {
        throw new SchemaRegistryUnavailable('connect ECONNREFUSED');
      },
    };
    const summary = await ingestBatch(
      mskEvent([
        { topic: 't', partition: 0, offset: 1, value: encode(transferEvent({ eventId: 'w-1' }), 'AVRO') },
        { topic: 't', partition: 0, offset: 2, value: transferEvent({ eventId: 'j-1' }) },
      ]),
      { ...memoryBatchDeps(store), schemas: new SchemaCache(down) },
    );
    expect(summary.failure).toBeInstanceOf(SchemaRegistryUnavailable);
    expect(summary.figures.failed).toBe(2);
    expect(reconciles(summary.figures)).toBe(true);
    expect(store.ofKind('QUARANTINE')).toEqual([]);
    expect(store.ofKind('INBOX')).toEqual([]);
  });

  it('is asked once per schema id for the container, however many records name it', async () => {
    const registry = new FolderRegistry();
    const schemas = new SchemaCache(registry);
    const store = new MemoryInboxStore();
    const records = (from: number) =>
      mskEvent(
        [0, 1, 2].map((i) => ({
          topic: 't',
          partition: 0,
          offset: from + i,
          value: encode(transferEvent({ eventId: `c-${from + i}` }), 'AVRO'),
        })),
      );
    await ingestBatch(records(0), { ...memoryBatchDeps(store), schemas });
    await ingestBatch(records(10), { ...memoryBatchDeps(store), schemas });
    expect(registry.calls).toBe(1);
  });

  const answer = (status: number, body: unknown) => async () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const ref: SchemaRef = { registry: 'confluent', id: 7 };

  it('Confluent: 40403 is "no such schema"; any other 404, a 401 or a 5xx is the registry failing', async () => {
    expect(
      await new ConfluentSchemaRegistry('http://r', undefined, answer(404, { error_code: 40403 })).schema(ref),
    ).toBeUndefined();
    for (const [status, body] of [
      [404, { error_code: 40401 }],
      [401, {}],
      [503, {}],
    ] as const) {
      await expect(
        new ConfluentSchemaRegistry('http://r', undefined, answer(status, body)).schema(ref),
      ).rejects.toBeInstanceOf(SchemaRegistryUnavailable);
    }
    const refused = async () => {
      throw new TypeError('fetch failed');
    };
    await expect(new ConfluentSchemaRegistry('http://r', undefined, refused).schema(ref)).rejects.toBeInstanceOf(
      SchemaRegistryUnavailable,
    );
  });

  it('Confluent: sends basic auth, reads Avro when schemaType is left out, and refuses references', async () => {
    let seen: RequestInit | undefined;
    let url = '';
    const registry = new ConfluentSchemaRegistry(
      'https://r.example/',
      async () => ({ username: 'k', password: 's' }),
      async (u, init) => {
        url = String(u);
        seen = init;
        return answer(200, { schema: fileOf('TransferCompleted.avsc') })();
      },
    );
    expect((await registry.schema(ref))?.format).toBe<WireFormat>('AVRO');
    expect(url).toBe('https://r.example/schemas/ids/7');
    expect((seen?.headers as Record<string, string> | undefined)?.authorization).toBe(
      `Basic ${Buffer.from('k:s').toString('base64')}`,
    );
    const withRefs: SchemaRegistry = {
      kind: 'confluent',
      schema: async () => ({ format: 'AVRO', definition: fileOf('TransferCompleted.avsc'), hasReferences: true }),
    };
    const resolved = await new SchemaCache(withRefs).resolve([ref]);
    expect(resolved.get('confluent:7')).toMatchObject({ ok: false, detail: expect.stringContaining('references') });
  });
});

describe('the registry from the environment (checked at cold start)', () => {
  // As ingest reads it: its loader parses the variables, the adapter is built from what it read.
  const registryFromEnv = (env: Record<string, string>, c: Parameters<typeof schemaRegistryFor>[1]) =>
    schemaRegistryFor(loadIngestConfig({ TABLE_NAME: 't', ...env }).schemaRegistry, c);
  const clients = (secret: () => Promise<string>) => ({
    getSchemaVersion: async () => ({}),
    secret: async () => secret(),
  });

  it('none, Glue, or Confluent with an http(s) URL; anything else fails the cold start by name', () => {
    const none = clients(async () => '');
    expect(registryFromEnv({}, none)).toBeUndefined();
    expect(registryFromEnv({ SCHEMA_REGISTRY_KIND: 'glue' }, none)?.kind).toBe('glue');
    expect(registryFromEnv({ SCHEMA_REGISTRY_KIND: 'confluent', SCHEMA_REGISTRY_URL: 'https://r' }, none)?.kind).toBe(
      'confluent',
    );
    expect(() => registryFromEnv({ SCHEMA_REGISTRY_KIND: 'confluent' }, none)).toThrow(/SCHEMA_REGISTRY_URL/);
    expect(() => registryFromEnv({ SCHEMA_REGISTRY_KIND: 'confluent', SCHEMA_REGISTRY_URL: 'ftp://r' }, none)).toThrow(
      /SCHEMA_REGISTRY_URL/,
    );
    expect(() => registryFromEnv({ SCHEMA_REGISTRY_KIND: 'kafka' }, none)).toThrow(/SCHEMA_REGISTRY_KIND/);
  });

  it('the basic-auth secret is read once; a failed or malformed read is the registry failing, retried next batch', async () => {
    let reads = 0;
    let answer = 'not json';
    const registry = registryFromEnv(
      { SCHEMA_REGISTRY_KIND: 'confluent', SCHEMA_REGISTRY_URL: 'https://r', SCHEMA_REGISTRY_SECRET_ARN: 'arn:s' },
      clients(async () => {
        reads++;
        return answer;
      }),
    );
    const ref: SchemaRef = { registry: 'confluent', id: 1 };
    await expect(registry?.schema(ref)).rejects.toBeInstanceOf(SchemaRegistryUnavailable);
    answer = JSON.stringify({ username: 'k', password: 's' });
    // The fetch itself fails here (no such host), after the secret was read: read once from now on.
    await expect(registry?.schema(ref)).rejects.toBeInstanceOf(SchemaRegistryUnavailable);
    await expect(registry?.schema(ref)).rejects.toBeInstanceOf(SchemaRegistryUnavailable);
    expect(reads).toBe(2);
  });
});
