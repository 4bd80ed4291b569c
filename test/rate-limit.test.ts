import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimitError } from '../src/index.js';
import { limits, settle, useFakeTime } from './helpers/fake-time.js';
import { apiError, clientWith, json, rex, scriptedFetch } from './helpers/scripted-fetch.js';

beforeEach(() => useFakeTime());
afterEach(() => vi.useRealTimers());

describe('rate-limit state', () => {
  it('is undefined before any response and holds the last X-RateLimit-* values after', async () => {
    const stub = scriptedFetch(json([rex], 200, limits(59)), json([rex], 200, limits(58)));
    const client = clientWith(stub.fetch);
    expect(client.rateLimit).toBeUndefined();
    await client.listPets();
    expect(client.rateLimit?.remaining).toBe(59);
    await client.listPets();
    expect(client.rateLimit).toEqual({
      limit: 60,
      remaining: 58,
      resetAt: new Date((Math.floor(Date.now() / 1000) + 60) * 1000),
    });
  });

  it('ignores incomplete or malformed rate-limit headers', async () => {
    const stub = scriptedFetch(
      json([], 200, { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': 'many' }),
    );
    const client = clientWith(stub.fetch);
    await client.listPets();
    expect(client.rateLimit).toBeUndefined();
  });

  it('also updates from error responses, and puts them on the error', async () => {
    const stub = scriptedFetch(apiError(404, limits(10)));
    const client = clientWith(stub.fetch);
    const error = await client.getPet(9).catch((e: unknown) => e);
    expect(client.rateLimit?.remaining).toBe(10);
    expect((error as RateLimitError).rateLimit?.remaining).toBe(10);
  });
});

describe('client-wide cooldown', () => {
  it('holds the client’s other calls while one waits out a 429', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '2' })).thenAlways(json([rex]));
    const client = clientWith(stub.fetch);
    const first = client.listPets();
    await settle();
    expect(stub.received).toHaveLength(1);
    const second = client.listPets();
    const third = client.getPet(1).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(1999);
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all([first, second, third]);
    expect(stub.received).toHaveLength(4);
    const start = stub.received[0]!.at;
    for (const r of stub.received.slice(1)) expect(r.at - start).toBeGreaterThanOrEqual(2000);
  });

  it('holds calls once X-RateLimit-Remaining is 0 until X-RateLimit-Reset', async () => {
    const stub = scriptedFetch(json([rex], 200, limits(0, 5))).thenAlways(
      json([rex], 200, limits(59)),
    );
    const client = clientWith(stub.fetch);
    await client.listPets();
    const next = client.listPets();
    await vi.advanceTimersByTimeAsync(4999);
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await next;
    expect(stub.received).toHaveLength(2);
  });

  it("holds calls for a minute's window read as 61 s (a reset in whole seconds) under the default maxRetryDelayMs", async () => {
    const stub = scriptedFetch(json([rex], 200, limits(0, 61))).thenAlways(json([rex]));
    const client = clientWith(stub.fetch);
    await client.listPets();
    const next = client.listPets();
    await vi.advanceTimersByTimeAsync(60_999);
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await next;
    expect(stub.received).toHaveLength(2);
  });

  it('fails at once, sending nothing, when the hold is longer than maxRetryDelayMs', async () => {
    const stub = scriptedFetch(json([rex], 200, limits(0, 3600))).thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { maxRetryDelayMs: 10_000 });
    await client.listPets();
    const error = await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect((error as RateLimitError).status).toBe(429);
    expect(stub.received).toHaveLength(1);
  });

  it('keeps other calls out after a 429 whose wait was too long to take, saying what to raise', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '600' })).thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { maxRetryDelayMs: 1000 });
    await expect(client.listPets()).rejects.toThrow(
      /asks to wait 600000 ms \(until \d{4}-\d\d-\d\dT[\d:.]+Z\), longer than maxRetryDelayMs \(1000 ms\), so the client did not wait\. Raise maxRetryDelayMs to wait that long, or try again later\.$/,
    );
    await expect(client.listPets()).rejects.toBeInstanceOf(RateLimitError);
    expect(stub.received).toHaveLength(1);
  });

  it('says what to do after a 429 that said nothing of when to retry, once retries are spent', async () => {
    const stub = scriptedFetch(() => new Response('Too many requests', { status: 429 }));
    const error = await clientWith(stub.fetch, { maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).message).toMatch(
      /said nothing usable about when to retry; the call's retries \(maxRetries: 0\) were spent, so it was not retried\. Raise maxRetries, or try again later\.$/,
    );
  });

  it('does not hold calls of another client', async () => {
    const limited = scriptedFetch(apiError(429, { 'retry-after': '30' })).thenAlways(json([rex]));
    const other = scriptedFetch().thenAlways(json([rex]));
    const call = clientWith(limited.fetch).listPets();
    await settle();
    await clientWith(other.fetch).listPets();
    expect(other.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(30_000);
    await call;
  });
});
