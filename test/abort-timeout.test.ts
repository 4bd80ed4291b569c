import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TimeoutError } from '../src/index.js';
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
});
