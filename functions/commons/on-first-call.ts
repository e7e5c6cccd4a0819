/**
 * An adapter loaded when it is first called: its module (and what only it imports) is a chunk of its own beside the
 * bundle, read on the first call, never at cold start — for an adapter only some invocations use (a store written
 * only when another fails). Its methods are the names given — every method of the interface, or it does not compile —
 * each async; a load that fails fails that call and is tried again on the next.
 */
type AsyncMethods<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };

export function onFirstCall<T extends AsyncMethods<T>>(
  load: () => Promise<T>,
  methods: { readonly [K in keyof T]-?: true },
): T {
  let loading: Promise<T> | undefined;
  const loaded = () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
  const adapter: Partial<Record<keyof T, unknown>> = {};
  for (const name of Object.keys(methods) as (keyof T)[]) {
    adapter[name] = async (...args: unknown[]) => {
      const target = await loaded();
      return (target[name] as unknown as (...a: unknown[]) => Promise<unknown>).apply(target, args);
    };
  }
  return adapter as T;
}
