import { ConnectionError } from '../errors/ConnectionError.js';
import { RateLimitError } from '../errors/RateLimitError.js';
import { ServerError } from '../errors/ServerError.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import { rateLimitWait } from '../rate-limit/wait.js';
import { backoffDelay } from './backoff.js';

/** Why the client waits before retrying. */
export type RetryReason =
  | 'retry-after'
  | 'rate-limit-reset'
  | 'rate-limited'
  | 'server-error'
  | 'connection-error'
  | 'timeout';

/** A decision to retry after `delayMs`, and why. `mandated` waits come from the service and are never shortened. */
export interface RetryDecision {
  readonly delayMs: number;
  readonly reason: RetryReason;
  readonly mandated: boolean;
}

function backoff(reason: RetryReason, attempt: number, random: () => number): RetryDecision {
  return { delayMs: backoffDelay(attempt, random), reason, mandated: false };
}

/**
 * Decides whether a failed attempt is retried, and after how long.
 * 429 is retried for every method; 5xx, timeouts and connection errors only
 * for GET, since a retried POST could add the animal twice; nothing else.
 */
export function decideRetry(
  error: unknown,
  method: 'GET' | 'POST',
  failedAttempt: number,
  nowMs: number,
  random: () => number = Math.random,
): RetryDecision | undefined {
  if (error instanceof RateLimitError) {
    const wait = rateLimitWait(error.headers, nowMs);
    if (wait) return { delayMs: wait.ms, reason: wait.source, mandated: true };
    return backoff('rate-limited', failedAttempt, random);
  }
  if (method !== 'GET') return undefined;
  if (error instanceof ServerError && error.status >= 500) {
    return backoff('server-error', failedAttempt, random);
  }
  if (error instanceof TimeoutError) return backoff('timeout', failedAttempt, random);
  if (error instanceof ConnectionError) return backoff('connection-error', failedAttempt, random);
  return undefined;
}
