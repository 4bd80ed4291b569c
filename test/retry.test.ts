import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ConnectionError,
  RateLimitError,
  type RetryInfo,
  ServerError,
  TimeoutError,
} from '../src/index.js';
import { settle, useFakeTime } from './helpers/fake-time.js';
import { apiError, clientWith, json, rex, scriptedFetch } from './helpers/scripted-fetch.js';

beforeEach(() => useFakeTime());
afterEach(() => vi.useRealTimers());

const ok = () => json([rex]);

describe('retries after 429', () => {
  it.each([
    [429, 'retry-after'],
    [503, 'server-error'],
  ])(
    'waits out the Retry-After of a %i given in seconds, never earlier and without jitter',
    async (status, reason) => {
      const stub = scriptedFetch(apiError(status, { 'retry-after': '3' }), ok());
      const onRetry = vi.fn();
      const call = clientWith(stub.fetch, { onRetry }).listPets();
      await settle();
      expect(stub.received).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(2999);
      expect(stub.received).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      await expect(call).resolves.toEqual([rex]);
      expect(stub.received).toHaveLength(2);
      expect(stub.received[1]!.at - stub.received[0]!.at).toBe(3000);
      expect(onRetry).toHaveBeenCalledWith(expect.objectContaining({ reason, delayMs: 3000 }));
    },
  );

  it('waits out Retry-After given as an HTTP-date', async () => {
    const at = new Date(Date.now() + 5000).toUTCString();
    const stub = scriptedFetch(apiError(429, { 'retry-after': at }), ok());
    const call = clientWith(stub.fetch).listPets();
    await vi.advanceTimersByTimeAsync(4999);
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(call).resolves.toEqual([rex]);
    expect(stub.received[1]!.at - stub.received[0]!.at).toBe(5000);
  });

  it('waits until X-RateLimit-Reset when Retry-After is unusable', async () => {
    const reset = String(Math.floor(Date.now() / 1000) + 4);
    const stub = scriptedFetch(
      apiError(429, {
        'retry-after': 'soon',
        'x-ratelimit-reset': reset,
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '0',
      }),
      ok(),
    );
    const onRetry = vi.fn();
    const call = clientWith(stub.fetch, { onRetry }).listPets();
    await vi.advanceTimersByTimeAsync(3999);
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(call).resolves.toEqual([rex]);
    expect(onRetry).toHaveBeenCalledWith(
      expect.objectContaining({ reason: 'rate-limit-reset', delayMs: 4000 }),
    );
  });

  it('backs off exponentially with jitter when the 429 says nothing about when', async () => {
    const stub = scriptedFetch(apiError(429), apiError(429), ok());
    const delays: number[] = [];
    const call = clientWith(stub.fetch, { onRetry: (i) => delays.push(i.delayMs) }).listPets();
    await vi.advanceTimersByTimeAsync(10_000);
    await expect(call).resolves.toEqual([rex]);
    expect(delays).toHaveLength(2);
    // 1 s, then 2 s, each shortened by up to half: the key's 429s in a row.
    expect(delays[0]).toBeGreaterThanOrEqual(500);
    expect(delays[0]).toBeLessThanOrEqual(1000);
    expect(delays[1]).toBeGreaterThanOrEqual(1000);
    expect(delays[1]).toBeLessThanOrEqual(2000);
  });

  it('does not let a garbage Retry-After disable retries', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': 'banana' }), ok());
    const call = clientWith(stub.fetch).listPets();
    await vi.advanceTimersByTimeAsync(1000);
    await expect(call).resolves.toEqual([rex]);
  });

  it('fails fast with RateLimitError when Retry-After exceeds maxRetryDelayMs', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '3600' }), ok());
    const call = clientWith(stub.fetch, { maxRetryDelayMs: 60_000 }).listPets();
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect((error as Error).message).toMatch(/longer than maxRetryDelayMs/);
    expect(stub.received).toHaveLength(1);
  });

  it('throws RateLimitError once retries are spent', async () => {
    const stub = scriptedFetch().thenAlways(apiError(429, { 'retry-after': '1' }));
    const call = clientWith(stub.fetch, { maxRetries: 2 })
      .listPets()
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5000);
    const error = await call;
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(1000);
    expect(stub.received).toHaveLength(3);
  });

  it('retries a POST after 429, since the service did not act on it', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '1' }), json(rex, 201));
    const call = clientWith(stub.fetch).createPet({ name: 'Rex', categoryId: 3 });
    await vi.advanceTimersByTimeAsync(1000);
    await expect(call).resolves.toEqual(rex);
    expect(stub.received).toHaveLength(2);
  });
});

describe('retries after other failures', () => {
  it('retries a GET after 5xx with back-off', async () => {
    const stub = scriptedFetch(apiError(503), apiError(500), ok());
    const reasons: string[] = [];
    const call = clientWith(stub.fetch, { onRetry: (i) => reasons.push(i.reason) }).listPets();
    await vi.advanceTimersByTimeAsync(10_000);
    await expect(call).resolves.toEqual([rex]);
    expect(reasons).toEqual(['server-error', 'server-error']);
  });

  it("fails a GET at once when a 5xx's Retry-After is longer than maxRetryDelayMs", async () => {
    const long = scriptedFetch(apiError(503, { 'retry-after': '120' }), ok());
    const error = await clientWith(long.fetch, { maxRetryDelayMs: 10_000 })
      .listPets()
      .catch((e: unknown) => e);
    expect(long.received).toHaveLength(1);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as Error).message).toMatch(
      /asks to wait 120000 ms \(until .+\), longer than maxRetryDelayMs \(10000 ms\), so the client did not wait/,
    );
  });

  it('says when a 5xx ends a GET whose retries are spent, whatever its Retry-After', async () => {
    const stub = scriptedFetch().thenAlways(apiError(503));
    const error = clientWith(stub.fetch, { maxRetries: 1 })
      .listPets()
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(stub.received).toHaveLength(2);
    expect(((await error) as Error).message).toMatch(
      /The call's retries \(maxRetries: 1\) were spent, so it was not retried/,
    );
    const long = scriptedFetch(apiError(503, { 'retry-after': '120' }));
    const last = await clientWith(long.fetch, { maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect((last as Error).message).toMatch(/retries \(maxRetries: 0\) were spent/);
    expect((last as Error).message).not.toContain('maxRetryDelayMs');
  });

  it('retries a GET after a connection error', async () => {
    const stub = scriptedFetch(new TypeError('fetch failed'), json(rex));
    const onRetry = vi.fn();
    const call = clientWith(stub.fetch, { onRetry }).getPet(1);
    await vi.advanceTimersByTimeAsync(10_000);
    await expect(call).resolves.toEqual(rex);
    expect(onRetry.mock.calls[0]?.[0]).toMatchObject({
      reason: 'connection-error',
      operation: 'getPet',
      attempt: 1,
    });
  });

  it('names the attempt that failed last when it was not the first', async () => {
    const hang = () => new Promise<Response>(() => {});
    const stub = scriptedFetch(hang, hang, apiError(503), apiError(503));
    const client = clientWith(stub.fetch, { timeoutMs: 1000, maxRetries: 1 });
    const timedOut = client.getPet(1).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await timedOut).toBeInstanceOf(TimeoutError);
    expect(((await timedOut) as Error).message).toMatch(/pets\/1 \(attempt 2\) timed out/);
    const failed = client.getPet(1).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await failed).toBeInstanceOf(ServerError);
    expect(((await failed) as Error).message).toMatch(/pets\/1 \(attempt 2\) failed with HTTP 503/);
    const once = await clientWith(scriptedFetch(apiError(503)).fetch, { maxRetries: 0 })
      .getPet(1)
      .catch((e: unknown) => e);
    expect((once as Error).message).not.toContain('attempt');
  });

  it('never retries a POST after 503: the animal could be added twice', async () => {
    const stub = scriptedFetch(apiError(503), json(rex, 201));
    const error = await clientWith(stub.fetch)
      .createPet({ name: 'Rex', categoryId: 3 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as Error).message).toContain('The service may have acted on the request');
    expect(stub.received).toHaveLength(1);
  });

  it('says that a POST that timed out may have been carried out, and a GET nothing of the kind', async () => {
    const hang = () => new Promise<Response>(() => {});
    const stub = scriptedFetch(hang, apiError(503));
    const client = clientWith(stub.fetch, { timeoutMs: 1000, maxRetries: 0 });
    const post = client.createPet({ name: 'Rex', categoryId: 3 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    const timedOut = await post;
    expect(timedOut).toBeInstanceOf(TimeoutError);
    expect((timedOut as Error).message).toContain('The service may have acted on the request');
    const listed = client.listPets().catch((e: unknown) => e);
    // The key waits a little after a request that got no response.
    await vi.advanceTimersByTimeAsync(1000);
    const get = await listed;
    expect(get).toBeInstanceOf(ServerError);

    expect((get as Error).message).not.toContain('may have acted');
  });

  it('never retries a POST after a connection error', async () => {
    const stub = scriptedFetch(new TypeError('socket hang up'), json(rex, 201));
    const error = await clientWith(stub.fetch)
      .createPet({ name: 'Rex', categoryId: 3 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    // Cut off after it left: the animal may have been added.
    expect((error as Error).message).toContain('The service may have acted on the request');
    const refused = new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    const never = await clientWith(scriptedFetch(refused).fetch)
      .createPet({ name: 'Rex', categoryId: 3 })
      .catch((e: unknown) => e);
    expect((never as Error).message).toMatch(/\(ECONNREFUSED\)\. Check the network and baseUrl\.$/);
    expect(stub.received).toHaveLength(1);
  });

  it('gives a call held after requests that got no response their failure as its cause', async () => {
    const reset = new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
    const client = clientWith(scriptedFetch().thenAlways(reset).fetch, { maxRetryDelayMs: 50 });
    const calls = [client.listPets(), client.getPet(1)].map((call) =>
      call.catch((e: unknown) => e),
    );
    await vi.advanceTimersByTimeAsync(1000);
    const [sent, held] = (await Promise.all(calls)) as Error[];
    expect(held).toBeInstanceOf(ConnectionError);
    expect(held!.message).toMatch(/^getPet was not sent: the last requests got no response/);
    expect(held!.cause).toBe(sent!.cause);
  });

  it.each([400, 401, 404, 403])('never retries HTTP %i', async (status) => {
    const stub = scriptedFetch(apiError(status), ok());
    const error = await clientWith(stub.fetch)
      .getPet(1)
      .catch((e: unknown) => e);
    expect((error as { status: number }).status).toBe(status);
    expect(stub.received).toHaveLength(1);
  });

  it('does not retry a response that fails validation', async () => {
    const stub = scriptedFetch(json([{ id: 'x' }]), ok());
    await expect(clientWith(stub.fetch).listPets()).rejects.toThrow(/does not match/);
    expect(stub.received).toHaveLength(1);
  });

  it('makes exactly maxRetries + 1 attempts, and maxRetries 0 disables retries', async () => {
    const always503 = () => scriptedFetch().thenAlways(apiError(503));
    const three = always503();
    const call = clientWith(three.fetch, { maxRetries: 2 })
      .listPets()
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await call).toBeInstanceOf(ServerError);
    expect(three.received).toHaveLength(3);

    const one = always503();
    expect(
      await clientWith(one.fetch, { maxRetries: 0 })
        .listPets()
        .catch((e: unknown) => e),
    ).toBeInstanceOf(ServerError);
    expect(one.received).toHaveLength(1);
  });

  it('lets a call override maxRetries', async () => {
    const stub = scriptedFetch().thenAlways(apiError(503));
    const call = clientWith(stub.fetch, { maxRetries: 5 })
      .listPets({}, { maxRetries: 1 })
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(60_000);
    await call;
    expect(stub.received).toHaveLength(2);
  });

  it('caps back-off waits at maxRetryDelayMs instead of failing', async () => {
    const stub = scriptedFetch(apiError(503), apiError(503), apiError(503), ok());
    const delays: number[] = [];
    const call = clientWith(stub.fetch, {
      maxRetries: 3,
      maxRetryDelayMs: 300,
      onRetry: (i) => delays.push(i.delayMs),
    }).listPets();
    await vi.advanceTimersByTimeAsync(1000);
    await expect(call).resolves.toEqual([rex]);
    expect(Math.max(...delays)).toBeLessThanOrEqual(300);
  });

  it('retries a GET after a timeout, reporting reason timeout', async () => {
    const hang = () => new Promise<Response>(() => {});
    const stub = scriptedFetch(hang, ok());
    const infos: RetryInfo[] = [];
    const call = clientWith(stub.fetch, {
      timeoutMs: 1000,
      onRetry: (i) => infos.push(i),
    }).listPets();
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(call).resolves.toEqual([rex]);
    expect(infos[0]?.reason).toBe('timeout');
    expect(infos[0]?.error).toBeInstanceOf(TimeoutError);
  });
});
