import { vi } from 'vitest';

/** Fakes setTimeout and Date only, so fetch internals (microtasks, setImmediate) keep running. */
export function useFakeTime(start = Date.UTC(2026, 0, 1)): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: start });
}

/** Lets pending promises settle without moving the clock. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(0);
}
