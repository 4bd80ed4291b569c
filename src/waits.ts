import { BACKOFF_FLOOR_MS } from './timing.js';

/**
 * The one comparison of a wait with `maxRetryDelayMs`: how long to wait, or
 * `undefined` when the wait is not to be taken (the call fails instead). A
 * wait the service demands (`mandated`: Retry-After, a reset, a hold) is never
 * shortened; a back-off is capped at `maxRetryDelayMs`, but never below
 * {@link BACKOFF_FLOOR_MS}, so that no option makes retries a hot loop.
 */
export function waitToTake(
  ms: number,
  mandated: boolean,
  maxRetryDelayMs: number,
): number | undefined {
  if (ms <= maxRetryDelayMs) return ms;
  if (mandated || maxRetryDelayMs < BACKOFF_FLOOR_MS) return undefined;
  return maxRetryDelayMs;
}
