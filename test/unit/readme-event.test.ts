/** The event the README shows a producer is one notifier accepts as shown, on every channel it names. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { admitRecord } from '../../functions/domain/admission.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe("the README's producer event", () => {
  it('is admitted with all three channels, its spellings normalised', () => {
    const block = /## One event, as a producer writes it\s+```json\n([\s\S]+?)\n```/.exec(readme)?.[1];
    expect(block, 'the README has the section with one JSON block').toBeDefined();
    const value = Buffer.from(JSON.stringify(JSON.parse(block as string))).toString('base64');
    const admission = admitRecord(value, { maxEventBytes: 65_536, maxEventAgeSeconds: 0 }, Date.now());
    expect(admission).toMatchObject({ ok: true, channels: ['EMAIL', 'PUSH', 'SMS'], refused: [] });
    expect(admission.ok && 'normalised' in admission && admission.normalised.length).toBeGreaterThan(0);
  });
});
