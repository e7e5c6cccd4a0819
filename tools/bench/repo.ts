import { fileURLToPath } from 'node:url';

/** The repository's root: the functions' sources for the bundles, where `npm start` runs for --pipeline. */
export const REPO = fileURLToPath(new URL('../..', import.meta.url));
