import { parseRetryAfter } from '../retry/retry-after.js';

/** Why a 429 asks for the wait it does. */
export type RateLimitWaitSource = 'retry-after' | 'rate-limit-reset';

/**
 * How long a 429 response asks the client to wait: `Retry-After` when usable,
 * else until `X-RateLimit-Reset` when that lies in the future, else `undefined`
 * (the caller then backs off exponentially).
 */
export function rateLimitWait(
  headers: Headers,
  nowMs: number,
): { ms: number; source: RateLimitWaitSource } | undefined {
  const retryAfter = parseRetryAfter(headers.get('retry-after'), nowMs);
  if (retryAfter !== undefined) return { ms: retryAfter, source: 'retry-after' };
  const reset = headers.get('x-ratelimit-reset');
  if (reset !== null && /^\s*\d+\s*$/.test(reset)) {
    const ms = Number(reset) * 1000 - nowMs;
    if (ms > 0) return { ms, source: 'rate-limit-reset' };
  }
  return undefined;
}
