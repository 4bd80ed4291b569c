/** First back-off wait, in milliseconds. */
export const BACKOFF_BASE_MS = 500;
/** Longest back-off wait, in milliseconds. */
export const BACKOFF_CAP_MS = 8_000;

/**
 * Exponential back-off with jitter for the wait after failed attempt
 * `attempt` (1-based): 500 ms, 1 s, 2 s, 4 s, 8 s… capped at 8 s, each
 * randomly shortened by up to half so that clients do not retry in lockstep.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * (1 - random() * 0.5));
}
