/**
 * Each function's bytes at init — index.mjs and the chunks it imports statically, bundled as the stack bundles them —
 * against its SDK-only floor, and what must not be among them: what only some records, stages or failures need is a
 * chunk loaded then (docs/measurements.md "Bundles and init time"; `npm run bench -- --bundles` times the same).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLED_FUNCTIONS, buildWithFloor, staticInit } from '../../tools/bench/bundles.ts';
import { REPO } from '../../tools/bench/repo.ts';

/**
 * Bytes at init over the floor's, at most. The bar is 1.5×; ingest is above it: every record's path reads
 * Powertools' logger and metrics, zod, and the contract's decoder against a floor of one SDK client
 * (docs/measurements.md says which bytes and why) — its budget is what it is now (1.651×: a failed rules load ends
 * the environment, ingest/end-environment.ts) with about 2 KB to spare. Dispatch has far less under 1.5×: 372 B at
 * 7c0e619 (docs/measurements.md "Bundles and init time").
 */
const BUDGET: Record<string, number> = { ingest: 1.66, dispatch: 1.5, sweeper: 1.5, feedback: 1.5 };

/** A type's description (templates/<Type>/definition.json), for the JSON Schemas: in no function's bundle at all. */
const DESCRIPTION = "The customer's card was charged";

/** Source files a cold start must not read: each is loaded when a record, a stage or a failure needs it. */
const LOADED_ON_DEMAND: Record<string, readonly string[]> = {
  ingest: [
    // Two regions only (FENCE_TABLE_NAME).
    'functions/stores/fence-store.ts',
    'functions/ingest/owned-inbox-store.ts',
    'functions/ingest/peer-lookup.ts',
    // Avro, Protobuf or a registry's JSON: the registry adapters, the schema cache and the codecs.
    'functions/ingest/schema-registry.ts',
    'functions/domain/event/wire-format.ts',
    'node_modules/avsc/',
    'node_modules/protobufjs/',
    // A recipient's phone number.
    'node_modules/libphonenumber-js/',
    // A value holding a candidate card number or IBAN (domain/card-number.ts): the brands' ranges, the IBAN registry.
    'functions/domain/card-rules.ts',
    'node_modules/credit-card-type/',
    'node_modules/ibantools/',
  ],
  dispatch: [
    'functions/stores/fence-store.ts',
    'functions/dispatch/fenced-sender.ts',
    // Written only when the evidence store fails or hangs.
    'functions/stores/evidence-gaps.ts',
    // A notice in a series or under a flood guard.
    'functions/stores/moment-store.ts',
    // One notice type's templates, with the first notice of the type; the time zone rules with the first date shown.
    'TransferCompleted.generated.ts',
    'node_modules/temporal-polyfill/',
    // How a spool item holds its record, and its dictionaries: with the first record spooled.
    'functions/stores/spool-codec.ts',
    'functions/stores/spool-dictionaries/',
  ],
  sweeper: [
    'node_modules/@aws-sdk/client-lambda/',
    // The spool's roll-up, with the run that rolls; an expired lease's spool look-up, with the run that meets one.
    'functions/sweeper/roll-up-evidence.ts',
    'functions/sweeper/spooled-send.ts',
    'functions/stores/spool-codec.ts',
    'functions/stores/spool-dictionaries/',
  ],
  feedback: ['functions/stores/spool-codec.ts', 'functions/stores/spool-dictionaries/'],
};

const out = mkdtempSync(join(tmpdir(), 'notifier-budget-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe.each(BUNDLED_FUNCTIONS)('the %s bundle at cold start', (name) => {
  const built = buildWithFloor(name, out);
  const init = staticInit(built.metafile);
  const floor = staticInit(built.floorMetafile);

  it(`reads at most ${BUDGET[name]}× the bytes of a bundle of only its SDK clients`, () => {
    expect(floor.bytes).toBeGreaterThan(100_000);
    expect(init.bytes / floor.bytes).toBeLessThanOrEqual(BUDGET[name] as number);
  });

  it('holds no description of the catalogue: no function reads one', () => {
    expect(readFileSync(join(REPO, 'templates/CardPayment/definition.json'), 'utf8')).toContain(DESCRIPTION);
    for (const file of Object.keys(built.metafile.outputs).filter((k) => k.endsWith('.mjs')))
      expect(readFileSync(file, 'utf8'), file).not.toContain(DESCRIPTION);
  });

  it('reads none of what only some records, stages or failures need', () => {
    const sources = [...init.sources];
    for (const part of LOADED_ON_DEMAND[name] ?? []) {
      expect(sources.filter((s) => s.includes(part))).toEqual([]);
      // And the part is in the bundle, as a chunk of its own: the check above is not vacuous.
      const bundled = Object.values(built.metafile.outputs).some((o) =>
        Object.keys(o.inputs).some((s) => s.includes(part)),
      );
      expect(bundled, `${part} is in the bundle`).toBe(true);
    }
  });
});
