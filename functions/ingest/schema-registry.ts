/**
 * The schema registry adapters: a writer's schema by the id its record names (Confluent: GET /schemas/ids/{id}; AWS
 * Glue: GetSchemaVersion by the schema version's UUID), compiled once and kept for the container's life — a registered
 * schema never changes under its id, so the cache needs no expiry.
 *
 * Each adapter checks what the registry answered and tells two things apart, because they end differently:
 * - the registry has no such schema (Confluent 404 / 40403, Glue EntityNotFoundException), still so when asked again
 *   a few seconds later (a node may not yet have read a new schema): the records that name it are bad input —
 *   quarantined, replayable once the schema exists;
 * - the registry cannot answer (network, timeout, 5xx, throttling, our credentials refused): an infrastructure
 *   failure — `SchemaRegistryUnavailable` fails the batch before any write, and the event source mapping redelivers
 *   it, so no good record is quarantined because the registry was down.
 */
import type { GetSchemaVersionResponse } from '@aws-sdk/client-glue';
import pLimit from 'p-limit';
import type { SchemaRegistrySetting } from '../commons/config.ts';
import type { Compiled } from '../domain/event/wire-format.ts';
import { type SchemaRef, schemaKey, type WireFormat } from '../domain/event/wire-header.ts';

/** A writer's schema as the registry keeps it. */
export interface RegistrySchema {
  readonly format: WireFormat;
  readonly definition: string;
  /** The schema imports other registered schemas (Confluent references): not resolved here. */
  readonly hasReferences?: boolean;
}

export interface SchemaRegistry {
  /** Which records this registry can resolve (Confluent ids or Glue UUIDs). */
  readonly kind: SchemaRef['registry'];
  /** The schema, or undefined when the registry says it has none. Throws SchemaRegistryUnavailable otherwise. */
  schema(ref: SchemaRef): Promise<RegistrySchema | undefined>;
}

export class SchemaRegistryUnavailable extends Error {
  override name = 'SchemaRegistryUnavailable';
}

/** How long one request to the registry may take before it counts as the registry failing. */
export const REGISTRY_TIMEOUT_MS = 3_000;

export interface BasicAuth {
  readonly username: string;
  readonly password: string;
}

/** Confluent Schema Registry (Confluent Cloud, Confluent Platform, or any registry speaking its REST API). */
export class ConfluentSchemaRegistry implements SchemaRegistry {
  readonly kind = 'confluent' as const;
  constructor(
    private readonly url: string,
    /** Read once, when first needed (the secret's username and password). */
    private readonly auth?: () => Promise<BasicAuth>,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async schema(ref: SchemaRef): Promise<RegistrySchema | undefined> {
    const headers: Record<string, string> = { accept: 'application/vnd.schemaregistry.v1+json, application/json' };
    if (this.auth !== undefined) {
      const { username, password } = await this.auth();
      headers.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    }
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.url.replace(/\/+$/, '')}/schemas/ids/${ref.id}`, {
        headers,
        signal: AbortSignal.timeout(REGISTRY_TIMEOUT_MS),
      });
    } catch (error) {
      throw new SchemaRegistryUnavailable(`schema registry unreachable: ${(error as Error).message}`, { cause: error });
    }
    if (response.status === 404) {
      const body = (await response.json().catch(() => ({}))) as { error_code?: number };
      // 40403: "Schema not found". Another 404 is a wrong URL: ours to fix, not the record's.
      if (body.error_code === 40403) return undefined;
      throw new SchemaRegistryUnavailable(`schema registry answered 404 without error code 40403: is the URL right?`);
    }
    if (!response.ok) throw new SchemaRegistryUnavailable(`schema registry answered HTTP ${response.status}`);
    const body = (await response.json().catch(() => undefined)) as
      | { schema?: unknown; schemaType?: unknown; references?: unknown[] }
      | undefined;
    if (typeof body?.schema !== 'string')
      throw new SchemaRegistryUnavailable('schema registry answered without a schema');
    // Confluent leaves schemaType out for Avro, its original format.
    const format = body.schemaType === undefined ? 'AVRO' : body.schemaType;
    if (format !== 'AVRO' && format !== 'PROTOBUF' && format !== 'JSON') {
      throw new SchemaRegistryUnavailable(`schema registry answered schemaType ${String(format)}`);
    }
    return { format, definition: body.schema, hasReferences: (body.references?.length ?? 0) > 0 };
  }
}

/** Glue's GetSchemaVersion by SchemaVersionId (the handler loads the SDK client only when a Glue record comes). */
export type GetSchemaVersion = (schemaVersionId: string, signal: AbortSignal) => Promise<GetSchemaVersionResponse>;

/** AWS Glue Schema Registry: the record names a schema version by its UUID. */
export class GlueSchemaRegistry implements SchemaRegistry {
  readonly kind = 'glue' as const;
  constructor(private readonly getSchemaVersion: GetSchemaVersion) {}

  async schema(ref: SchemaRef): Promise<RegistrySchema | undefined> {
    try {
      const answer = await this.getSchemaVersion(String(ref.id), AbortSignal.timeout(REGISTRY_TIMEOUT_MS));
      const format = answer.DataFormat;
      if (answer.SchemaDefinition === undefined || (format !== 'AVRO' && format !== 'PROTOBUF' && format !== 'JSON')) {
        throw new SchemaRegistryUnavailable(`Glue answered schema version ${ref.id} without a definition or format`);
      }
      return { format, definition: answer.SchemaDefinition };
    } catch (error) {
      if ((error as Error).name === 'EntityNotFoundException') return undefined;
      if (error instanceof SchemaRegistryUnavailable) throw error;
      throw new SchemaRegistryUnavailable(`Glue schema registry: ${(error as Error).message}`, { cause: error });
    }
  }
}

/** What a record's schema reference resolves to: a codec, or why its records are refused. */
export type Resolved = Compiled;

/**
 * A registry is eventually consistent across its nodes: one that has not yet read a schema registered a moment ago
 * answers "not found" while the next request, or the next node, answers it. So "not found" is asked again after
 * these waits (3.75 s in all, inside the invocation) before the schema id is called unknown — bounded, because the
 * records behind it hold their partition while they wait. Failing the batch instead would make the event source
 * mapping redeliver it for as long as its retries last, the good records with it, and put a truly unknown id's whole
 * batch in the failed-batch bucket instead of quarantining that record.
 */
export const NOT_FOUND_RETRY_MS: readonly number[] = [250, 500, 1_000, 2_000];
/** A schema id still unknown after those is remembered this long: its records are quarantined without the wait. */
export const NOT_FOUND_MEMORY_MS = 60_000;
/**
 * Schema ids one batch asks the registry about, of those the container does not know yet. A producer's topic names a
 * few (a type's versions, per format); a batch of records that start with 0x00 by accident names a random id each,
 * and asking about all of them — five times each, as "not found" is asked again — would be thousands of requests: the
 * registry throttles, and a throttled registry fails the whole batch, good records with it, on every redelivery. The
 * records naming ids beyond these are quarantined unasked (UNKNOWN_SCHEMA, replayable), as a truly unknown id's are.
 */
export const MAX_SCHEMAS_ASKED_PER_BATCH = 64;
/**
 * Requests to the registry in flight at once, per container. With MAX_SCHEMAS_ASKED_PER_BATCH, what bounds the wait of
 * one batch: 64 ids asked five times, 32 at a time, each answering "not found" just before REGISTRY_TIMEOUT_MS, is 10
 * rounds of 3 s and the 3.75 s of waits — well inside the ingest function's two minutes.
 */
export const REGISTRY_CONCURRENCY = 32;
/** Ids not found remembered at most: past it, the expired and then the oldest are forgotten (asked again if named). */
const MAX_REMEMBERED_UNKNOWN = 1_000;

export interface SchemaCacheOptions {
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
  readonly notFoundRetryMs?: readonly number[];
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Compiled schemas by reference, for the container's life. `resolve` fetches the ones not seen yet (each once, also
 * when a batch names it many times) and throws SchemaRegistryUnavailable when the registry cannot answer.
 */
export class SchemaCache {
  private readonly known = new Map<string, Resolved>();
  /** Schema ids the registry said it does not have, after asking again: until when that answer is trusted. */
  private readonly unknown = new Map<string, { until: number; detail: string }>();
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly retryMs: readonly number[];
  private readonly limit = pLimit(REGISTRY_CONCURRENCY);

  constructor(
    private readonly registry: SchemaRegistry | undefined,
    options: SchemaCacheOptions = {},
  ) {
    this.sleep = options.sleep ?? wait;
    this.now = options.now ?? Date.now;
    this.retryMs = options.notFoundRetryMs ?? NOT_FOUND_RETRY_MS;
  }

  async resolve(refs: Iterable<SchemaRef>): Promise<Map<string, Resolved>> {
    const out = new Map<string, Resolved>();
    const missing = new Map<string, SchemaRef>();
    for (const ref of refs) {
      const key = schemaKey(ref);
      const known = this.known.get(key);
      if (known !== undefined) out.set(key, known);
      else missing.set(key, ref);
    }
    const budget = { left: MAX_SCHEMAS_ASKED_PER_BATCH, named: missing.size };
    await Promise.all(
      [...missing].map(async ([key, ref]) => {
        const resolved = await this.fetch(ref, budget);
        // Only answers are kept: a schema the registry had no record of may be registered later (then replayed).
        if (resolved.ok) this.known.set(key, resolved);
        out.set(key, resolved);
      }),
    );
    return out;
  }

  private async fetch(ref: SchemaRef, budget: { left: number; readonly named: number }): Promise<Resolved> {
    const registry = this.registry;
    if (registry === undefined) {
      return {
        ok: false,
        detail: `record names ${ref.registry} schema ${ref.id}, but no schema registry is configured`,
      };
    }
    if (registry.kind !== ref.registry) {
      return {
        ok: false,
        detail: `record names ${ref.registry} schema ${ref.id}, but the registry is ${registry.kind}`,
      };
    }
    const remembered = this.unknown.get(schemaKey(ref));
    if (remembered !== undefined && this.now() < remembered.until) return { ok: false, detail: remembered.detail };
    // Counted before the first await: the ids a batch names first are the ones asked.
    if (budget.left <= 0) {
      return {
        ok: false,
        detail: `schema ${ref.id} not asked: the batch names ${budget.named} schema ids this container does not know, and at most ${MAX_SCHEMAS_ASKED_PER_BATCH} are asked per batch`,
      };
    }
    budget.left--;
    const schema = await this.ask(registry, ref);
    if (schema === undefined)
      return { ok: false, detail: (this.unknown.get(schemaKey(ref)) as { detail: string }).detail };
    if (schema.hasReferences === true) {
      return {
        ok: false,
        detail: `schema ${ref.id} imports other schemas (references), which notifier does not resolve`,
      };
    }
    // The codecs (avsc, protobufjs) load with the first schema a container compiles: a JSON producer's never does.
    const { compileSchema } = await import('../domain/event/wire-format.ts');
    const compiled = compileSchema(schema.format, schema.definition, ref.registry);
    return compiled.ok ? compiled : { ok: false, detail: `schema ${ref.id}: ${compiled.detail}` };
  }

  /** The schema, asking again while the registry says "not found" (NOT_FOUND_RETRY_MS); undefined once it is unknown. */
  private async ask(registry: SchemaRegistry, ref: SchemaRef): Promise<RegistrySchema | undefined> {
    const key = schemaKey(ref);
    const request = () => this.limit(() => registry.schema(ref));
    let schema = await request();
    for (const ms of this.retryMs) {
      if (schema !== undefined) break;
      await this.sleep(ms);
      schema = await request();
    }
    if (schema !== undefined) {
      this.unknown.delete(key);
      return schema;
    }
    const waited = this.retryMs.reduce((sum, ms) => sum + ms, 0);
    this.forgetUnknown(key);
    this.unknown.set(key, {
      until: this.now() + NOT_FOUND_MEMORY_MS,
      detail: `the ${ref.registry} registry has no schema ${ref.id} (asked ${this.retryMs.length + 1} times over ${waited} ms; its records are quarantined without asking again for ${NOT_FOUND_MEMORY_MS / 1000} s)`,
    });
    return undefined;
  }

  /**
   * Room for one more id not found: the expired ones go, and the oldest while there are too many. Kept in the order
   * remembered (each is re-inserted), so the expired are the first ones.
   */
  private forgetUnknown(key: string): void {
    this.unknown.delete(key);
    const now = this.now();
    for (const [old, { until }] of this.unknown) {
      if (until > now && this.unknown.size < MAX_REMEMBERED_UNKNOWN) break;
      this.unknown.delete(old);
    }
  }

  /** How many ids not found the container remembers (bounded by MAX_REMEMBERED_UNKNOWN). */
  get rememberedUnknown(): number {
    return this.unknown.size;
  }
}

/**
 * The registry ingest reads writer schemas from, as the stack configures it (lib/settings.ts `schemaRegistry`, read at
 * cold start by loadIngestConfig), or undefined: none, and a schema-registry record is quarantined as UNKNOWN_SCHEMA.
 */
export function schemaRegistryFor(
  setting: SchemaRegistrySetting | undefined,
  clients: { getSchemaVersion: GetSchemaVersion; secret: (arn: string) => Promise<string> },
): SchemaRegistry | undefined {
  if (setting === undefined) return undefined;
  if (setting.kind === 'glue') return new GlueSchemaRegistry(clients.getSchemaVersion);
  const { url, secretArn } = setting;
  if (secretArn === undefined) return new ConfluentSchemaRegistry(url);
  let auth: Promise<BasicAuth> | undefined;
  const readAuth = async (): Promise<BasicAuth> => {
    const parsed = JSON.parse(await clients.secret(secretArn)) as Partial<BasicAuth>;
    if (typeof parsed.username !== 'string' || typeof parsed.password !== 'string') {
      throw new Error('the schema registry secret must be JSON with "username" and "password"');
    }
    return { username: parsed.username, password: parsed.password };
  };
  return new ConfluentSchemaRegistry(url, () => {
    // Read once; a failed read is retried with the next batch rather than kept.
    auth ??= readAuth().catch((error: unknown) => {
      auth = undefined;
      throw new SchemaRegistryUnavailable(`schema registry secret: ${(error as Error).message}`, { cause: error });
    });
    return auth;
  });
}
