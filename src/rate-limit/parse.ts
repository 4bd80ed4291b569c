/** The rate-limit state a response reported through its `X-RateLimit-*` headers. */
export interface RateLimitInfo {
  /** Request limit that applies (`X-RateLimit-Limit`). */
  readonly limit: number;
  /** Requests left (`X-RateLimit-Remaining`). */
  readonly remaining: number;
  /** When the limit resets (`X-RateLimit-Reset`, a Unix timestamp in seconds). */
  readonly resetAt: Date;
}

/** A header holding a non-negative integer, or `undefined` when absent or malformed. */
export function integerHeader(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name);
  if (raw === null || !/^\s*\d+\s*$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Reads the three `X-RateLimit-*` headers; `undefined` unless all three are present and valid. */
export function parseRateLimit(headers: Headers): RateLimitInfo | undefined {
  const limit = integerHeader(headers, 'x-ratelimit-limit');
  const remaining = integerHeader(headers, 'x-ratelimit-remaining');
  const reset = integerHeader(headers, 'x-ratelimit-reset');
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return Object.freeze({ limit, remaining, resetAt: new Date(reset * 1000) });
}
