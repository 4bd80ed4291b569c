// Every decision about waiting, as pure functions of what is known: whether a
// failed attempt is retried and after how long, how long the key cools down,
// and whether a wait is too long to take. Nothing here reads a clock or
// keeps state; `random` is the only input that is not a plain value.
import type { RetryReason } from './observe.js';

/** Back-off after a failure: from 500 ms, doubling up to 8 s. */
export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 8_000;
/** Shortest wait after a failure: a failing service never gets retries faster than this. */
export const BACKOFF_FLOOR_MS = 100;
/**
 * How long a key cools down after a 429 whose `Retry-After` asked for more
 * than a day: not believed as given, but no sign to send again soon either.
 * A minute is the shortest window of the service's plans.
 */
export const DISBELIEVED_COOLDOWN_MS = 60_000;
/**
 * Back-off after a 429 that says nothing of when to come back: from 1 s up to
 * ten minutes, by the key's 429s in a row; past `maxRetryDelayMs`, calls fail.
 */
export const LEARNT_BASE_MS = 1_000;
export const LEARNT_CAP_MS = 600_000;

/**
 * Exponential back-off with jitter for the `n`-th failure in a row (1-based):
 * `base` doubling up to `cap`, randomly shortened by up to half so that
 * clients do not retry in lockstep (`random` of `() => 0`: no jitter).
 */
export function backoffDelay(
  n: number,
  random: () => number = Math.random,
  base = BACKOFF_BASE_MS,
  cap = BACKOFF_CAP_MS,
): number {
  return Math.round(Math.min(cap, base * 2 ** Math.max(0, n - 1)) * (1 - random() * 0.5));
}

/**
 * How long the key is held after the `silent`-th request in a row that got
 * no response (timeoutMs below the service's latency, say): 100 ms doubling
 * up to 8 s, so that such requests never turn into a loop of probes.
 */
export const silentCooldown = (silent: number) =>
  backoffDelay(silent, () => 0, BACKOFF_FLOOR_MS, BACKOFF_CAP_MS);

/**
 * The one comparison of a wait with `maxRetryDelayMs`, for retries and holds
 * alike: how long to wait, or `undefined` when the wait is not to be taken
 * (the call fails instead). A wait the service demands (`mandated`:
 * Retry-After, a reset, a hold) is never shortened; a back-off is capped at
 * `maxRetryDelayMs`, but never below {@link BACKOFF_FLOOR_MS}, so that no
 * option makes retries a hot loop.
 */
export function waitToTake(ms: number, mandated: boolean, maxRetryDelayMs: number) {
  if (ms <= maxRetryDelayMs) return ms;
  return mandated || maxRetryDelayMs < BACKOFF_FLOOR_MS ? undefined : maxRetryDelayMs;
}

/**
 * How long a held request waits at most: a hold with an end (a cooldown, a
 * window's reset) as a mandated wait; one until a response arrives (`waitMs`
 * undefined), what is left of `maxRetryDelayMs` since it began `heldForMs`
 * ago. `undefined`: the call fails instead of waiting.
 */
export function holdToTake(waitMs: number | undefined, heldForMs: number, maxRetryDelayMs: number) {
  if (waitMs !== undefined) return waitToTake(waitMs, true, maxRetryDelayMs);
  return heldForMs < maxRetryDelayMs ? maxRetryDelayMs - heldForMs : undefined;
}

/** How an attempt ended, as far as waiting is concerned. */
export type Outcome =
  /** No response: a timeout, a connection error, or a body that broke off (`status` then set). */
  | {
      readonly kind: 'no-response';
      readonly timedOut: boolean;
      readonly status?: number | undefined;
    }
  /** A response; for a 429, the wait it asks for, or that it asked for more than a day. */
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly retryAfter?: { readonly ms: number; readonly source: RetryReason } | undefined;
      readonly retryAfterTooFar?: boolean;
    };

/** What the call knows besides the outcome. */
export interface Situation {
  /** The operation may be sent again after a 5xx or no response (a POST could add the animal twice). */
  readonly resend: boolean;
  /** Attempts sent so far, the failed one included. */
  readonly attempt: number;
  /** 429s in a row for the key, this one included. */
  readonly strikes?: number;
  readonly maxRetryDelayMs: number;
  readonly random: () => number;
}

/** The decision on a failed attempt. */
export interface Decision {
  /**
   * Wait this long, then try again; `undefined`: the call fails with the
   * attempt's error. `held`: the wait is the key's cooldown, which the quota
   * holds every call for (this one's next attempt included), so it is taken there.
   */
  readonly retry?: { readonly delayMs: number; readonly reason: RetryReason; readonly held?: true };
  /** For a 429: how long the key cools down for every caller, from now. */
  readonly cooldownMs?: number;
  /** For a 429: the wait was asked for but is longer than the client takes. */
  readonly tooLong?: boolean;
}

/**
 * Whether a failed attempt is retried, after how long and why. A 429 waits
 * what the service asks (never less than {@link BACKOFF_FLOOR_MS}, even for
 * `Retry-After: 0`), else backs off by the key's 429s in a row (1 s doubling
 * up to ten minutes, with jitter: a limiter that says nothing is given time to
 * recover), and cools the key down as long; a wait past `maxRetryDelayMs`
 * fails the call instead. A 429 asking more than a day is not believed, cools
 * the key a minute, and is not retried. A 5xx, a timeout
 * or no response backs off, for operations that may be resent. Anything else
 * (400, 401, 404, a body that does not validate) is final. Whether retries
 * are left is p-retry's count, not this.
 */
export function decide(outcome: Outcome, situation: Situation): Decision {
  const { resend, attempt, strikes = 1, maxRetryDelayMs, random } = situation;
  const { status = 0 } = outcome;
  if (outcome.kind === 'no-response' || status >= 500) {
    const reason =
      outcome.kind === 'response'
        ? 'server-error'
        : outcome.timedOut
          ? 'timeout'
          : 'connection-error';
    const delayMs = resend
      ? waitToTake(backoffDelay(attempt, random), false, maxRetryDelayMs)
      : undefined;
    return delayMs === undefined ? {} : { retry: { delayMs, reason } };
  }
  if (status !== 429) return {};
  if (outcome.retryAfterTooFar) return { cooldownMs: DISBELIEVED_COOLDOWN_MS, tooLong: true };
  const asked = outcome.retryAfter;
  // 429s in a row each wait at least 100 ms doubling, whatever they ask: a
  // `Retry-After: 0` to every request must not become a loop.
  const floor = backoffDelay(strikes, () => 0, BACKOFF_FLOOR_MS, LEARNT_CAP_MS);
  const guess = backoffDelay(strikes, random, LEARNT_BASE_MS, LEARNT_CAP_MS);
  const wanted = Math.max(floor, asked?.ms ?? guess);
  // The first back-off of the client's own may be capped at maxRetryDelayMs;
  // one after 429s in a row is the key's, never shortened.
  const delayMs = waitToTake(wanted, asked !== undefined || strikes > 1, maxRetryDelayMs);
  if (delayMs === undefined) return { cooldownMs: wanted, tooLong: true };
  // The key cools down as long as the retry waits: a back-off of the client's
  // own, capped at maxRetryDelayMs, is capped for every caller alike.
  return {
    cooldownMs: delayMs,
    retry: { delayMs, reason: asked?.source ?? 'rate-limited', held: true },
  };
}
