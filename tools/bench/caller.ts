/**
 * Where in the handlers a request comes from, for the complete cost run's per-operation breakdown (cost-probe.ts): the
 * first frames of a stack under functions/ — not functions/commons/, whose clients and retries every store shares —
 * innermost first, a class named once for its consecutive methods: `DynamoNotificationStore.claim <
 * dispatchNotification`, `DynamoNotificationStore.heldUpdate < transition < finish`. Pure.
 */
const FRAMES = 4;

export function callerOf(stack: string | undefined): string {
  const frames: string[] = [];
  let lastClass: string | undefined;
  for (const line of (stack ?? '').split('\n')) {
    const name = /^\s*at (?:async )?([^\s(]+) \((?:file:\/\/)?[^)]*\/functions\/(?!commons\/)/.exec(line)?.[1];
    if (name === undefined) continue;
    const [owner, method] = name.includes('.')
      ? [name.slice(0, name.lastIndexOf('.')), name.slice(name.lastIndexOf('.') + 1)]
      : [undefined, name];
    // An object literal's method (`Object.recordDelivery`) or a repeat of the class just named: the method alone.
    const label = owner !== undefined && (owner === lastClass || owner === 'Object') ? method : name;
    if (frames.at(-1) !== label) frames.push(label);
    lastClass = owner;
    if (frames.length === FRAMES) break;
  }
  return frames.length === 0 ? 'outside functions/' : frames.join(' < ');
}
