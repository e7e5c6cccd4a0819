/**
 * A folder standing in for the schema registry in `npm start`: it serves the folder's schemas (registry.json names
 * each file's id and format; docs/wire/ by default, written by `npm run schema:wire`) through the one endpoint of
 * Confluent's REST API that ingest reads, GET /schemas/ids/{id} — so the local run exercises ingest's own Confluent
 * adapter, exactly as deployed, with the registry's answers: 200 with the schema, 404 with error code 40403.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { RegistryEntry } from '../scripts/wire-schemas.ts';
import { UsageError } from './cli.ts';

export interface LocalSchemaRegistry {
  readonly url: string;
  /** Requests answered (each schema id is asked once per ingest container). */
  readonly requests: () => number;
  stop(): Promise<void>;
}

export function readRegistryFolder(dir: string): Map<number, { schemaType: string; schema: string }> {
  let entries: RegistryEntry[];
  try {
    entries = (JSON.parse(readFileSync(join(dir, 'registry.json'), 'utf8')) as { schemas: RegistryEntry[] }).schemas;
  } catch (error) {
    throw new UsageError(
      `--registry ${dir}: no readable registry.json (${(error as Error).message}); docs/wire/ has one (npm run schema:wire)`,
    );
  }
  return new Map(
    entries.map((e) => [e.id, { schemaType: e.schemaType, schema: readFileSync(join(dir, e.file), 'utf8') }]),
  );
}

export function startLocalSchemaRegistry(dir: string): Promise<LocalSchemaRegistry> {
  return serveSchemas(readRegistryFolder(dir));
}

/** Serves schemas by id as Confluent's REST API does (also what tests encode through, with producers' libraries). */
export async function serveSchemas(
  schemas: ReadonlyMap<number, { schemaType: string; schema: string }>,
): Promise<LocalSchemaRegistry> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    const match = /^\/schemas\/ids\/(\d+)$/.exec(req.url ?? '');
    const found = match === null ? undefined : schemas.get(Number(match[1]));
    res.setHeader('content-type', 'application/vnd.schemaregistry.v1+json');
    if (req.method !== 'GET' || found === undefined) {
      res.statusCode = 404;
      res.end(JSON.stringify({ error_code: 40403, message: 'Schema not found' }));
      return;
    }
    // As Confluent answers: schemaType left out for Avro.
    res.end(JSON.stringify(found.schemaType === 'AVRO' ? { schema: found.schema } : found));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
