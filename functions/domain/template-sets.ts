/**
 * Each notice type's compiled templates (templates/ compiled by `npm run templates` into one module per type,
 * functions/domain/templates/<Type>.generated.ts), loaded when a notice of the type is first rendered: a function
 * holds only the types it sends (in a bundle, each type is a chunk read on first use, never at cold start). `render`
 * (templates.ts) stays synchronous and reads what is loaded; whoever renders loads the type first — dispatch for
 * each record's type, the sweeper before a rebuild, tests and tools every type at once.
 */
import type { CompiledSet, TemplateSets } from './message-view.ts';
import { TEMPLATE_LOADERS } from './templates.generated.ts';

const loaded = new Map<string, TemplateSets>();

/** A type's templates, loaded once; a type the catalogue does not have loads nothing (rendering it then refuses). */
export async function loadTemplates(type: string): Promise<void> {
  if (loaded.has(type)) return;
  const loader = Object.hasOwn(TEMPLATE_LOADERS, type) ? TEMPLATE_LOADERS[type] : undefined;
  if (loader !== undefined) loaded.set(type, (await loader()).SETS);
}

/** Every type's templates (tests, tools, the outbox page). */
export const loadAllTemplates = async () => {
  await Promise.all(Object.keys(TEMPLATE_LOADERS).map(loadTemplates));
};

export class TemplatesNotLoadedError extends Error {
  override name = 'TemplatesNotLoadedError';
}

/**
 * A type's templates in one language: undefined when the catalogue has no such type (or the type no such language).
 * A type of the catalogue not loaded yet is the caller's mistake, never the notice's: it throws.
 */
export function compiledSet(type: string, locale: string): CompiledSet | undefined {
  const sets = loaded.get(type);
  if (sets === undefined) {
    if (Object.hasOwn(TEMPLATE_LOADERS, type)) throw new TemplatesNotLoadedError(`templates of ${type} not loaded`);
    return undefined;
  }
  return Object.hasOwn(sets, locale) ? sets[locale as keyof TemplateSets] : undefined;
}
