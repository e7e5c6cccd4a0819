/**
 * Loaded before every test file: the phone number rules the contract's decoder reads producers' spellings with, the
 * card number and IBAN rules it masks with, and local time for the send windows. The
 * functions load them when a record first needs them (functions/domain/phone-numbers.ts); tests call the decoder
 * directly. (Templates are loaded by the files that render: some of them replace the generated modules first.)
 */
import { loadCardRules } from '../../functions/domain/card-number.ts';
import { loadLocalTime } from '../../functions/domain/local-time.ts';
import { loadPhoneNumbers } from '../../functions/domain/phone-numbers.ts';

await loadPhoneNumbers();
// The card brands' ranges and the IBAN registry the masker decides candidates with: ingest loads them on demand.
await loadCardRules();
// Local time (Temporal) for the send windows: dispatch loads it for a type with one; tests read windows directly.
await loadLocalTime();
