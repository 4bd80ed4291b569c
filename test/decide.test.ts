// Every decision about waiting, without a clock: decide() is a pure function.
import { describe, expect, it } from 'vitest';
import {
  BACKOFF_FLOOR_MS,
  backoffDelay,
  DISBELIEVED_COOLDOWN_MS,
  decide,
  holdToTake,
  silentCooldown,
  waitToTake,
} from '../src/quota/Quota.js';

const at = (attempt: number, resend = true, maxRetryDelayMs = 60_000) => ({
  resend,
  attempt,
  maxRetryDelayMs,
  random: () => 0,
});

describe('backoffDelay', () => {
  it('doubles from 500 ms up to 8 s, shortened by at most half', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((a) => backoffDelay(a, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect([1, 2, 3].map((a) => backoffDelay(a, () => 0.999_999))).toEqual([250, 500, 1000]);
  });
});

describe('waitToTake', () => {
  it('takes a wait within maxRetryDelayMs as it is', () => {
    expect(waitToTake(3000, true, 3000)).toBe(3000);
    expect(waitToTake(3000, false, 60_000)).toBe(3000);
  });

  it('refuses a demanded wait beyond maxRetryDelayMs, and caps a back-off at it', () => {
    expect(waitToTake(3001, true, 3000)).toBeUndefined();
    expect(waitToTake(8000, false, 3000)).toBe(3000);
  });

  it('never caps a back-off below the floor: with maxRetryDelayMs 0 nothing is retried', () => {
    expect(waitToTake(500, false, 0)).toBeUndefined();
    expect(waitToTake(500, false, BACKOFF_FLOOR_MS - 1)).toBeUndefined();
    expect(waitToTake(500, false, BACKOFF_FLOOR_MS)).toBe(BACKOFF_FLOOR_MS);
  });
});

describe('decide', () => {
  it('takes a wait until a reset that reads up to 2 s past maxRetryDelayMs (whole seconds, and Date), never a Retry-After', () => {
    const reset = (ms: number) => ({ ms, source: 'rate-limit-reset' as const });
    const minute = decide({ kind: 'response', status: 429, retryAfter: reset(61_958) }, at(1));
    expect(minute.retry?.delayMs).toBe(61_958);
    expect(decide({ kind: 'response', status: 429, retryAfter: reset(62_001) }, at(1))).toEqual({
      cooldownMs: 62_001,
      tooLong: true,
    });
    const asked = { ms: 60_001, source: 'retry-after' as const };
    expect(decide({ kind: 'response', status: 429, retryAfter: asked }, at(1)).tooLong).toBe(true);
    // A thirtieth of a small maxRetryDelayMs: 3 s takes 100 ms more, no more.
    expect(
      decide({ kind: 'response', status: 429, retryAfter: reset(3_100) }, at(1, true, 3000)),
    ).toMatchObject({ retry: { delayMs: 3_100 } });
    expect(
      decide({ kind: 'response', status: 429, retryAfter: reset(3_101) }, at(1, true, 3000))
        .tooLong,
    ).toBe(true);
  });

  it('waits what a 429 asks, never less than the floor, and cools the key as long', () => {
    const asked = { ms: 3000, source: 'retry-after' as const };
    expect(decide({ kind: 'response', status: 429, retryAfter: asked }, at(1))).toEqual({
      cooldownMs: 3000,
      retry: { delayMs: 3000, reason: 'retry-after', held: true },
    });
    const zero = { ms: 0, source: 'retry-after' as const };
    expect(decide({ kind: 'response', status: 429, retryAfter: zero }, at(1))).toEqual({
      cooldownMs: BACKOFF_FLOOR_MS,
      retry: { delayMs: BACKOFF_FLOOR_MS, reason: 'retry-after', held: true },
    });
  });

  it('retries a 429 even for a POST, and backs off by the key’s 429s in a row when it says nothing', () => {
    for (const [strikes, ms] of [
      [1, 1000],
      [2, 2000],
      [6, 32_000],
      [7, 64_000],
      [10, 512_000],
      [20, 600_000],
    ] as const) {
      const decision = decide({ kind: 'response', status: 429 }, { ...at(1, false), strikes });
      expect(decision).toEqual(
        ms <= 60_000
          ? { cooldownMs: ms, retry: { delayMs: ms, reason: 'rate-limited', held: true } }
          : { cooldownMs: ms, tooLong: true },
      );
    }
    // The first back-off may be capped at maxRetryDelayMs; one after 429s in a row is the key's.
    const capped = at(1, false, 300);
    expect(
      decide({ kind: 'response', status: 429 }, { ...capped, strikes: 1 }).retry?.delayMs,
    ).toBe(300);
    expect(decide({ kind: 'response', status: 429 }, { ...capped, strikes: 2 })).toEqual({
      cooldownMs: 2000,
      tooLong: true,
    });
    // 429s in a row wait at least 100 ms doubling, whatever they ask.
    const zero = { ms: 0, source: 'retry-after' as const };
    const waits = [1, 2, 3, 8].map(
      (strikes) =>
        decide({ kind: 'response', status: 429, retryAfter: zero }, { ...at(1), strikes })
          .cooldownMs,
    );
    expect(waits).toEqual([100, 200, 400, 12_800]);
    const half = { ...at(1), strikes: 2, random: () => 0.999_999 };
    expect(decide({ kind: 'response', status: 429 }, half).cooldownMs).toBe(1000);
  });

  it('fails a 429 whose wait is longer than maxRetryDelayMs, and says it was too long', () => {
    const asked = { ms: 5200, source: 'rate-limit-reset' as const };
    expect(decide({ kind: 'response', status: 429, retryAfter: asked }, at(1, true, 4999))).toEqual(
      { cooldownMs: 5200, tooLong: true },
    );
  });

  it('never retries a 429 that asked for more than a day, and cools the key a minute', () => {
    expect(decide({ kind: 'response', status: 429, retryAfterTooFar: true }, at(1))).toEqual({
      cooldownMs: DISBELIEVED_COOLDOWN_MS,
      tooLong: true,
    });
  });

  it('backs off after a 5xx, a timeout or no response, only when the operation may be resent', () => {
    expect(decide({ kind: 'response', status: 503 }, at(1))).toEqual({
      retry: { delayMs: 500, reason: 'server-error' },
    });
    expect(decide({ kind: 'no-response', timedOut: true }, at(3))).toEqual({
      retry: { delayMs: 2000, reason: 'timeout' },
    });
    expect(decide({ kind: 'no-response', timedOut: false, status: 200 }, at(1))).toEqual({
      retry: { delayMs: 500, reason: 'connection-error' },
    });
    expect(decide({ kind: 'response', status: 502 }, at(1, false))).toEqual({});
    expect(decide({ kind: 'no-response', timedOut: false }, at(1, false))).toEqual({});
  });

  it('caps a back-off at maxRetryDelayMs, and gives up below the floor', () => {
    expect(decide({ kind: 'response', status: 500 }, at(5, true, 3000)).retry?.delayMs).toBe(3000);
    expect(decide({ kind: 'response', status: 500 }, at(5, true, 50))).toEqual({});
  });

  it("waits a 5xx's Retry-After when longer than the back-off, never cut short, and not for a POST", () => {
    const asks = (ms: number) =>
      ({ kind: 'response', status: 503, retryAfter: { ms, source: 'retry-after' } }) as const;
    expect(decide(asks(100), at(1)).retry?.delayMs).toBe(500);
    expect(decide(asks(2500), at(1, true, 3000)).retry).toEqual({
      delayMs: 2500,
      reason: 'server-error',
    });
    expect(decide(asks(5000), at(1, true, 3000))).toEqual({ tooLong: true });
    expect(decide(asks(5000), at(1, false, 3000))).toEqual({});
  });

  it.each([400, 401, 404, 418, 200])('never retries a %i', (status) => {
    expect(decide({ kind: 'response', status }, at(1))).toEqual({});
  });
});

describe('silentCooldown', () => {
  it('holds the key 100 ms after a request that got no response, doubling up to 8 s', () => {
    expect([1, 2, 3, 7, 8, 20].map(silentCooldown)).toEqual([100, 200, 400, 6400, 8000, 8000]);
  });
});

describe('holdToTake', () => {
  it('takes a hold with an end whole or not at all, and bounds one until a response by what is left', () => {
    expect(holdToTake(5000, 0, 5000)).toBe(5000);
    expect(holdToTake(5001, 0, 5000)).toBeUndefined();
    expect(holdToTake(undefined, 0, 5000)).toBe(5000);
    expect(holdToTake(undefined, 4000, 5000)).toBe(1000);
    expect(holdToTake(undefined, 5000, 5000)).toBeUndefined();
  });
});
