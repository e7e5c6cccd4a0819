/** An adapter only some invocations use, loaded on its first call (functions/commons/on-first-call.ts). */
import { describe, expect, it } from 'vitest';
import { onFirstCall } from '../../functions/commons/on-first-call.ts';

interface Gaps {
  add(key: string): Promise<void>;
  list(limit: number): Promise<string[]>;
}

class MemoryGaps implements Gaps {
  readonly keys: string[] = [];
  async add(key: string): Promise<void> {
    this.keys.push(key);
  }
  async list(limit: number): Promise<string[]> {
    return this.keys.slice(0, limit);
  }
}

describe('an adapter loaded on its first call', () => {
  it('is not loaded until a method is called, then once, and each call reaches the one instance', async () => {
    let loads = 0;
    const gaps = onFirstCall<Gaps>(
      async () => {
        loads++;
        return new MemoryGaps();
      },
      { add: true, list: true },
    );
    expect(loads).toBe(0);
    await Promise.all([gaps.add('a'), gaps.add('b')]);
    expect(await gaps.list(10)).toEqual(['a', 'b']);
    expect(loads).toBe(1);
  });

  it('fails the call whose load fails, and loads again on the next call', async () => {
    let loads = 0;
    const gaps = onFirstCall<Gaps>(
      async () => {
        loads++;
        if (loads === 1) throw new Error('chunk not read');
        return new MemoryGaps();
      },
      { add: true, list: true },
    );
    await expect(gaps.add('a')).rejects.toThrow('chunk not read');
    await gaps.add('b');
    expect(await gaps.list(10)).toEqual(['b']);
    expect(loads).toBe(2);
  });

  it('passes the error of a loaded method on as it is', async () => {
    const gaps = onFirstCall<Gaps>(
      async () => ({
        add: async () => {
          throw new Error('the table refused');
        },
        list: async () => [],
      }),
      { add: true, list: true },
    );
    await expect(gaps.add('a')).rejects.toThrow('the table refused');
  });
});
