/**
 * The evidence store as its versions tell it, for its readers (the operator's evidence, export and audit): a record is
 * written once, so a later version of its key (superseded) or a delete marker over it (hidden) is a sign of
 * tampering. Both are denied by the bucket policy (docs/evidence-and-privacy.md); a reader shows the record as first
 * written and says what the versions show.
 */
import type { EvidenceObjectHistory, EvidenceStore } from './evidence-store.ts';

/** What an object's versions say: nothing for a record written once and still current. */
export function versionWarnings(o: EvidenceObjectHistory): string[] {
  const warnings: string[] = [];
  const later = o.versions.slice(1);
  if (later.length > 0) {
    warnings.push(
      `${o.key} was written again after its first version: ${later.length} later version(s) (${later.map((v) => `${v.versionId ?? '?'} at ${v.at ?? '?'}`).join(', ')}); shown as first written`,
    );
  }
  if (o.hidden)
    warnings.push(`${o.key} is hidden behind a delete marker: a plain read finds nothing; shown as written`);
  return warnings;
}

/** The object as first written (its oldest version), with what its versions say. */
export async function readFirst(
  store: EvidenceStore,
  o: EvidenceObjectHistory,
): Promise<{ bytes: Uint8Array; warnings: string[] } | undefined> {
  const first = o.versions[0];
  if (first === undefined) return undefined;
  const bytes = await store.get(o.key, first.versionId);
  if (bytes === undefined) throw new Error(`evidence object ${o.key} listed but not readable`);
  return { bytes, warnings: versionWarnings(o) };
}
