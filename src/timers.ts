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

/** Resolves after `ms`; rejects with the signal's reason as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const stop = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(signal.reason);
        })
      : undefined;
    const timer = setTimeout(() => {
      stop?.();
      resolve();
    }, ms);
  });
}
