import { describe, expect, it } from 'vitest';
import { RateLimitError, ServerError } from '../src/index.js';
import { parseRateLimit } from '../src/rate-limit/parse.js';
import { rateLimitWait } from '../src/rate-limit/wait.js';
import { backoffDelay } from '../src/retry/backoff.js';
import { decideRetry } from '../src/retry/policy.js';
import { parseRetryAfter } from '../src/retry/retry-after.js';

const now = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('parseRetryAfter', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 7 ', 7000],
    ['1.5', 1500],
    ['0.0001', 1],
    ['Thu, 01 Jan 2026 12:00:30 GMT', 30_000],
    ['Thu, 01 Jan 2026 11:00:00 GMT', 0],
    ['5, 5', 5000],
    ['2, 9', 9000],
    ['Thu, 01 Jan 2026 12:00:10 GMT, Thu, 01 Jan 2026 12:00:20 GMT', 20_000],
  ])('reads %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it.each([null, '', '-1', '-5', 'soon', 'NaN', '1e3', 'Infinity', '2026-01-01', '12:00:30'])(
    'finds %j unusable',
    (value) => {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    },
  );
});

describe('backoffDelay', () => {
  it('doubles from 500 ms up to 8 s, shortened by at most half', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((a) => backoffDelay(a, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect([1, 2, 3].map((a) => backoffDelay(a, () => 0.999_999))).toEqual([250, 500, 1000]);
  });
});

describe('parseRateLimit', () => {
  it('reads all three headers, and nothing unless all three are valid', () => {
    const full = new Headers({
      'X-RateLimit-Limit': '300',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '1767268800',
    });
    expect(parseRateLimit(full)).toEqual({
      limit: 300,
      remaining: 0,
      resetAt: new Date(1_767_268_800_000),
    });
    full.set('x-ratelimit-remaining', '-1');
    expect(parseRateLimit(full)).toBeUndefined();
    expect(parseRateLimit(new Headers())).toBeUndefined();
  });
});

describe('rateLimitWait', () => {
  it('prefers Retry-After, then a future X-RateLimit-Reset, else nothing', () => {
    const reset = String(now / 1000 + 8);
    expect(
      rateLimitWait(new Headers({ 'retry-after': '3', 'x-ratelimit-reset': reset }), now),
    ).toEqual({
      ms: 3000,
      source: 'retry-after',
    });
    expect(rateLimitWait(new Headers({ 'x-ratelimit-reset': reset }), now)).toEqual({
      ms: 8000,
      source: 'rate-limit-reset',
    });
    expect(
      rateLimitWait(new Headers({ 'x-ratelimit-reset': String(now / 1000 - 8) }), now),
    ).toBeUndefined();
  });
});

describe('decideRetry', () => {
  const headers = new Headers({ 'retry-after': '2' });
  const limited = new RateLimitError('r', { status: 429, code: 'c', headers });
  const down = new ServerError('s', { status: 503, code: 'c', headers: new Headers() });
  const odd = new ServerError('s', { status: 302, code: 'c', headers: new Headers() });

  it('retries 429 for any method with the mandated wait', () => {
    expect(decideRetry(limited, 'POST', 1, now)).toEqual({
      delayMs: 2000,
      reason: 'retry-after',
      mandated: true,
    });
  });

  it('retries 5xx for GET only, and not other unexpected statuses', () => {
    expect(decideRetry(down, 'GET', 1, now, () => 0)).toEqual({
      delayMs: 500,
      reason: 'server-error',
      mandated: false,
    });
    expect(decideRetry(down, 'POST', 1, now)).toBeUndefined();
    expect(decideRetry(odd, 'GET', 1, now)).toBeUndefined();
  });
});

describe('clock skew', () => {
  it('measures X-RateLimit-Reset and HTTP-date Retry-After against the server’s Date when the clocks disagree', () => {
    const serverTime = now + 3_600_000;
    const headers = new Headers({
      date: new Date(serverTime).toUTCString(),
      'x-ratelimit-reset': String(serverTime / 1000 + 5),
    });
    expect(rateLimitWait(headers, now)).toEqual({ ms: 5000, source: 'rate-limit-reset' });
    headers.set('retry-after', new Date(serverTime + 7000).toUTCString());
    expect(rateLimitWait(headers, now)).toEqual({ ms: 7000, source: 'retry-after' });
  });

  it('keeps the local clock when Date is within two seconds of it', () => {
    const headers = new Headers({
      date: new Date(now - 1500).toUTCString(),
      'x-ratelimit-reset': String(now / 1000 + 5),
    });
    expect(rateLimitWait(headers, now)).toEqual({ ms: 5000, source: 'rate-limit-reset' });
  });
});
