import { join } from 'node:path';

/** Where the local run keeps evidence and the ops CLI reads it (--endpoint): kept across runs, like the bucket. */
export const LOCAL_EVIDENCE_DIR = join(import.meta.dirname, '..', '..', '.local', 'evidence');
