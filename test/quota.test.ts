import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bucketName } from '../src/auth.js';
import {
  AnimalStoreError,
  ConnectionError,
  MemoryQuotaStore,
  PetsClient,
  RateLimitError,
  type RetryInfo,
  ServerError,
  TimeoutError,
} from '../src/index.js';
import type { ClientOptions } from '../src/options.js';
import { defaultQuotaStore } from '../src/quota/MemoryQuotaStore.js';
import type { AdmitRequest, Observation, QuotaStore } from '../src/quota/store.js';
import { limits, seconds, settle, today, useFakeTime } from './helpers/fake-time.js';
import { recordingLogger } from './helpers/logger.js';
import {
  API_KEY,
  apiError,
  BASE_URL,
  clientWith,
  json,
  rex,
  scriptedFetch,
} from './helpers/scripted-fetch.js';
import { serviceFetch } from './helpers/service-fetch.js';
import { sleep } from './helpers/sleep.js';

beforeEach(() => useFakeTime(today(12, 0, 0)));
afterEach(() => vi.useRealTimers());

/** A store of one's own (any but the shipped one) whose admit answers after `ms`. */
function slowStore(ms: number): QuotaStore {
  const store = new MemoryQuotaStore();
  return {
    admit: (bucket, request) => sleep(ms).then(() => store.admit(bucket, request)),
    observe: (bucket, lease, observation) => store.observe(bucket, lease, observation),
    release: (bucket, lease) => store.release(bucket, lease),
  };
}

/** How `calls` end, run to the end with every back-off at its longest (no jitter). */
async function endsWithoutJitter(calls: () => Promise<unknown>[]): Promise<string[]> {
  vi.spyOn(Math, 'random').mockReturnValue(0);
  try {
    return (await finish(calls())).map((r) => r.status);
  } finally {
    vi.mocked(Math.random).mockRestore();
  }
}

/** How 10 `listPets()` at once end on a client of `fetch`, without jitter. */
function tenTogether(fetch: ClientOptions['fetch']): Promise<string[]> {
  const client = clientWith(fetch);
  return endsWithoutJitter(() => Array.from({ length: 10 }, () => client.listPets()));
}

/** Runs `calls` to the end under fake time, advancing the clock in small steps. */
async function finish<T>(
  calls: Promise<T>[],
  limitMs = 120_000,
): Promise<PromiseSettledResult<T>[]> {
  const all = Promise.allSettled(calls);
  let done = false;
  void all.then(() => {
    done = true;
  });
  for (let t = 0; !done && t < limitMs; t += 50) await vi.advanceTimersByTimeAsync(50);
  return all;
}

describe('the budget left', () => {
  it('sends no more requests than the service said remain: 30 calls with 20 left meet no 429', async () => {
    const server = serviceFetch({ limits: { perMinute: 21 } });
    const client = clientWith(server.fetch);
    await finish([client.listPets()]);
    expect(client.rateLimit?.remaining).toBe(20);
    const results = await finish(Array.from({ length: 30 }, () => client.listPets()));
    expect(server.count(429)).toBe(0);
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    // 20 in the first window, the other 10 after its reset.
    const firstWindow = server.exchanges.filter((e) => e.at < today(12, 1, 0));
    expect(firstWindow).toHaveLength(21);
  });

  it('from a cold start sends one request first and holds the others until its headers arrive', async () => {
    const server = serviceFetch({ limits: { perMinute: 100 }, latencyMs: 200 });
    const client = clientWith(server.fetch);
    const calls = Array.from({ length: 10 }, () => client.listPets());
    await vi.advanceTimersByTimeAsync(199);
    expect(server.exchanges).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(server.exchanges).toHaveLength(10);
    await finish(calls);
    expect(server.count(200)).toBe(10);
  });

  it('releases held calls at a reset within the new budget, one first, never all at once', async () => {
    const server = serviceFetch({ limits: { perMinute: 5, windowMs: 3000 } });
    const client = clientWith(server.fetch);
    const results = await finish(Array.from({ length: 23 }, () => client.listPets()));
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(server.count(429)).toBe(0);
    const perWindow = new Map<number, number>();
    for (const e of server.exchanges) {
      const w = Math.floor(e.at / 3000);
      perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
    }
    expect([...perWindow.values()]).toEqual([5, 5, 5, 5, 3]);
    // In each window, the first request is answered before any other is sent.
    for (const w of perWindow.keys()) {
      const inWindow = server.exchanges.filter((e) => Math.floor(e.at / 3000) === w);
      for (const later of inWindow.slice(1)) {
        expect(later.at).toBeGreaterThanOrEqual(inWindow[0]!.answeredAt!);
      }
    }
  });

  it('never has more in flight than remain, at any concurrency (200 calls, 10 per window)', async () => {
    const server = serviceFetch({ limits: { perMinute: 10, windowMs: 3000 }, latencyMs: 30 });
    const client = clientWith(server.fetch);
    const results = await finish(
      Array.from({ length: 200 }, () => client.listPets()),
      200_000,
    );
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(server.count(429)).toBe(0);
    expect(server.maxInFlight).toBeLessThanOrEqual(10);
    // 20 windows is the floor; the client needs at most one more.
    const span = server.exchanges.at(-1)!.at - server.exchanges[0]!.at;
    expect(span).toBeLessThan(21 * 3000);
  });

  it('bounds each hold by maxRetryDelayMs, not the sum of a call’s holds', async () => {
    const server = serviceFetch({ limits: { perMinute: 5, windowMs: 2000 } });
    const client = clientWith(server.fetch, { maxRetryDelayMs: 2500 });
    const results = await finish(Array.from({ length: 20 }, () => client.listPets()));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(server.count(429)).toBe(0);
  });

  it('fails a call held longer than maxRetryDelayMs for the first response, saying so', async () => {
    const server = serviceFetch({ limits: { perMinute: 100 }, latencyMs: 1000 });
    const client = clientWith(server.fetch, { maxRetryDelayMs: 500 });
    const first = client.listPets();
    const second = client.listPets().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(500);
    const error = (await second) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.message).toMatch(
      /^listPets was not sent: the budget is unknown .*\(or the quota store answers\), with no end in sight within maxRetryDelayMs \(500 ms\).* The service is slower than that: raise maxRetryDelayMs\.$/,
    );
    expect(error.retryAfterMs).toBeUndefined();
    await finish([first]);
    expect(server.exchanges).toHaveLength(1);
  });

  it('serves held calls in arrival order', async () => {
    const server = serviceFetch({ limits: { perMinute: 2, windowMs: 3000 } });
    const client = clientWith(server.fetch);
    const order: number[] = [];
    const calls = Array.from({ length: 7 }, (_, i) =>
      client.listPets({ limit: i + 1 }).then(() => order.push(i)),
    );
    await finish(calls);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('adopts the tighter of two reports of one window, whatever order they arrive in', async () => {
    const reset = seconds(60);
    const window = (remaining: number) => ({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': reset,
    });
    const stub = scriptedFetch(
      json([rex], 200, window(0)),
      json([rex], 200, window(30)),
    ).thenAlways(json([rex], 200, window(29)));
    const client = clientWith(stub.fetch, { maxRetryDelayMs: 1000 });
    await client.listPets();
    // The second reply is older news: none remain until the reset.
    const held = await client.listPets().catch((e: unknown) => e);
    expect(held).toBeInstanceOf(RateLimitError);
    expect(stub.received).toHaveLength(1);
  });

  it('holds once none remain, though the reset said is a second earlier than before (a limiter that rounds)', async () => {
    const stub = scriptedFetch(
      json([rex], 200, limits(50, 60)),
      json([rex], 200, limits(0, 59)),
    ).thenAlways(apiError(429, { 'retry-after': '1' }));
    const client = clientWith(stub.fetch, { maxRetryDelayMs: 1000 });
    await client.listPets();
    await client.listPets();
    const held = await client.listPets().catch((e: unknown) => e);
    expect(held).toMatchObject({ code: 'rate_limit_hold' });
    expect(stub.received).toHaveLength(2);
  });
});

describe('after a 429', () => {
  it('sends nothing until Retry-After has passed, for every call of the key', async () => {
    const server = serviceFetch({ limits: { perMinute: 3, windowMs: 10_000 } });
    // Another program spends the key behind the client's back.
    for (let i = 0; i < 3; i++) {
      await server.service.handle(
        new Request(`${BASE_URL}/pets`, { headers: { authorization: `Bearer ${API_KEY}` } }),
      );
    }
    const reasons: string[] = [];
    const client = clientWith(server.fetch, { onRetry: (i) => reasons.push(i.reason) });
    const results = await finish(Array.from({ length: 5 }, () => client.listPets()));
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(server.count(429)).toBe(1);
    const limited = server.exchanges.find((e) => e.status === 429)!;
    for (const e of server.exchanges.filter((x) => x !== limited)) {
      expect(e.at).toBeGreaterThanOrEqual(today(12, 0, 10));
    }
    expect(reasons).toContain('retry-after');
    expect(reasons).toContain('cooldown');
  });

  it('tells a call that arrives during the cooldown of the wait left, as onRetry and a log line', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '2' })).thenAlways(json([rex]));
    const waits: RetryInfo[] = [];
    const { logger, lines } = recordingLogger(['info']);
    const client = clientWith(stub.fetch, {
      onRetry: (i) => waits.push(i),
      logger,
      logLevel: 'info',
    });
    const first = client.listPets();
    await vi.advanceTimersByTimeAsync(300);
    const second = client.listPets({ limit: 5 });
    await vi.advanceTimersByTimeAsync(0);
    expect(waits.map(({ reason, delayMs }) => [reason, delayMs])).toEqual([
      ['retry-after', 2000],
      ['cooldown', 1700],
    ]);
    expect(lines.at(-1)).toMatch(/^\[animal-store\] listPets is held for 1700 ms/);
    // Told once: a third call arriving later is told of its own wait (no second line), the second not again.
    await vi.advanceTimersByTimeAsync(100);
    const third = client.listPets({ limit: 6 });
    await vi.advanceTimersByTimeAsync(0);
    expect(waits.map((i) => i.reason)).toEqual(['retry-after', 'cooldown', 'cooldown']);
    expect(waits.at(-1)?.delayMs).toBe(1600);
    expect(lines.filter((l) => l.includes('is held for'))).toHaveLength(1);
    expect(await finish([first, second, third])).toMatchObject([
      { status: 'fulfilled' },
      { status: 'fulfilled' },
      { status: 'fulfilled' },
    ]);
    expect(stub.received.slice(1).every((r) => r.at >= today(12, 0, 2))).toBe(true);
  });

  it('asks the store no more often for calls that join a hold one by one: 200 calls, a few asks', async () => {
    const store = new MemoryQuotaStore();
    let asked = 0;
    const counting: QuotaStore = {
      admit: (bucket, request) => {
        asked++;
        return store.admit(bucket, request);
      },
      observe: (bucket, lease, observation) => store.observe(bucket, lease, observation),
      release: (bucket, lease) => store.release(bucket, lease),
      watch: (bucket, listener) => store.watch(bucket, listener),
    };
    const reset = String(Math.ceil(Date.now() / 1000) + 10);
    const spent = json([rex], 200, {
      'x-ratelimit-limit': '500',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': reset,
    });
    const stub = scriptedFetch(spent).thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: counting });
    await finish([client.listPets()]);
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      calls.push(client.listPets());
      await vi.advanceTimersByTimeAsync(10);
    }
    const held = asked;
    expect(held).toBeLessThan(10);
    expect(await finish(calls)).toHaveLength(200);
  });

  it('waits the Retry-After date of a server whose clock was never set, from its Date', async () => {
    const server = Date.now() - 20_000 * 86_400_000;
    const stub = scriptedFetch(
      apiError(429, {
        date: new Date(server).toUTCString(),
        'retry-after': new Date(server + 5000).toUTCString(),
      }),
    ).thenAlways(json([rex]));
    expect(await finish([clientWith(stub.fetch).listPets()])).toMatchObject([
      { status: 'fulfilled' },
    ]);
    expect(stub.received.map((r) => r.at - today(12, 0, 0))).toEqual([0, 5000]);
  });

  it('fails a call that arrives during the cooldown at once when the wait left is longer than its maxRetryDelayMs', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '20' })).thenAlways(json([rex]));
    const quotaStore = new MemoryQuotaStore();
    const first = clientWith(stub.fetch, { quotaStore }).listPets();
    await vi.advanceTimersByTimeAsync(1000);
    const impatient = clientWith(stub.fetch, { quotaStore, maxRetryDelayMs: 5000 });
    const error = await impatient.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'rate_limit_hold', retryAfterMs: 19_000 });
    expect(Date.now()).toBe(today(12, 0, 1));
    expect(await finish([first])).toMatchObject([{ status: 'fulfilled' }]);
    expect(stub.received).toHaveLength(2);
  });

  it('fails a hold longer than maxRetryDelayMs at once, saying nothing was sent and when to retry', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '30' })).thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { maxRetryDelayMs: 10_000, maxRetries: 0 });
    await expect(client.listPets()).rejects.toBeInstanceOf(RateLimitError);
    const error = (await client.getPet(1).catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.message).toMatch(/^getPet was not sent: .*429.*longer than maxRetryDelayMs/);
    expect(error.message).toContain(new Date(Date.now() + 30_000).toISOString());
    expect(error.retryAfterMs).toBe(30_000);
    expect(error.code).toBe('rate_limit_hold');
    expect([...error.headers]).toEqual([]);
    expect(stub.received).toHaveLength(1);
  });

  it('lets one request go first when the cooldown ends, even without rate-limit headers', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '2' })).thenAlways(
      () => new Promise<Response>((resolve) => setTimeout(() => resolve(json([rex])), 100)),
    );
    const client = clientWith(stub.fetch, { maxRetries: 0 });
    await client.listPets().catch(() => undefined);
    const calls = Array.from({ length: 4 }, () => client.listPets());
    await vi.advanceTimersByTimeAsync(2000);
    await settle();
    expect(stub.received).toHaveLength(2);
    // Its answer states no budget: the rest go in rounds that double.
    await vi.advanceTimersByTimeAsync(100);
    await settle();
    expect(stub.received).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(100);
    await settle();
    expect(stub.received).toHaveLength(5);
    await finish(calls);
  });
});

describe('a limiter that says nothing of when to come back', () => {
  it('waits at least 100 ms doubling between 429s in a row, whatever they ask', async () => {
    const stub = scriptedFetch().thenAlways(apiError(429, { 'retry-after': '0' }));
    const client = clientWith(stub.fetch, { maxRetries: 2 });
    await finish(Array.from({ length: 4 }, () => client.listPets()));
    const gaps = stub.received.slice(1).map((r, i) => r.at - stub.received[i]!.at);
    expect(gaps.length).toBeGreaterThanOrEqual(5);
    for (const [i, gap] of gaps.slice(0, 6).entries())
      expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i);
  });

  it.each([
    ['a client per call', 'always'],
    ['5xx answers between the 429s', 'with-5xx'],
    ['a store that does not count them', 'no-count'],
  ] as const)('counts the key’s 429s in a row with %s', async (_, mode) => {
    // The count lives in the store: a client made per call, or a 5xx (a
    // proxy's, perhaps) between two 429s, does not start it again.
    let n = 0;
    const tooMany: number[] = [];
    const stub = scriptedFetch().thenAlways(() => {
      if (mode === 'with-5xx' && n++ % 2 === 1) return apiError(503);
      tooMany.push(Date.now());
      return apiError(429, { 'retry-after': '0' });
    });
    const memory = new MemoryQuotaStore();
    // A store of the user's own that reports no `strikes`: the client counts them.
    const quotaStore: QuotaStore =
      mode === 'no-count'
        ? {
            admit: async (bucket, request) => {
              const { strikes: _, ...admission } = (await memory.admit(bucket, request)) as {
                lease: string;
                strikes?: number;
              };
              return admission;
            },
            observe: (bucket, lease, observation) => memory.observe(bucket, lease, observation),
            release: (bucket, lease) => memory.release(bucket, lease),
          }
        : memory;
    // A key of its own: a store not in memory leaves this process a copy of the cooldown.
    const apiKey = `sk_test_strikes_${mode}_0123456789`;
    const one = clientWith(stub.fetch, { apiKey, quotaStore, maxRetries: 0 });
    await finish(
      Array.from({ length: 8 }, () =>
        (mode === 'no-count'
          ? one
          : clientWith(stub.fetch, { quotaStore, maxRetries: 0 })
        ).listPets(),
      ),
    );
    const gaps = tooMany.slice(1).map((at, i) => at - tooMany[i]!);
    expect(gaps.length).toBeGreaterThanOrEqual(3);
    for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i);
  });

  it('is back at full speed soon after a limiter that asked for waits recovers', async () => {
    // Retry-After: 1 to every request for 7 s, then answers without headers.
    const start = Date.now();
    const stub = scriptedFetch().thenAlways(() =>
      Date.now() - start < 7000 ? apiError(429, { 'retry-after': '1' }) : json([rex]),
    );
    const client = clientWith(stub.fetch, { maxRetries: 10, maxRetryDelayMs: 120_000 });
    const results = await finish(Array.from({ length: 20 }, () => client.listPets()));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill('fulfilled'));
    // The 429s in a row stretched the waits; once answered, rounds are not paced by them.
    expect(Date.now() - start).toBeLessThan(7000 + 16_000 + 3000);
    const after = stub.received.filter((r) => r.at - start >= 7000);
    expect(after.at(-1)!.at - after[0]!.at).toBeLessThan(3000);
  });

  it('never holds a call more than a day in all, however many holds follow each other', async () => {
    const hours = (n: number) => n * 3_600_000;
    const store = {
      admit: async () => ({ reason: 'cooldown' as const, waitMs: hours(20) }),
      observe: async () => undefined,
      release: async () => undefined,
    };
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: store, maxRetryDelayMs: hours(24) });
    const started = Date.now();
    const call = client.listPets().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(hours(20));
    const error = await call;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(Date.now() - started).toBeLessThanOrEqual(hours(24));
    expect(stub.received).toHaveLength(0);
  });

  it('spends one call’s retry per cooldown, so held calls outlast it, and waits longer each time', async () => {
    // 429s without any header for the first 4 s, then answers.
    const start = Date.now();
    const stub = scriptedFetch().thenAlways(() =>
      Date.now() - start < 4000 ? apiError(429) : json([rex]),
    );
    const delays: number[] = [];
    const client = clientWith(stub.fetch, {
      onRetry: (info) => info.reason === 'rate-limited' && delays.push(info.delayMs),
    });
    const results = await finish(Array.from({ length: 10 }, () => client.listPets()));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill('fulfilled'));
    // One request after each cooldown; the back-off doubles with each 429 in a row.
    const tooMany = stub.received.filter((r) => r.at - start < 4000);
    expect(tooMany.length).toBeLessThanOrEqual(4);
    expect(delays).toHaveLength(tooMany.length);
    for (const [i, wait] of delays.entries()) {
      expect(wait).toBeGreaterThanOrEqual(500 * 2 ** i);
      expect(wait).toBeLessThanOrEqual(1000 * 2 ** i);
    }
  });
});

describe('the decision to retry', () => {
  const brokenBody = (status: number, headers: Record<string, string>) =>
    new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"code":"rate_'));
          controller.error(new Error('connection reset'));
        },
      }),
      { status, headers },
    );

  it('is made from status and headers: a 429 whose body breaks off still waits out Retry-After', async () => {
    const stub = scriptedFetch(brokenBody(429, { 'retry-after': '2' }), json(rex, 201));
    const infos: RetryInfo[] = [];
    const call = clientWith(stub.fetch, { onRetry: (i) => infos.push(i) }).createPet({
      name: 'Rex',
      categoryId: 3,
    });
    await vi.advanceTimersByTimeAsync(1999);
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(call).resolves.toEqual(rex);
    expect(infos[0]).toMatchObject({ reason: 'retry-after', delayMs: 2000 });
    expect(infos[0]?.error).toBeInstanceOf(RateLimitError);
  });

  it('reports a 201 whose body breaks off as a ConnectionError that says the animal may exist, and never resends', async () => {
    const stub = scriptedFetch(brokenBody(201, {}), json(rex, 201));
    const error = await clientWith(stub.fetch)
      .createPet({ name: 'Rex', categoryId: 3 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect((error as Error).message).toMatch(/HTTP 201, but its body broke off.*may have acted/);
    expect(stub.received).toHaveLength(1);
  });
});

describe('held calls', () => {
  it('stop at once when their signal aborts, with its reason', async () => {
    const stub = scriptedFetch(json([rex], 200, limits(0, 30))).thenAlways(json([rex]));
    const client = clientWith(stub.fetch);
    await client.listPets();
    const controller = new AbortController();
    const held = client.listPets({}, { signal: controller.signal }).catch((e: unknown) => e);
    const other = client.listPets();
    await vi.advanceTimersByTimeAsync(1000);
    controller.abort();
    expect(((await held) as Error).name).toBe('AbortError');
    expect(stub.received).toHaveLength(1);
    await finish([other]);
    expect(stub.received).toHaveLength(2);
  });

  it('go in the order they were made, a later call never ahead of one held just before it', async () => {
    const stub = scriptedFetch(json([rex], 200, limits(0, 30))).thenAlways(json([rex]));
    // The store's clock passes the window's end right after the first call was held.
    let asked = 0;
    let armed = false;
    const now = () => Date.now() + (armed && asked++ > 0 ? 60_000 : 0);
    const client = clientWith(stub.fetch, { quotaStore: new MemoryQuotaStore({ now }) });
    await client.listPets();
    armed = true;
    const calls = [client.listPets({ limit: 2 }), client.listPets({ limit: 3 })];
    await vi.advanceTimersByTimeAsync(1000);
    await Promise.all(calls);
    const limitsSent = stub.received.map(({ request }) =>
      new URL(request.url).searchParams.get('limit'),
    );
    expect(limitsSent).toEqual([null, '2', '3']);
  });

  it('are reported through onRetry and the info log, with the reason', async () => {
    const stub = scriptedFetch(json([rex], 200, limits(0, 5))).thenAlways(json([rex]));
    const infos: RetryInfo[] = [];
    const { logger, lines } = recordingLogger();
    const client = clientWith(stub.fetch, {
      onRetry: (i) => infos.push(i),
      logLevel: 'info',
      logger,
    });
    await client.listPets();
    await finish([client.listPets()]);
    expect(infos).toEqual([
      { operation: 'listPets', attempt: 0, delayMs: 5000, reason: 'budget-exhausted' },
    ]);
    expect(lines).toEqual([
      expect.stringMatching(/listPets is held for 5000 ms before sending: no requests remain/),
    ]);
  });
});

describe('responses without X-RateLimit-* headers', () => {
  it('leave the client reactive: after the first answer, all go at once until a 429', async () => {
    let inFlight = 0;
    let most = 0;
    const stub = scriptedFetch().thenAlways(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await sleep(50);
      inFlight--;
      return json([rex]);
    });
    const client = clientWith(stub.fetch);
    await finish([client.listPets()]);
    const mostOf: number[] = [];
    for (let round = 0; round < 3; round++) {
      most = 0;
      await finish(Array.from({ length: 10 }, () => client.listPets()));
      mostOf.push(most);
    }
    expect(mostOf).toEqual([10, 10, 10]);
    expect(stub.received).toHaveLength(31);
  });
});

describe('one budget per key and base URL', () => {
  const sharing = (
    fetch: (input: Request | string) => Promise<Response>,
    options: { apiKey?: string; baseUrl?: string } = {},
  ) =>
    new PetsClient({
      apiKey: options.apiKey ?? 'sk_shared_budget',
      baseUrl: options.baseUrl ?? BASE_URL,
      fetch,
      logLevel: 'off',
      maxRetries: 0,
    });

  it('is shared by clients of the same key and base URL, by default', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '30' })).thenAlways(json([rex]));
    const first = sharing(stub.fetch);
    const second = sharing(stub.fetch);
    await expect(first.listPets()).rejects.toBeInstanceOf(RateLimitError);
    const call = second.listPets();
    await vi.advanceTimersByTimeAsync(29_999);
    expect(stub.received).toHaveLength(1);
    await finish([call]);
    expect(stub.received).toHaveLength(2);
  });

  it('is not shared across keys or base URLs', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '30' })).thenAlways(json([rex]));
    await expect(sharing(stub.fetch, { apiKey: 'sk_other_a' }).listPets()).rejects.toThrow();
    await sharing(stub.fetch, { apiKey: 'sk_other_b' }).listPets();
    await sharing(stub.fetch, { apiKey: 'sk_other_a', baseUrl: 'http://127.0.0.2/v1' }).listPets();
    expect(stub.received).toHaveLength(3);
  });

  it('is a client’s own with quotaStore: new MemoryQuotaStore()', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '30' })).thenAlways(json([rex]));
    await expect(sharing(stub.fetch, { apiKey: 'sk_own' }).listPets()).rejects.toThrow();
    const own = new PetsClient({
      apiKey: 'sk_own',
      baseUrl: BASE_URL,
      fetch: stub.fetch,
      quotaStore: new MemoryQuotaStore(),
    });
    await own.listPets();
    expect(stub.received).toHaveLength(2);
  });

  it('is kept under a hash: the key is nowhere in the store', async () => {
    const stub = scriptedFetch().thenAlways(json([rex], 200, limits(10)));
    await sharing(stub.fetch, { apiKey: 'sk_never_in_the_store' }).listPets();
    const store = defaultQuotaStore();
    expect(inspect(store, { depth: 10, showHidden: true })).not.toContain('sk_never_in_the_store');
  });

  it('is named by the SHA-256 of base URL and key, the same on every runtime', async () => {
    const expected = createHash('sha256').update(`${BASE_URL}\n${API_KEY}`).digest('hex');
    expect(bucketName(API_KEY, BASE_URL)).toBe(expected);
    vi.stubGlobal('process', { ...process, getBuiltinModule: undefined });
    try {
      await expect(bucketName(API_KEY, BASE_URL)).resolves.toBe(expected);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('refuses a quotaStore that is not one', () => {
    expect(() => new PetsClient({ apiKey: API_KEY, quotaStore: {} as MemoryQuotaStore })).toThrow(
      /Invalid quotaStore/,
    );
  });
});

describe('headers believed only within reason', () => {
  it.each([
    // Not believed, but no sign to send again soon: the key cools down a minute.
    [
      'Retry-After: 99999999999999999999',
      () => ({ 'retry-after': '99999999999999999999' }),
      [60_000, 61_000],
    ],
    [
      'an X-RateLimit-Reset in milliseconds',
      () => ({ ...limits(0), 'x-ratelimit-reset': String(Date.now() + 5000) }),
      [0, 10_000],
    ],
    [
      'Date: Thu, 01 Jan 1970',
      () => ({ date: 'Thu, 01 Jan 1970 00:00:00 GMT', ...limits(0, 5) }),
      [0, 10_000],
    ],
  ] as const)(
    '%s never makes a later call throw a non-SDK error, nor hold it for long',
    async (_, headers, [least, most]) => {
      const stub = scriptedFetch(apiError(429, headers())).thenAlways(json([rex]));
      const client = clientWith(stub.fetch, {
        maxRetries: 0,
        maxRetryDelayMs: Number.POSITIVE_INFINITY,
      });
      const started = Date.now();
      const first = await client.listPets().catch((e: unknown) => e);
      expect(first).toBeInstanceOf(RateLimitError);
      const later = await finish([client.listPets(), client.listPets({ limit: 5 })]);
      for (const result of later) expect(result.status).toBe('fulfilled');
      expect(Date.now() - started).toBeGreaterThanOrEqual(least);
      expect(Date.now() - started).toBeLessThan(most);
    },
  );
});

describe('a hostile or broken server or store', () => {
  it('cannot lift the budget with rate-limit headers it breaks after the first response', async () => {
    const reset = seconds(10);
    let first = true;
    const stub = scriptedFetch().thenAlways(async () => {
      const remaining = first ? '3' : '-1';
      first = false;
      await sleep(50);
      return json([rex], 200, {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': remaining,
        'x-ratelimit-reset': reset,
      });
    });
    const client = clientWith(stub.fetch);
    const calls = Array.from({ length: 10 }, () => client.listPets());
    await vi.advanceTimersByTimeAsync(9_000);
    // The first response left 3: four requests in all until the reset.
    expect(stub.received).toHaveLength(4);
    await finish(calls);
  });

  it('has a 429 with Retry-After: 0 retried no sooner than the back-off floor', async () => {
    const stub = scriptedFetch().thenAlways(apiError(429, { 'retry-after': '0' }));
    const client = clientWith(stub.fetch, { maxRetries: 5 });
    await finish([client.listPets().catch(() => undefined)]);
    const gaps = stub.received.slice(1).map((r, i) => r.at - stub.received[i]!.at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(100);
  });

  it('gives back a lease a store granted while a 429 came, and holds its call for the wait', async () => {
    let opened: () => void = () => {};
    const gate = new Promise<void>((open) => {
      opened = open;
    });
    let asked = 0;
    class LateStore extends MemoryQuotaStore {
      override async admit(bucket: string) {
        const answer = await super.admit(bucket);
        // The second call's lease, granted now, comes back only once the first met its 429.
        if (++asked === 3) await gate;
        return answer;
      }
      override async observe(bucket: string, lease: string, observation: Observation) {
        await super.observe(bucket, lease, observation);
        if (observation.status === 429) opened();
      }
    }
    const stub = scriptedFetch(
      json([rex], 200, limits(50)),
      apiError(429, { 'retry-after': '2' }),
    ).thenAlways(json([rex], 200, limits(48)));
    // A key of its own: the 429's cooldown is shared by the key's clients in this process.
    const quotaStore = new LateStore();
    const client = clientWith(stub.fetch, { apiKey: 'sk_late_lease_key', quotaStore });
    await client.listPets();
    const first = client.listPets();
    const second = client.listPets();
    await vi.advanceTimersByTimeAsync(1000);
    // The second was granted before the 429 and answered after: it waits the 429's 2 s too.
    expect(stub.received).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1500);
    await expect(Promise.all([first, second])).resolves.toEqual([[rex], [rex]]);
    expect(stub.received).toHaveLength(4);
  });

  it('lets an abort end a call at once while a slow store is asked', async () => {
    class SlowStore extends MemoryQuotaStore {
      override async admit(bucket: string) {
        await sleep(5000);
        return super.admit(bucket);
      }
    }
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: new SlowStore() });
    const controller = new AbortController();
    const call = client.listPets({}, { signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort(new Error('gave up'));
    expect(((await call) as Error).message).toBe('gave up');
    await vi.advanceTimersByTimeAsync(5000);
    expect(stub.received).toHaveLength(0);
    // The line is free again, and the lease granted late went back.
    const next = client.listPets();
    await vi.advanceTimersByTimeAsync(5000);
    await expect(next).resolves.toEqual([rex]);
  });

  it('never waits for a store past timeoutMs, and gives back a lease it grants later', async () => {
    const released: string[] = [];
    class StalledStore extends MemoryQuotaStore {
      stalled = true;
      override async admit(bucket: string, request?: { leaseMs: number }) {
        if (this.stalled) await sleep(5000);
        return super.admit(bucket, request);
      }
      override async release(bucket: string, lease: string) {
        released.push(lease);
        return super.release(bucket, lease);
      }
    }
    const store = new StalledStore();
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: store, timeoutMs: 1000 });
    const started = Date.now();
    const call = client.listPets().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    const error = (await call) as Error;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toMatch(
      /quota store did not admit the request within timeoutMs \(1000 ms\); nothing was sent/,
    );
    expect(Date.now() - started).toBe(1000);
    await vi.advanceTimersByTimeAsync(4000);
    expect(released).toHaveLength(1);
    expect(stub.received).toHaveLength(0);
    store.stalled = false;
    await expect(client.listPets()).resolves.toEqual([rex]);
  });

  it('bounds by maxRetryDelayMs an unknown budget that a store keeps asking to ask again about', async () => {
    const store: QuotaStore = {
      admit: async () => ({ reason: 'budget-unknown', waitMs: 250 }),
      observe: async () => undefined,
      release: async () => undefined,
    };
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: store, maxRetryDelayMs: 1000 });
    const started = Date.now();
    const call = client.listPets().catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1100);
    const error = (await call) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.message).toMatch(
      /budget is unknown.*with no end in sight within maxRetryDelayMs.* Check the quota store \(a RedisQuotaStore logs losing Redis\), or raise maxRetryDelayMs\.$/,
    );
    expect(Date.now() - started).toBeLessThanOrEqual(1100);
    expect(stub.received).toHaveLength(0);
  });

  it('fails each call in line at its own timeoutMs while the store does not answer, an aborted one included', async () => {
    const store: QuotaStore = {
      admit: () => new Promise(() => undefined),
      observe: async () => undefined,
      release: async () => undefined,
    };
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: store, timeoutMs: 30_000 });
    const controller = new AbortController();
    const first = client.listPets(undefined, { signal: controller.signal }).catch((e) => e);
    const started = Date.now();
    const settledAt: number[] = [];
    const calls = [300, 500, 500].map((timeoutMs) =>
      client.listPets(undefined, { timeoutMs }).catch((error: unknown) => {
        settledAt.push(Date.now() - started);
        return error;
      }),
    );
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    await vi.advanceTimersByTimeAsync(1000);
    expect(await first).toBe(controller.signal.reason);
    expect(settledAt).toEqual([300, 500, 500]);
    for (const error of await Promise.all(calls)) {
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as Error).message).toMatch(/did not admit the request within timeoutMs/);
    }
    expect(stub.received).toHaveLength(0);
  });

  it('sends a request whose store cannot say whether its lease holds, as a store without holds, and says so', async () => {
    const store = new MemoryQuotaStore();
    Object.assign(store, {
      holds: () => {
        throw new Error('holds broke');
      },
    });
    const { logger, lines } = recordingLogger(['error']);
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: store, logger, logLevel: 'error' });
    await expect(client.listPets()).resolves.toEqual([rex]);
    expect(stub.received).toHaveLength(1);
    expect(lines.join('\n')).toMatch(/holds broke/);
  });

  it('asks the store for the next call in line once the call it was answering for leaves', async () => {
    const released: string[] = [];
    let asked = 0;
    const store: QuotaStore = {
      // The first answer comes only after 3 s; the others at once.
      admit: async () => {
        const mine = ++asked;
        if (mine === 1) await sleep(3000);
        return { lease: `lease-${mine}` };
      },
      observe: async () => undefined,
      release: async (_, lease) => {
        released.push(lease);
      },
    };
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: store, timeoutMs: 5000 });
    const controller = new AbortController();
    const first = client.listPets(undefined, { signal: controller.signal }).catch((e) => e);
    const started = Date.now();
    let sentAt = -1;
    const second = client.listPets().then((pets) => {
      sentAt = Date.now() - started;
      return pets;
    });
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    await vi.advanceTimersByTimeAsync(10);
    expect(await first).toBe(controller.signal.reason);
    await expect(second).resolves.toEqual([rex]);
    expect(sentAt).toBeLessThanOrEqual(110);
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(3000);
    // The answer for the aborted call came late, and its lease went back.
    expect(released).toContain('lease-1');
  });

  it('counts a request that got no response: it may have reached the service', async () => {
    const store = new MemoryQuotaStore();
    const ended: string[] = [];
    const observe = store.observe.bind(store);
    store.observe = (bucket, lease, observation) => {
      ended.push(`observe ${observation.status}`);
      return observe(bucket, lease, observation);
    };
    const release = store.release.bind(store);
    store.release = (bucket, lease) => {
      ended.push('release');
      return release(bucket, lease);
    };
    let calls = 0;
    const fetch = (url: string, init: RequestInit) => {
      const request = new Request(url, init);
      calls++;
      // The first answers with 2 left; the second never answers.
      if (calls === 1) return Promise.resolve(json([rex], 200, limits(2)));
      return new Promise<Response>((_, reject) =>
        request.signal.addEventListener('abort', () => reject(request.signal.reason)),
      );
    };
    const client = clientWith(fetch, { quotaStore: store, timeoutMs: 1000, maxRetries: 0 });
    await client.listPets();
    const timedOut = client.listPets().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await timedOut).toBeInstanceOf(TimeoutError);
    expect(ended).toEqual(['observe 200', 'observe 0']);
    // One of the two left is counted as spent: one more may go, not two,
    // after the short cooldown a request without a response costs.
    await vi.advanceTimersByTimeAsync(100);
    const bucket = bucketName(API_KEY, BASE_URL) as string;
    expect('lease' in (await store.admit(bucket))).toBe(true);
    expect(await store.admit(bucket)).toMatchObject({
      reason: 'budget-in-flight',
    });
  });

  it('holds the key longer after each request in a row that got no response: no probe loop', async () => {
    const sentAt: number[] = [];
    const fetch = (url: string, init: RequestInit) => {
      const request = new Request(url, init);
      sentAt.push(Date.now());
      return new Promise<Response>((_, reject) =>
        request.signal.addEventListener('abort', () => reject(request.signal.reason)),
      );
    };
    const client = clientWith(fetch, { timeoutMs: 50, maxRetries: 0 });
    // One call after another, each arriving in the cooldown the one before it began.
    const calls = (async () => {
      for (let i = 0; i < 6; i++) await client.listPets().catch((e: unknown) => e);
    })();
    await finish([calls]);
    // 50 ms each, then 100, 200, 400, 800, 1600 ms of cooldown between them.
    const gaps = sentAt.slice(1).map((at, i) => at - sentAt[i]!);
    expect(gaps).toEqual([150, 250, 450, 850, 1650]);
  });

  it('pauses the key alike whether calls share a client or each make their own', async () => {
    const outage = async (perCall: boolean) => {
      const sentAt: number[] = [];
      const refused = async () => {
        sentAt.push(Date.now());
        throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
      };
      const quotaStore = new MemoryQuotaStore();
      const shared = clientWith(refused, { quotaStore });
      const start = Date.now();
      await endsWithoutJitter(() =>
        Array.from({ length: 6 }, () =>
          (perCall ? clientWith(refused, { quotaStore }) : shared).listPets(),
        ),
      );
      return { sent: sentAt.length, gaps: sentAt.map((at) => at - start) };
    };
    const alike = await outage(false);
    expect(await outage(true)).toEqual(alike);
    expect(alike.sent).toBeLessThanOrEqual(9);
  });

  it('serves every call it holds once the service answers again after refusing', async () => {
    let sent = 0;
    const healing = () =>
      ++sent <= 2
        ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }))
        : Promise.resolve(json([rex]));
    const client = clientWith(healing);
    const results = await finish(Array.from({ length: 10 }, () => client.listPets()));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill('fulfilled'));
    expect(sent).toBe(12);
  });

  // One at a time, each call's three attempts took 189 s either way (alone: 1.5 s).
  it.each([
    [
      'the same request',
      (client: PetsClient) => client.listPets(),
      25_000,
      /the same request got no response (once|\d+ times in a row) while it waited/,
    ],
    [
      'different requests',
      (client: PetsClient, i: number) => client.getPet(i + 1),
      60_000,
      /getPet requests, after its own got none, got no response (once|\d+ times in a row)/,
    ],
  ])(
    'ends calls made together in an outage about as soon as one alone, none sent more than alone: %s',
    async (_, call, within, said) => {
      const stub = scriptedFetch().thenAlways(() =>
        Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })),
      );
      const client = clientWith(stub.fetch);
      const start = Date.now();
      const ended: number[] = [];
      const calls = Array.from({ length: 10 }, (_, i) =>
        call(client, i).finally(() => ended.push(Date.now() - start)),
      );
      const results = await finish<unknown>(calls, 400_000);
      const errors = results.map((r) => (r.status === 'rejected' ? r.reason : r));
      expect(errors.every((error) => error instanceof ConnectionError)).toBe(true);
      expect(Math.max(...ended)).toBeLessThan(within);
      expect(stub.received.length).toBeLessThanOrEqual(30);
      const held = errors.filter((error) => /was not sent/.test((error as Error).message));
      expect(held.length).toBeGreaterThan(0);
      for (const error of held) {
        expect((error as Error).message).toMatch(said);
        expect(String((error as Error).cause)).toMatch(/fetch failed/);
      }
    },
  );

  it('fails no call held in an outage sooner than it would have failed alone', async () => {
    const start = Date.now();
    // Alone, a call tries at 0, 0.5 and 1.5 s: a service back at 1.4 s serves it, and every other.
    const healing = () =>
      Date.now() - start < 1_400
        ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }))
        : Promise.resolve(json([rex]));
    expect(await tenTogether(healing)).toEqual(Array(10).fill('fulfilled'));
  });

  it('fails no held call for timeouts shorter than its own: the service was slow, not gone', async () => {
    // Every answer takes 300 ms: calls with timeoutMs 100 time out, one with the default is served.
    const slow = () =>
      new Promise<Response>((resolve) => setTimeout(() => resolve(json(rex, 201)), 300));
    const client = clientWith(slow);
    const quick = Array.from({ length: 6 }, () => client.getPet(1, { timeoutMs: 100 }));
    const patient = client.createPet({ name: 'Rex', categoryId: 3 });
    const results = await finish([...quick, patient]);
    expect(results.slice(0, 6).every((r) => r.status === 'rejected')).toBe(true);
    expect(results[6]?.status).toBe('fulfilled');
  });

  it.each([
    ['the in-memory store', () => new MemoryQuotaStore()],
    ['a store of its own that answers in 30 ms', () => slowStore(30)],
  ])('fails no call for another request that gets no response, with %s', async (_, store) => {
    // The service drops one request only (a listPets of 99, say): the others are served.
    const partial = (url: string, init?: { method?: string }) =>
      url.includes('limit=99')
        ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'UND_ERR_SOCKET' } }))
        : Promise.resolve(
            init?.method === 'POST' ? json(rex, 201) : json(/\/1$/.test(url) ? rex : [rex]),
          );
    const client = clientWith(partial, { quotaStore: store() });
    const broken = Array.from({ length: 5 }, () => client.listPets({ limit: 99 }));
    const others = [
      client.createPet({ name: 'Rex', categoryId: 3 }),
      client.listPets({ limit: 5 }),
      client.getPet(1),
    ];
    const results = await finish<unknown>([...broken, ...others]);
    expect(results.slice(5).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
  });

  it('fails no call for another route that gets no response: a broken getPet fails no listPets or createPet', async () => {
    const partial = (url: string, init?: { method?: string }) =>
      /\/pets\/\d+$/.test(url)
        ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))
        : Promise.resolve(init?.method === 'POST' ? json(rex, 201) : json([rex]));
    const client = clientWith(partial);
    const broken = Array.from({ length: 6 }, (_, i) => client.getPet(i + 1));
    const others = [client.listPets(), client.createPet({ name: 'Rex', categoryId: 3 })];
    const results = await finish<unknown>([...broken, ...others]);
    expect(results.slice(6).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('counts afresh after a response: a 503, then an outage, ends as soon as the outage alone', async () => {
    let sent = 0;
    const closing = () =>
      ++sent === 1
        ? Promise.resolve(apiError(503))
        : Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }));
    const client = clientWith(closing);
    const start = Date.now();
    const ended: number[] = [];
    const calls = Array.from({ length: 10 }, () =>
      client.listPets().finally(() => ended.push(Date.now() - start)),
    );
    await finish<unknown>(calls, 400_000);
    // Spared for good by the 503, they took 45 s.
    expect(Math.max(...ended)).toBeLessThan(25_000);
  });

  it('fails no call for timeouts shorter than its own, however close: its own would have been enough', async () => {
    // Every answer takes 950 ms: seven calls with timeoutMs 900 time out, one with 1000 is served.
    const slow = () =>
      new Promise<Response>((resolve) => setTimeout(() => resolve(json([rex])), 950));
    const client = clientWith(slow);
    const short = Array.from({ length: 7 }, () => client.listPets(undefined, { timeoutMs: 900 }));
    const results = await finish<unknown>([
      ...short,
      client.listPets(undefined, { timeoutMs: 1000 }),
    ]);
    expect(results[7]?.status).toBe('fulfilled');
  });

  it('fails no call for other inputs of its operation that fail before it is sent: one shard down', async () => {
    // Odd ids are reset, even ones answered; createPet bodies named Bad are reset.
    const shard = (url: string, init?: { method?: string; body?: unknown }) =>
      /[13579]$/.test(url) || String(init?.body).includes('Bad')
        ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))
        : Promise.resolve(
            init?.method === 'POST'
              ? json(rex, 201)
              : json({ ...rex, id: Number(/\d+$/.exec(url)) }),
          );
    const client = clientWith(shard);
    const odd = [1, 3, 5, 7, 9, 11].map((id) => client.getPet(id));
    const bad = ['Bad 1', 'Bad 2', 'Bad 3'].map((name) =>
      client.createPet({ name, categoryId: 3 }),
    );
    const good = [client.getPet(2), client.createPet({ name: 'Rex', categoryId: 3 })];
    const results = await finish<unknown>([...odd, ...bad, ...good]);
    expect(results.slice(9).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('counts another input only once its own last attempt got none: another call of its request failing does not', async () => {
    // Even ids are reset; id 1 only before 200 ms. Another getPet(1) fails then: this one, never
    // sent, counted the even ids' failures after it and failed unsent; alone it is served.
    const start = Date.now();
    const flaky = (url: string) =>
      /[02468]$/.test(url) || (url.endsWith('/1') && Date.now() - start < 200)
        ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))
        : Promise.resolve(json(rex));
    const client = clientWith(flaky);
    const before = [2, 1, 4, 6, 8, 10].map((id) => client.getPet(id));
    const results = await finish<unknown>([...before, client.getPet(1)]);
    expect(results.at(-1)?.status).toBe('fulfilled');
  });

  it('takes a query for the same whatever the order its fields were given in', async () => {
    // Only status=sold is reset: a listPets() behind it, asked in either order, is served.
    const query = (url: string) =>
      url.includes('status=sold')
        ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))
        : Promise.resolve(json([rex]));
    const client = clientWith(query);
    const sold = Array.from({ length: 7 }, (_, i) =>
      client.listPets(i % 2 ? { status: 'sold', limit: 5 } : { limit: 5, status: 'sold' }),
    );
    const results = await finish<unknown>([...sold, client.listPets()]);
    expect(results[7]?.status).toBe('fulfilled');
  });

  it('spares calls that waited out a 429 and then meet a short blip, as one alone would', async () => {
    const start = Date.now();
    let sent = 0;
    // A 429 asking 2 s, then connections reset for 400 ms, then answers.
    const blip = () =>
      ++sent === 1
        ? Promise.resolve(apiError(429, { 'retry-after': '2' }))
        : Date.now() - start < 2_400
          ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))
          : Promise.resolve(json([rex]));
    expect(await tenTogether(blip)).toEqual(Array(10).fill('fulfilled'));
  });

  /** Two clients of one key and store, `x-tenant` a and b: every request of a's is reset. */
  function tenants() {
    const store = new MemoryQuotaStore();
    const byTenant = (_: string, init?: { headers?: Record<string, string> }) =>
      init?.headers?.['x-tenant'] === 'a'
        ? Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))
        : Promise.resolve(json([rex]));
    const a = clientWith(byTenant, { quotaStore: store, headers: { 'x-tenant': 'a' } });
    return { a, b: clientWith(byTenant, { quotaStore: store, headers: { 'x-tenant': 'b' } }) };
  }

  it('counts only the same client and headers: another tenant of the key is not failed', async () => {
    const { a, b } = tenants();
    const broken = Array.from({ length: 5 }, () => a.listPets({ limit: 5 }));
    const perCall = a.listPets({ limit: 5 }, { headers: { 'x-tenant': 'b' } });
    const results = await finish<unknown>([...broken, b.listPets({ limit: 5 }), perCall]);
    expect(results.slice(5).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('counts no other client: one whose every request fails, different ones, fails no call of another', async () => {
    const { a, b } = tenants();
    const broken = Array.from({ length: 6 }, (_, i) => a.listPets({ limit: i + 1 }));
    const results = await finish<unknown>([...broken, b.listPets(), b.listPets({ limit: 5 })]);
    expect(results.slice(6).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('fails a held call as a TimeoutError when the requests it counted timed out', async () => {
    const silent = (_: string, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
      );
    const client = clientWith(silent, { timeoutMs: 300 });
    const results = await finish(Array.from({ length: 5 }, () => client.listPets()));
    const unsent = results.flatMap((r) =>
      r.status === 'rejected' && /was not sent/.test(String(r.reason)) ? [r.reason] : [],
    );
    expect(unsent.length).toBeGreaterThan(0);
    for (const error of unsent) {
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error.message).toMatch(/Raise timeoutMs if the service is slow\.$/);
    }
  });

  it('counts the time each failed request took: a call alone would have waited them out', async () => {
    // Silent until 13.4 s, then served. Alone, a call made at 2.05 s with timeoutMs 2000 and
    // maxRetries 4 sends its fifth request after 17.5 s (four timeouts and back-offs of 7.5 s).
    const start = Date.now();
    const silent = (_: string, init?: RequestInit) =>
      Date.now() - start >= 13_400
        ? Promise.resolve(json([rex]))
        : new Promise<Response>((_resolve, reject) =>
            init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
          );
    const client = clientWith(silent, { timeoutMs: 2000, maxRetries: 4 });
    const ends = await endsWithoutJitter(() => {
      const first = client.listPets();
      const later = sleep(2050).then(() =>
        Promise.all(Array.from({ length: 6 }, () => client.listPets())),
      );
      return [first, later];
    });
    expect(ends).toEqual(['fulfilled', 'fulfilled']);
  });

  it('tells the store how long a lease may live: timeoutMs and a margin', async () => {
    const store = new MemoryQuotaStore();
    const asked: unknown[] = [];
    const real = store.admit.bind(store);
    store.admit = (bucket, request) => {
      asked.push(request);
      return real(bucket, request);
    };
    const client = clientWith(scriptedFetch().thenAlways(json([rex])).fetch, {
      quotaStore: store,
      timeoutMs: 3000,
    });
    await client.listPets();
    expect(asked).toEqual([{ leaseMs: 5000 }]);
  });

  it('never fails a call that got its response because the store failed to record it', async () => {
    class FailingStore extends MemoryQuotaStore {
      override async observe(): Promise<void> {
        throw new Error('store down');
      }
    }
    const { logger, lines } = recordingLogger();
    const stub = scriptedFetch(json(rex, 201));
    const client = clientWith(stub.fetch, {
      quotaStore: new FailingStore(),
      logLevel: 'error',
      logger,
    });
    await expect(client.createPet({ name: 'Rex', categoryId: 3 })).resolves.toEqual(rex);
    expect(lines).toEqual([expect.stringMatching(/quota store failed to record.*store down/)]);
  });
});

describe('a broken store or logger', () => {
  const stub = () => scriptedFetch().thenAlways(json([rex]));

  it.each([
    [
      'throws at once',
      () => {
        throw new Error('sync boom');
      },
    ],
    ['answers null', async () => null],
    ['answers a NaN wait', async () => ({ reason: 'cooldown', waitMs: Number.NaN })],
    // Leases are told apart by their text: an empty one could be any other.
    ['answers an empty lease', async () => ({ lease: '' })],
  ])('fails the call typed, and the next call is not wedged, when admit %s', async (_, admit) => {
    let broken = true;
    const store = new MemoryQuotaStore();
    const real = store.admit.bind(store);
    store.admit = ((bucket: string) => (broken ? admit() : real(bucket))) as typeof store.admit;
    const client = clientWith(stub().fetch, { quotaStore: store });
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect((error as Error).message).toMatch(/quota store failed/);
    broken = false;
    await expect(client.listPets()).resolves.toEqual([rex]);
  });

  it('clamps a wait a store answers beyond a day', async () => {
    const store = new MemoryQuotaStore();
    store.admit = async () => ({ reason: 'cooldown', waitMs: 1e20 });
    const error = (await clientWith(stub().fetch, { quotaStore: store })
      .listPets()
      .catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfterMs).toBe(86_400_000);
  });

  it('lets a call succeed when the logger throws', async () => {
    const boom = () => {
      throw new Error('logger down');
    };
    const fetch = scriptedFetch(json([rex], 200, limits(0, 1))).thenAlways(json([rex])).fetch;
    const client = clientWith(fetch, {
      logLevel: 'debug',
      logger: { debug: boom, info: boom, warn: boom, error: boom },
    });
    await client.listPets();
    await expect(finish([client.listPets()])).resolves.toEqual([
      { status: 'fulfilled', value: [rex] },
    ]);
  });
});

describe('no hot loop from options', () => {
  it('sends a failing service one request when maxRetryDelayMs is 0, not a burst', async () => {
    const stub = scriptedFetch().thenAlways(apiError(503));
    const client = clientWith(stub.fetch, { maxRetries: 50, maxRetryDelayMs: 0 });
    await expect(client.listPets()).rejects.toBeInstanceOf(ServerError);
    expect(stub.received).toHaveLength(1);
  });

  it('never retries faster than the back-off floor', async () => {
    const stub = scriptedFetch().thenAlways(apiError(503));
    const client = clientWith(stub.fetch, { maxRetries: 20, maxRetryDelayMs: 100 });
    await finish([client.listPets()]);
    const gaps = stub.received.slice(1).map((r, i) => r.at - stub.received[i]!.at);
    expect(gaps).toHaveLength(20);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(100);
  });
});

describe('a 429 in this process', () => {
  it('holds every client of the key here even when its store fails to record it', async () => {
    // Stores that lose the 429 (a Redis past its command timeout): the lease
    // ends, the cooldown is never recorded, and the store says so late. Two
    // store objects, as two clients on one Redis may each make their own.
    const forgetful = () => {
      const memory = new MemoryQuotaStore();
      return {
        admit: (bucket: string, options?: AdmitRequest) => memory.admit(bucket, options),
        release: (bucket: string, lease: string) => memory.release(bucket, lease),
        observe: async (bucket: string, lease: string, observation: Observation) => {
          await memory.observe(bucket, lease, { ...observation, status: 200, cooldownMs: 0 });
          await sleep(300);
          throw new Error('the store timed out');
        },
      };
    };
    const stub = scriptedFetch(apiError(429, { 'retry-after': '2' })).thenAlways(json([rex]));
    const a = clientWith(stub.fetch, { quotaStore: forgetful(), maxRetries: 0 });
    const b = clientWith(stub.fetch, { quotaStore: forgetful() });
    const first = a.listPets().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5);
    const second = b.listPets();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await first).toBeInstanceOf(RateLimitError);
    expect(await second).toEqual([rex]);
    expect(stub.received[1]!.at - stub.received[0]!.at).toBeGreaterThanOrEqual(2_000);
  });

  it.each([
    ['the default store', 'a store of its own'],
    ['a store of its own', 'the default store'],
  ])('holds a client of the key on %s after a 429 met by one on %s', async (held, met) => {
    const store = (which: string) =>
      which === 'the default store'
        ? undefined
        : (() => {
            const memory = new MemoryQuotaStore();
            return {
              admit: (bucket: string, o?: AdmitRequest) => memory.admit(bucket, o),
              observe: (bucket: string, lease: string, o: Observation) =>
                memory.observe(bucket, lease, o),
              release: (bucket: string, lease: string) => memory.release(bucket, lease),
            };
          })();
    // A key of its own: the default store and the cooldowns outlive the test.
    const apiKey = `sk_mixed_stores_${held.length}`;
    const stub = scriptedFetch(apiError(429, { 'retry-after': '2' })).thenAlways(json([rex]));
    const a = clientWith(stub.fetch, { apiKey, quotaStore: store(met), maxRetries: 0 });
    const b = clientWith(stub.fetch, { apiKey, quotaStore: store(held) });
    await expect(a.listPets()).rejects.toBeInstanceOf(RateLimitError);
    const second = b.listPets();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await second).toEqual([rex]);
    expect(stub.received[1]!.at - stub.received[0]!.at).toBeGreaterThanOrEqual(2_000);
  });
});

describe('a MemoryQuotaStore on a clock of its own', () => {
  it('alone decides when its 429 is over, as its clock says', async () => {
    let now = Date.now();
    const store = new MemoryQuotaStore({ now: () => now });
    const stub = scriptedFetch(apiError(429, { 'retry-after': '30' })).thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { quotaStore: store, maxRetries: 0, maxRetryDelayMs: 0 });
    await expect(client.listPets()).rejects.toBeInstanceOf(RateLimitError);
    now += 31_000;
    expect(await client.listPets()).toEqual([rex]);
    expect(stub.received).toHaveLength(2);
  });
});
