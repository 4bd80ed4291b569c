import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as sdk from '../src/index.js';
import { MemoryQuotaStore, PetsClient, TimeoutError } from '../src/index.js';
import { settle, useFakeTime } from './helpers/fake-time.js';
import { apiError, clientWith, json, rex, scriptedFetch } from './helpers/scripted-fetch.js';

beforeEach(() => useFakeTime());
afterEach(() => vi.useRealTimers());

describe('abort', () => {
  it('rejects with the signal’s reason at once, in the middle of a back-off wait', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '30' })).thenAlways(json([rex]));
    const controller = new AbortController();
    const call = clientWith(stub.fetch)
      .listPets({}, { signal: controller.signal })
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    controller.abort();
    const error = await call;
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(stub.received).toHaveLength(1);
  });

  it('rejects with a custom reason while the request is in flight, even if fetch ignores the signal', async () => {
    const stub = scriptedFetch(() => new Promise<Response>(() => {}));
    const controller = new AbortController();
    const call = clientWith(stub.fetch)
      .getPet(1, { signal: controller.signal })
      .catch((e: unknown) => e);
    await settle();
    const reason = new Error('user left the page');
    controller.abort(reason);
    expect(await call).toBe(reason);
  });

  it('rejects without sending when the signal is already aborted', async () => {
    const stub = scriptedFetch(json([rex]));
    const reason = new Error('too late');
    await expect(
      clientWith(stub.fetch).listPets({}, { signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    expect(stub.received).toHaveLength(0);
  });

  it('rejects with the reason while the call is held by the client-wide cooldown', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '20' })).thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { maxRetries: 0 });
    await client.listPets().catch(() => undefined);
    const controller = new AbortController();
    const held = client.listPets({}, { signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort('stop');
    expect(await held).toBe('stop');
    expect(stub.received).toHaveLength(1);
  });

  it('rejects at once when the signal aborts while the quota store is asked, the window spent', async () => {
    // Spent for 30 s, within maxRetryDelayMs: the call would be held, not failed at once.
    const spent = {
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '30',
    };
    const stub = scriptedFetch(json(rex, 200, spent)).thenAlways(json(rex));
    const controller = new AbortController();
    let armed = false;
    // The store's clock aborts the call in the middle of its admission.
    const now = () => {
      if (armed) controller.abort('gave up');
      return Date.now();
    };
    const client = clientWith(stub.fetch, {
      maxRetries: 0,
      quotaStore: new MemoryQuotaStore({ now }),
    });
    await client.getPet(1);
    armed = true;
    const call = client.getPet(1, { signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    expect(await Promise.race([call, 'still held'])).toBe('gave up');
    expect(stub.received).toHaveLength(1);
  });

  it('gives back a lease the store granted while the call was aborted, and sends nothing', async () => {
    const stub = scriptedFetch(json(rex));
    const controller = new AbortController();
    const now = () => {
      controller.abort('gave up');
      return Date.now();
    };
    const store = new MemoryQuotaStore({ now });
    const call = clientWith(stub.fetch, { quotaStore: store })
      .getPet(1, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(await call).toBe('gave up');
    expect(stub.received).toHaveLength(0);
    // The budget's first request (its probe) went back: the next call is sent at once.
    const next = clientWith(stub.fetch, { quotaStore: store }).getPet(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(await Promise.race([next, 'still held'])).toEqual(rex);
  });

  it('never holds the key after calls its caller aborted in flight, as it does after no response', async () => {
    // A search box: each keystroke aborts the call before it, whose answer has not come.
    const stub = scriptedFetch().thenAlways(() => new Promise<Response>(() => {}));
    const client = clientWith(stub.fetch);
    for (let key = 0; key < 5; key++) {
      const controller = new AbortController();
      const call = client.listPets({}, { signal: controller.signal }).catch((e: unknown) => e);
      await settle();
      controller.abort('next keystroke');
      expect(await call).toBe('next keystroke');
    }
    // Every call went out at once: none was held after the aborts before it.
    expect(stub.received).toHaveLength(5);
    expect(new Set(stub.received.map(({ at }) => at)).size).toBe(1);
  });

  it('passes the abort on to fetch', async () => {
    let seen: AbortSignal | undefined;
    const stub = scriptedFetch((request) => {
      seen = request.signal;
      return new Promise<Response>(() => {});
    });
    const controller = new AbortController();
    const call = clientWith(stub.fetch)
      .listPets({}, { signal: controller.signal })
      .catch(() => undefined);
    await settle();
    controller.abort();
    await call;
    expect(seen?.aborted).toBe(true);
  });
});

describe('timeout', () => {
  it('fails an attempt that gets no response within timeoutMs', async () => {
    const stub = scriptedFetch().thenAlways(() => new Promise<Response>(() => {}));
    const call = clientWith(stub.fetch, { timeoutMs: 500, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(499);
    await vi.advanceTimersByTimeAsync(1);
    const error = await call;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/timed out after 500 ms/);
  });

  it('times each attempt from its own start, on a timer an earlier attempt ended', async () => {
    vi.useRealTimers();
    const stub = scriptedFetch(json([rex])).thenAlways(() => new Promise<Response>(() => {}));
    const client = clientWith(stub.fetch, { timeoutMs: 200, maxRetries: 0 });
    await client.listPets();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const started = performance.now();
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    // 50 ms, were it timed from the first attempt's start.
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('times an attempt by fake timers installed after real ones timed another', async () => {
    vi.useRealTimers();
    const stub = scriptedFetch(json([rex])).thenAlways(() => new Promise<Response>(() => {}));
    const client = clientWith(stub.fetch, { timeoutMs: 200, maxRetries: 0 });
    await client.listPets();
    useFakeTime();
    let settled = false;
    const call = client
      .listPets()
      .catch((e: unknown) => e)
      .finally(() => (settled = true));
    await vi.advanceTimersByTimeAsync(200);
    expect(settled).toBe(true);
    expect(await call).toBeInstanceOf(TimeoutError);
  });

  it('leaves no timer of a finished call to fake timers, which a test counts and runs', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { timeoutMs: 30_000 });
    await client.listPets();
    await client.listPets();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('times attempts with a setTimeout whose timers have refresh() but no ref() or unref()', async () => {
    vi.useRealTimers();
    const { setTimeout: set, clearTimeout: clear } = globalThis;
    globalThis.setTimeout = ((callback: () => void, ms: number) => {
      const timer = set(callback, ms);
      return { refresh: () => timer.refresh(), [Symbol.toPrimitive]: () => Number(timer) };
    }) as unknown as typeof setTimeout;
    globalThis.clearTimeout = ((timer: unknown) => clear(Number(timer))) as typeof clearTimeout;
    try {
      const stub = scriptedFetch(json([rex]), json([rex])).thenAlways(
        () => new Promise<Response>(() => {}),
      );
      const client = clientWith(stub.fetch, { timeoutMs: 100, maxRetries: 0 });
      expect(await client.listPets()).toEqual([rex]);
      expect(await client.listPets()).toEqual([rex]);
      await expect(client.listPets()).rejects.toBeInstanceOf(TimeoutError);
    } finally {
      globalThis.setTimeout = set;
      globalThis.clearTimeout = clear;
    }
  });

  it('counts reading the body into the timeout', async () => {
    const slowBody = () => {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('[{"id":1,'));
        },
      });
      return new Response(stream, { status: 200 });
    };
    const stub = scriptedFetch(slowBody);
    const call = clientWith(stub.fetch, { timeoutMs: 1000, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await call).toBeInstanceOf(TimeoutError);
  });

  it('lets a call override timeoutMs, and times each attempt separately', async () => {
    const stub = scriptedFetch(() => new Promise<Response>(() => {}), json([rex]));
    const call = clientWith(stub.fetch, { timeoutMs: 60_000 }).listPets({}, { timeoutMs: 200 });
    await vi.advanceTimersByTimeAsync(200);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(call).resolves.toEqual([rex]);
    expect(stub.received).toHaveLength(2);
  });

  it('never retries a POST that timed out', async () => {
    const stub = scriptedFetch(() => new Promise<Response>(() => {}), json(rex, 201));
    const call = clientWith(stub.fetch, { timeoutMs: 100 })
      .createPet({ name: 'Rex', categoryId: 3 })
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    expect(await call).toBeInstanceOf(TimeoutError);
    expect(stub.received).toHaveLength(1);
  });

  it.each([
    ['after', false],
    ['before', true],
  ])(
    'holds a global fetch put in place %s the import, which ignores the signal, to timeoutMs',
    async (_, before) => {
      const ignoring = vi.fn(() => new Promise<Response>(() => {}));
      vi.stubGlobal('fetch', ignoring);
      try {
        if (before) vi.resetModules();
        const { PetsClient, MemoryQuotaStore } = before ? await import('../src/index.js') : sdk;
        const client = new PetsClient({
          apiKey: 'sk_test_global_fetch',
          baseUrl: 'http://127.0.0.1:9/v1',
          quotaStore: new MemoryQuotaStore(),
          timeoutMs: 200,
          maxRetries: 0,
        });
        const call = client.listPets().catch((e: unknown) => e);
        await vi.advanceTimersByTimeAsync(200);
        expect(await call).toBeInstanceOf(TimeoutError);
        expect(ignoring).toHaveBeenCalledTimes(1);
      } finally {
        vi.unstubAllGlobals();
      }
    },
  );
});

describe('the platform fetch, on loopback', () => {
  it('a timed-out attempt aborts its own request only, never another on the same connections', async () => {
    vi.useRealTimers();
    // /pets/2 never answers; /pets/3 answers after 150 ms; the rest at once.
    const server = createServer((request, response) => {
      const id = Number(request.url?.split('/').pop());
      const send = () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ ...rex, id }));
      };
      if (id === 3) setTimeout(send, 150);
      else if (id !== 2) send();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = new PetsClient({
      apiKey: 'key-0123456789',
      baseUrl: `http://127.0.0.1:${port}/v1`,
      maxRetries: 0,
      deprecationWarnings: false,
      quotaStore: new MemoryQuotaStore(),
    });
    try {
      // Each round: requests that end on two connections, then one that times out beside one
      // that takes longer, each on a connection an ended request used.
      for (let round = 0; round < 6; round++) {
        await Promise.all([client.getPet(1), client.getPet(1)]);
        const [hung, slow] = await Promise.allSettled([
          client.getPet(2, { timeoutMs: 100 }),
          client.getPet(3),
        ]);
        expect(hung.status === 'rejected' && hung.reason).toBeInstanceOf(TimeoutError);
        expect(slow).toEqual({ status: 'fulfilled', value: { ...rex, id: 3 } });
      }
      expect(await client.getPet(1)).toEqual(rex);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
  it('rejects with a reason whose getters throw, in the middle of a body, and nothing else throws', async () => {
    vi.useRealTimers();
    const server = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('[{"id":1,');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const thrown: unknown[] = [];
    const listener = (error: unknown) => thrown.push(error);
    process.on('uncaughtException', listener);
    const client = new PetsClient({
      apiKey: 'key-0123456789',
      baseUrl: `http://127.0.0.1:${port}/v1`,
      deprecationWarnings: false,
      quotaStore: new MemoryQuotaStore(),
    });
    const boom = () => {
      throw new Error('a getter threw');
    };
    const reason = Object.defineProperties(
      {},
      {
        name: { get: boom },
        message: { get: boom },
        stack: { get: boom },
      },
    );
    const controller = new AbortController();
    try {
      const call = client.listPets({}, { signal: controller.signal }).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 100));
      controller.abort(reason);
      expect(await call).toBe(reason);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(thrown).toEqual([]);
    } finally {
      process.off('uncaughtException', listener);
      server.closeAllConnections();
      server.close();
    }
  });
});
