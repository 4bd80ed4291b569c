import { parseRetryAfter } from '../retry/retry-after.js';
import { integerHeader } from './parse.js';

/** Why a 429 asks for the wait it does. */
export type RateLimitWaitSource = 'retry-after' | 'rate-limit-reset';

// Below this, a difference between the response's Date and the local clock is
// latency or rounding (Date has whole seconds), not skew.
const SKEW_TOLERANCE_MS = 2_000;

/**
 * The service's "now" in local milliseconds: the response's `Date` header when
 * it differs from the local clock by more than two seconds (the clocks are
 * skewed, and `X-RateLimit-Reset` or an HTTP-date `Retry-After` are in the
 * server's time), else the local clock.
 */
function serverNow(headers: Headers, nowMs: number): number {
  const date = headers.get('date');
  if (date === null) return nowMs;
  const at = Date.parse(date);
  return Number.isNaN(at) || Math.abs(at - nowMs) <= SKEW_TOLERANCE_MS ? nowMs : at;
}

/** Milliseconds until `X-RateLimit-Reset`, when it is valid and in the future. */
export function resetWait(headers: Headers, nowMs: number): number | undefined {
  const reset = integerHeader(headers, 'x-ratelimit-reset');
  if (reset === undefined) return undefined;
  const ms = reset * 1000 - serverNow(headers, nowMs);
  return ms > 0 ? ms : undefined;
}

/**
 * How long a 429 response asks the client to wait: `Retry-After` when usable,
 * else until `X-RateLimit-Reset` when that lies in the future, else `undefined`
 * (the caller then backs off exponentially).
 */
export function rateLimitWait(
  headers: Headers,
  nowMs: number,
): { ms: number; source: RateLimitWaitSource } | undefined {
  const retryAfter = parseRetryAfter(headers.get('retry-after'), serverNow(headers, nowMs));
  if (retryAfter !== undefined) return { ms: retryAfter, source: 'retry-after' };
  const reset = resetWait(headers, nowMs);
  return reset === undefined ? undefined : { ms: reset, source: 'rate-limit-reset' };
}
