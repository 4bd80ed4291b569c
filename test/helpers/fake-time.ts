import { vi } from 'vitest';

// Midnight UTC of the day the tests run: every test's clock is laid out from
// it, so that no assertion depends on the calendar date.
const MIDNIGHT = Math.floor(Date.now() / 86_400_000) * 86_400_000;

/** The test run's own day at `hours:minutes:seconds` UTC, in epoch milliseconds. */
export const today = (hours = 0, minutes = 0, seconds = 0): number =>
  MIDNIGHT + ((hours * 60 + minutes) * 60 + seconds) * 1000;

/** Fakes setTimeout and Date only, so fetch internals (microtasks, setImmediate) keep running. */
export function useFakeTime(start = today()): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: start });
}

/** Lets pending promises settle without moving the clock. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(0);
}

/** A Unix time in seconds, `offset` seconds from the test's clock (faked or not). */
export const seconds = (offset: number) => String(Math.floor(Date.now() / 1000) + offset);

/** The interface's rate-limit headers: `remaining` of `limit`, resetting in `resetIn` seconds. */
export const limits = (remaining: number, resetIn = 60, limit = 60) => ({
  'x-ratelimit-limit': String(limit),
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': seconds(resetIn),
});
