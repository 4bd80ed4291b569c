import { onAbort } from './abort.js';

/** Longest delay setTimeout honours; above it, it fires at once. Long waits are chained. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Resolves after `ms`; rejects with the signal's reason as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(signal.reason);
        })
      : undefined;
    const end = Date.now() + ms;
    const arm = (left: number) => {
      timer = setTimeout(
        () => {
          const rest = end - Date.now();
          if (left > MAX_TIMER_MS && rest > 0) return arm(rest);
          stop?.();
          resolve();
        },
        Math.min(Math.max(0, left), MAX_TIMER_MS),
      );
    };
    arm(ms);
  });
}
