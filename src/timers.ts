// One listener per signal, however many calls share it (no MaxListenersExceededWarning).
const callbacks = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `callback` once when `signal` aborts; the returned function stops that. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let set = callbacks.get(signal);
  if (!set) {
    const all = new Set<() => void>();
    set = all;
    callbacks.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        for (const call of [...all]) call();
        all.clear();
      },
      { once: true },
    );
  }
  const mine = set;
  mine.add(callback);
  return () => {
    mine.delete(callback);
  };
}

/** Longest delay setTimeout honours; above it, it fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

interface Kept {
  timer: ReturnType<typeof setTimeout>;
  made: typeof setTimeout;
  ms: number;
  fire: (() => void) | undefined;
  fired?: true;
}

// Node's timers of ended attempts, idle (unref'd: they hold no process open), restarted by
// `refresh()` before they fire: set and cleared alone in its list, a new one cost about 2 µs a
// getPet on a stub fetch (CPU time, medians of 10 alternating runs, Node 20). Only one made by the
// `setTimeout` now in place (not a fake timer's, nor a real one under fake timers) is used again.
const kept: Kept[] = [];

/** Calls `fire` after `ms`; the returned function stops that (once, or more: the same). */
export function alarm(ms: number, fire: () => void): () => void {
  const made = globalThis.setTimeout;
  let one = kept.pop();
  if (one && !one.fired && one.ms === ms && one.made === made) {
    one.fire = fire;
    one.timer.ref();
    one.timer.refresh();
  } else {
    // Another is left to fire idle, once.
    const slot = { made, ms, fire } as Kept;
    slot.timer = setTimeout(() => {
      slot.fired = true;
      slot.fire?.();
    }, ms);
    const { timer } = slot;
    // A browser's timer is a number: cleared, never used again.
    if (typeof (timer as Partial<typeof timer> | null)?.refresh !== 'function') {
      return () => clearTimeout(timer);
    }
    one = slot;
  }
  const mine = one;
  return () => {
    if (mine.fire !== fire) return;
    mine.fire = undefined;
    if (mine.fired || kept.length >= 16) return clearTimeout(mine.timer);
    mine.timer.unref();
    kept.push(mine);
  };
}

/** `promise`, settled early (resolved) when `signal` aborts. */
export function untilAborted(
  promise: Promise<void> | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (!promise || signal.aborted) return Promise.resolve();
  let stop: (() => void) | undefined;
  const aborted = new Promise<void>((resolve) => {
    stop = onAbort(signal, resolve);
  });
  return Promise.race([promise, aborted]).finally(() => stop?.());
}
