// Everything the SDK reads about time from a response, as pure functions of
// the headers and a clock reading: the X-RateLimit-* window, Retry-After, the
// server's clock (Date), and exponential back-off. Nothing here keeps state.

/** The rate-limit state a response reported through its `X-RateLimit-*` headers. */
export interface RateLimitInfo {
  /** Request limit that applies (`X-RateLimit-Limit`). */
  readonly limit: number;
  /** Requests left (`X-RateLimit-Remaining`). */
  readonly remaining: number;
  /** When the limit resets (`X-RateLimit-Reset`, a Unix timestamp in seconds). */
  readonly resetAt: Date;
}

/** A rate-limit window as the quota needs it: clock-free, so that any process can adopt it. */
export interface WindowReport {
  readonly limit: number;
  readonly remaining: number;
  /** `X-RateLimit-Reset` as sent: with `limit`, it names the window. */
  readonly resetId: number;
  /** Milliseconds from the response to the reset, on the service's clock. */
  readonly resetInMs: number;
}

/** Why a 429 asks for the wait it does. */
export type RateLimitWaitSource = 'retry-after' | 'rate-limit-reset';

/** What one response says about time, read once. */
export interface ResponseTiming {
  /** Whether any `X-RateLimit-*` header came at all (usable or not). */
  readonly rateLimitHeaders: boolean;
  /** The `X-RateLimit-*` values, when all three are present and credible. */
  readonly rateLimit: RateLimitInfo | undefined;
  /** The same window, for the quota. */
  readonly window: WindowReport | undefined;
  /** For a 429: the wait the service asks for, when it says. */
  readonly retryAfter: { readonly ms: number; readonly source: RateLimitWaitSource } | undefined;
  /** A 429's `Retry-After` asked for more than a day (and no reset gave a wait instead). */
  readonly retryAfterTooFar: boolean;
  /** Header values that were present but not believed, in words (for the `info` log). */
  readonly ignored: readonly string[];
}

/**
 * The longest wait or clock difference believed: the longest window the
 * interface knows is a day. Anything further away is a unit mistake (a reset
 * in milliseconds), a broken clock or an attack, and is ignored.
 */
export const HORIZON_MS = 86_400_000;

/**
 * How long a key cools down after a 429 whose `Retry-After` asked for more
 * than {@link HORIZON_MS}: not believed as given, but no sign to send again
 * soon either. A minute is the shortest window of the service's plans.
 */
export const DISBELIEVED_COOLDOWN_MS = 60_000;

// Below this, a difference between the response's Date and the local clock is
// latency or rounding (Date has whole seconds), not skew.
const SKEW_TOLERANCE_MS = 2_000;

/** First back-off wait, in milliseconds. */
export const BACKOFF_BASE_MS = 500;
/** Longest back-off wait, in milliseconds. */
export const BACKOFF_CAP_MS = 8_000;
/** Shortest back-off wait: a failing service never gets retries faster than this. */
export const BACKOFF_FLOOR_MS = 100;

/**
 * Exponential back-off with jitter for the wait after failed attempt
 * `attempt` (1-based): 500 ms, 1 s, 2 s, 4 s, 8 s… capped at 8 s, each
 * randomly shortened by up to half so that clients do not retry in lockstep.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * (1 - random() * 0.5));
}

/** A header holding a non-negative integer, or `undefined` when absent or malformed. */
function integerHeader(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name);
  if (raw === null || !/^\s*\d{1,16}\s*$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

// Quoted whole: the caller redacts the key before it shortens anything.
const excerpt = (value: string) => JSON.stringify(value);

/**
 * The service's "now" in local milliseconds: the response's `Date` when it
 * differs from the local clock by more than two seconds but less than the
 * horizon (the clocks are skewed, and `X-RateLimit-Reset` or an HTTP-date
 * `Retry-After` are in the server's time), else the local clock.
 */
function serverNow(headers: Headers, nowMs: number, ignored: string[]): number {
  const date = headers.get('date');
  if (date === null) return nowMs;
  const at = Date.parse(date);
  if (Number.isNaN(at)) return nowMs;
  const skew = Math.abs(at - nowMs);
  if (skew <= SKEW_TOLERANCE_MS) return nowMs;
  if (skew > HORIZON_MS) {
    ignored.push(`Date ${excerpt(date)} (more than a day from the local clock)`);
    return nowMs;
  }
  return at;
}

const DELTA_SECONDS = /^\s*(\d+(?:\.\d+)?)\s*$/;

function parseOne(value: string, serverMs: number): number | undefined {
  const delta = DELTA_SECONDS.exec(value);
  if (delta) return Math.ceil(Number(delta[1]) * 1000);
  // An HTTP-date always names a weekday and GMT; Date.parse alone accepts far too much.
  if (!/GMT\s*$/i.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - serverMs);
}

// Headers joins repeated fields with ", "; an HTTP-date has a comma of its own after the weekday.
function splitValues(value: string): string[] {
  const parts: string[] = [];
  for (const piece of value.split(',')) {
    const last = parts.length - 1;
    if (last >= 0 && /^\s*[A-Za-z]{3}\s*$/.test(parts[last]!)) parts[last] += `,${piece}`;
    else parts.push(piece);
  }
  return parts;
}

/**
 * Milliseconds to wait according to a `Retry-After` value, given as
 * delta-seconds (`"120"`, also fractional) or an HTTP-date, against the
 * server's clock `serverMs`. `undefined` when the value is missing or unusable
 * (negative, garbage): the caller then falls back to other signals instead of
 * giving up retrying. When the header was sent more than once (values joined
 * by commas), the longest wait wins. Not bounded: see {@link readTiming}.
 */
export function parseRetryAfter(value: string | null, serverMs: number): number | undefined {
  if (value === null) return undefined;
  const whole = parseOne(value, serverMs);
  if (whole !== undefined) return whole;
  let longest: number | undefined;
  for (const part of splitValues(value)) {
    const ms = parseOne(part, serverMs);
    if (ms !== undefined && (longest === undefined || ms > longest)) longest = ms;
  }
  return longest;
}

function readWindow(
  headers: Headers,
  server: number,
  ignored: string[],
): { info: RateLimitInfo; window: WindowReport } | undefined {
  const limit = integerHeader(headers, 'x-ratelimit-limit');
  const remaining = integerHeader(headers, 'x-ratelimit-remaining');
  const reset = integerHeader(headers, 'x-ratelimit-reset');
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  const resetInMs = reset * 1000 - server;
  if (Math.abs(resetInMs) > HORIZON_MS) {
    ignored.push(
      `X-RateLimit-Reset ${reset} (not within a day of the service's clock; it should be a Unix time in seconds)`,
    );
    return undefined;
  }
  return {
    info: Object.freeze({ limit, remaining, resetAt: new Date(reset * 1000) }),
    window: { limit, remaining, resetId: reset, resetInMs },
  };
}

/**
 * Reads what a response says about time: its rate-limit window, and for a
 * 429 the wait it asks for (`Retry-After` when usable, else until the window's
 * reset when that lies ahead). Values beyond {@link HORIZON_MS} are ignored
 * and listed in `ignored`; nothing here can throw.
 */
export function readTiming(headers: Headers, status: number, nowMs: number): ResponseTiming {
  const ignored: string[] = [];
  const server = serverNow(headers, nowMs, ignored);
  const read = readWindow(headers, server, ignored);
  let retryAfter: ResponseTiming['retryAfter'];
  let tooFar = false;
  if (status === 429) {
    const raw = headers.get('retry-after');
    const ms = parseRetryAfter(raw, server);
    if (ms !== undefined && ms <= HORIZON_MS) retryAfter = { ms, source: 'retry-after' };
    else {
      if (ms !== undefined) {
        ignored.push(`Retry-After ${excerpt(raw ?? '')} (more than a day)`);
        tooFar = true;
      }
      const untilReset = read?.window.resetInMs;
      if (untilReset !== undefined && untilReset > 0) {
        retryAfter = { ms: untilReset, source: 'rate-limit-reset' };
      }
    }
  }
  const rateLimitHeaders =
    read !== undefined ||
    headers.has('x-ratelimit-limit') ||
    headers.has('x-ratelimit-remaining') ||
    headers.has('x-ratelimit-reset');
  return {
    rateLimitHeaders,
    rateLimit: read?.info,
    window: read?.window,
    retryAfter,
    ignored,
    retryAfterTooFar: tooFar && !retryAfter,
  };
}
