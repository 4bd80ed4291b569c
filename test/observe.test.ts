// Seeing and extending every call: a custom fetch called as the platform's,
// per-request headers, hooks, raw responses and OpenTelemetry tracing, all
// through the public API.
import { type ContextManager, context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AnimalStoreError,
  type BeforeRequestContext,
  MemoryQuotaStore,
  NotFoundError,
  PetsClient,
  type RetryInfo,
  ServerError,
} from '../src/index.js';
import { type MockServer, SAMPLE_PETS, startMockServer } from '../src/mock/index.js';
import { recordingLogger } from './helpers/logger.js';
import {
  API_KEY,
  apiError,
  clientWith,
  json,
  rex,
  scriptedFetch,
} from './helpers/scripted-fetch.js';
import { sleep } from './helpers/sleep.js';

const KEY = 'sk_observe_0123456789';
let mock: MockServer;

beforeAll(async () => {
  mock = await startMockServer({ apiKeys: [KEY], seed: SAMPLE_PETS });
});
afterAll(async () => {
  await mock.close();
});

const { logger, lines } = recordingLogger(['error']);
afterEach(() => {
  lines.length = 0;
});

describe('a custom fetch', () => {
  it('is called as the platform fetch is, so the common wrapper keeps the key', async () => {
    const calls: { input: unknown; init: RequestInit }[] = [];
    const client = new PetsClient({
      apiKey: KEY,
      baseUrl: mock.url,
      quotaStore: new MemoryQuotaStore(),
      deprecationWarnings: false,
      // The wrapper users write: spread init, add a header.
      fetch: (input, init) => {
        calls.push({ input, init });
        return fetch(input, { ...init, headers: { ...init?.headers, 'x-trace-id': 'abc' } });
      },
    });
    expect(await client.listPets({ limit: 2 })).toHaveLength(2);
    const created = await client.createPet({ name: 'Wrapped', categoryId: 2 });
    expect(await client.getPet(created.id)).toMatchObject({ name: 'Wrapped' });
    const [list, post] = calls;
    expect(typeof list?.input).toBe('string');
    expect(list?.input).toBe(`${mock.url}/pets?limit=2`);
    expect(Object.keys(list?.init ?? {}).sort()).toEqual([
      'body',
      'headers',
      'method',
      'redirect',
      'signal',
    ]);
    expect(list?.init.method).toBe('GET');
    expect(list?.init.redirect).toBe('manual');
    expect(list?.init.signal).toBeInstanceOf(AbortSignal);
    expect(list?.init.headers).toMatchObject({ authorization: `Bearer ${KEY}` });
    expect(post?.init).toMatchObject({
      method: 'POST',
      body: '{"name":"Wrapped","categoryId":2}',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    });
  });
});

describe('a custom fetch, as users pass one', () => {
  it("may be undici's fetch, or a wrapper of it with a dispatcher, by type and at run time", async () => {
    const dispatcher = new Agent({ keepAliveTimeout: 10 });
    try {
      const options = { apiKey: KEY, baseUrl: mock.url, quotaStore: new MemoryQuotaStore() };
      const plain = new PetsClient({ ...options, fetch: undiciFetch });
      const wrapped = new PetsClient({
        ...options,
        fetch: (url, init) => undiciFetch(url, { ...init, dispatcher }),
      });
      expect(await plain.listPets({ limit: 1 })).toHaveLength(1);
      const { data, response } = await wrapped.withResponse.listPets({ limit: 2 });
      expect(data).toHaveLength(2);
      expect(response.rateLimit?.limit).toBeGreaterThan(0);
    } finally {
      await dispatcher.close();
    }
  });

  it('on globalThis, wrapped by someone else, gets headers of its own each time too', async () => {
    const original = globalThis.fetch;
    const sent: string[] = [];
    globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = (init?.headers ?? {}) as Record<string, string>;
      sent.push(headers['x-trace-id'] ?? '-');
      headers['x-trace-id'] ??= `trace-${sent.length}`;
      return original(input, init);
    };
    try {
      const client = new PetsClient({
        apiKey: KEY,
        baseUrl: mock.url,
        quotaStore: new MemoryQuotaStore(),
      });
      await client.listPets();
      await client.listPets();
      expect(sent).toEqual(['-', '-']);
    } finally {
      globalThis.fetch = original;
    }
  });

  it('gets headers of its own each time: what it changes in them reaches no other request', async () => {
    const sent: string[] = [];
    const client = new PetsClient({
      apiKey: KEY,
      baseUrl: mock.url,
      quotaStore: new MemoryQuotaStore(),
      fetch: (url, init) => {
        sent.push(`${init.headers.authorization} ${init.headers['x-trace'] ?? '-'}`);
        init.headers.authorization = 'Bearer someone-else';
        init.headers['x-trace'] ??= 'first';
        return fetch(url, init);
      },
    });
    await expect(client.listPets()).rejects.toThrow(/401/);
    await expect(client.listPets()).rejects.toThrow(/401/);
    expect(sent).toEqual([`Bearer ${KEY} -`, `Bearer ${KEY} -`]);
  });
});

describe('per-request headers', () => {
  it('are merged over the client headers, for that call only', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { headers: { 'x-a': 'client', 'x-b': 'client' } });
    await client.listPets({}, { headers: { 'x-b': 'call', 'x-c': 'call' } });
    await client.listPets();
    const [first, second] = stub.received.map((r) => r.request.headers);
    expect(first?.get('x-a')).toBe('client');
    expect(first?.get('x-b')).toBe('call');
    expect(first?.get('x-c')).toBe('call');
    expect(first?.get('authorization')).toBe(`Bearer ${API_KEY}`);
    expect(second?.get('x-b')).toBe('client');
    expect(second?.has('x-c')).toBe(false);
  });

  it('cannot set Authorization or a malformed header; nothing is sent', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch);
    await expect(
      client.listPets({}, { headers: { Authorization: 'Bearer other' } }),
    ).rejects.toThrow('Invalid listPets option headers: Authorization is set from apiKey');
    await expect(
      client.createPet({ name: 'x', categoryId: 1 }, { headers: { 'x-bad': 'a\nb' } }),
    ).rejects.toThrow(
      'Invalid createPet option headers: header "x-bad" is not valid (names must be tokens; values must not hold line breaks or characters beyond Latin-1: encode them).',
    );
    await expect(client.listPets({}, { headers: 'x-a: 1' as never })).rejects.toThrow(
      'Invalid listPets option headers: expected an object of header names and values, got the string',
    );
    await expect(
      client.listPets({}, { headers: new Headers({ authorization: 'Bearer other' }) }),
    ).rejects.toBeInstanceOf(AnimalStoreError);
    expect(stub.received).toHaveLength(0);
  });

  it('leave out a value undefined, and may be a Headers', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const requestId: string | undefined = undefined;
    const client = clientWith(stub.fetch, { headers: { 'x-a': 'client', 'x-gone': undefined } });
    await client.listPets({}, { headers: { 'x-request-id': requestId } });
    await client.listPets({}, { headers: new Headers({ 'x-from-headers': 'yes' }) });
    const [first, second] = stub.received.map((r) => r.request.headers);
    expect(first?.has('x-request-id')).toBe(false);
    expect(first?.has('x-gone')).toBe(false);
    expect(first?.get('x-a')).toBe('client');
    expect(second?.get('x-from-headers')).toBe('yes');
  });
});

describe('hooks', () => {
  it('see each request, response, wait and failure, with the operation and attempt', async () => {
    const stub = scriptedFetch(apiError(503), json([rex]), apiError(404)).thenAlways(json(rex));
    const events: string[] = [];
    const retries: RetryInfo[] = [];
    const client = clientWith(stub.fetch, {
      logger,
      logLevel: 'error',
      hooks: {
        beforeRequest: ({ operation, attempt, method, url, headers }) => {
          events.push(`request ${operation} #${attempt} ${method} ${url}`);
          expect(headers.has('authorization')).toBe(false);
          headers.set('x-attempt', String(attempt));
        },
        afterResponse: ({ operation, attempt, status, headers, durationMs }) => {
          events.push(`response ${operation} #${attempt} ${status}`);
          expect(headers).toBeInstanceOf(Headers);
          expect(durationMs).toBeGreaterThanOrEqual(0);
        },
        beforeRetry: (info) => {
          retries.push(info);
          events.push(`retry ${info.operation} after #${info.attempt} (${info.reason})`);
        },
        onError: ({ operation, attempt, error }) => {
          events.push(`error ${operation} after ${attempt}: ${(error as Error).name}`);
        },
      },
    });
    await client.listPets({ limit: 5 });
    await expect(client.getPet(9)).rejects.toBeInstanceOf(NotFoundError);
    expect(events).toEqual([
      'request listPets #1 GET http://127.0.0.1:4010/v1/pets?limit=5',
      'response listPets #1 503',
      'retry listPets after #1 (server-error)',
      'request listPets #2 GET http://127.0.0.1:4010/v1/pets?limit=5',
      'response listPets #2 200',
      'request getPet #1 GET http://127.0.0.1:4010/v1/pets/9',
      'response getPet #1 404',
      'error getPet after 1: NotFoundError',
    ]);
    expect(stub.received.map((r) => r.request.headers.get('x-attempt'))).toEqual(['1', '2', '1']);
    expect(retries[0]).toMatchObject({ operation: 'listPets', attempt: 1, reason: 'server-error' });
    expect(lines).toEqual([]);
  });

  it('that throw are logged and break nothing: no second POST, the budget kept, the key redacted', async () => {
    const stub = scriptedFetch(apiError(503)).thenAlways(json(rex, 201));
    const thrower = () => {
      throw new Error(`hook broke with ${API_KEY}`);
    };
    const client = clientWith(stub.fetch, {
      logger,
      logLevel: 'error',
      hooks: {
        beforeRequest: thrower,
        afterResponse: thrower,
        beforeRetry: thrower,
        onError: thrower,
      },
    });
    const error = await client.createPet({ name: 'Rex', categoryId: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(stub.received).toHaveLength(1);
    const created = await client.createPet({ name: 'Rex', categoryId: 3, status: 'available' });
    expect(created.id).toBe(1);
    expect(stub.received).toHaveLength(2);
    expect(
      lines.some((l) => l.startsWith('[animal-store] hooks.beforeRequest threw and was ignored')),
    ).toBe(true);
    expect(lines.some((l) => l.startsWith('[animal-store] hooks.afterResponse threw'))).toBe(true);
    expect(lines.some((l) => l.startsWith('[animal-store] hooks.onError threw'))).toBe(true);
    expect(lines.join('\n')).not.toContain(API_KEY);
  });

  it('cannot set Authorization from beforeRequest', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, {
      logger,
      logLevel: 'error',
      hooks: {
        beforeRequest: ({ headers }: BeforeRequestContext) =>
          headers.set('authorization', 'Bearer stolen'),
      },
    });
    await client.listPets();
    expect(stub.received[0]?.request.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
    expect(lines).toEqual([
      expect.stringContaining('"authorization" was left out: Authorization is set from apiKey'),
    ]);
  });

  it.each([
    [
      'its own forEach that throws',
      { 'x-hook': '1' },
      (h: Headers) => {
        h.forEach = () => {
          throw new Error('broken');
        };
      },
    ],
    ['a null prototype', {}, (h: Headers) => Object.setPrototypeOf(h, null)],
  ])('sends a request whose beforeRequest gave its Headers %s', async (_, kept, breaks) => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, {
      logger,
      logLevel: 'error',
      headers: { 'x-client': 'c' },
      hooks: {
        beforeRequest: ({ headers }: BeforeRequestContext) => {
          headers.set('x-hook', '1');
          breaks(headers);
        },
      },
    });
    expect(await client.listPets()).toEqual([rex]);
    const sent = stub.received[0]?.request.headers;
    expect(
      Object.fromEntries([...(sent?.entries() ?? [])].filter(([n]) => n.startsWith('x-'))),
    ).toEqual({
      'x-client': 'c',
      ...kept,
    });
    expect(lines).toEqual(
      Object.keys(kept).length ? [] : [expect.stringContaining('broke the Headers it was given')],
    );
  });

  it('drops a connection header set by beforeRequest, so the call goes as without it', async () => {
    const sent: Record<string, string>[] = [];
    const client = new PetsClient({
      apiKey: KEY,
      baseUrl: mock.url,
      logger,
      logLevel: 'error',
      quotaStore: new MemoryQuotaStore(),
      // The platform's fetch refuses a connection header: the call would fail as if unanswered.
      fetch: (url, init) => {
        sent.push(init.headers);
        return fetch(url, init);
      },
      hooks: {
        beforeRequest: ({ headers }: BeforeRequestContext) => {
          headers.set('keep-alive', 'timeout=5');
          headers.set('x-kept', '1');
        },
      },
    });
    expect(await client.listPets({ limit: 1 })).toHaveLength(1);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.['x-kept']).toBe('1');
    expect(sent[0]).not.toHaveProperty('keep-alive');
    expect(lines).toEqual([expect.stringContaining('"keep-alive" is set by the HTTP client')]);
  });

  it('that are async and reject are logged, never an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const stub = scriptedFetch(apiError(503)).thenAlways(json([rex]));
      const rejecter = async () => {
        throw new Error(`async hook broke with ${API_KEY}`);
      };
      const client = clientWith(stub.fetch, {
        logger,
        logLevel: 'error',
        hooks: {
          beforeRequest: rejecter,
          afterResponse: rejecter,
          beforeRetry: rejecter,
          onError: rejecter,
        },
      });
      expect(await client.listPets()).toEqual([rex]);
      await expect(client.getPet(Number.NaN)).rejects.toThrow('petId');
      await sleep(20);
      expect(unhandled).toEqual([]);
      for (const hook of ['beforeRequest', 'afterResponse', 'beforeRetry', 'onError']) {
        expect(lines).toContainEqual(
          `[animal-store] hooks.${hook} threw and was ignored: Error: async hook broke with [redacted]`,
        );
      }
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('that throw what cannot be turned into text are still logged', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, {
      logger,
      logLevel: 'error',
      hooks: {
        afterResponse: () => {
          throw Object.create(null);
        },
      },
    });
    expect(await client.listPets()).toEqual([rex]);
    expect(lines).toEqual([
      '[animal-store] hooks.afterResponse threw and was ignored: a value of type object',
    ]);
  });

  it('are read once, when the client is made', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const seen: string[] = [];
    const hooks: { afterResponse?: () => void } = { afterResponse: () => seen.push('first') };
    const client = clientWith(stub.fetch, { hooks });
    hooks.afterResponse = () => {
      throw new Error('replaced');
    };
    await client.listPets();
    expect(seen).toEqual(['first']);
  });

  it('must be functions, under the names there are', () => {
    expect(() => clientWith(scriptedFetch().fetch, { hooks: { onError: 'no' as never } })).toThrow(
      'Invalid hooks.onError: expected a function, got the string "no"',
    );
    expect(() =>
      clientWith(scriptedFetch().fetch, { hooks: { beforeRequets: () => undefined } as never }),
    ).toThrow(
      'Invalid hooks.beforeRequets: there is no such hook; the hooks are beforeRequest, afterResponse, beforeRetry, onError.',
    );
    expect(() => clientWith(scriptedFetch().fetch, { hooks: 'all' as never })).toThrow(
      AnimalStoreError,
    );
  });
});

describe('client.withResponse', () => {
  it('gives the validated data with the status, headers, rate-limit values and attempts', async () => {
    const reset = String(Math.ceil(Date.now() / 1000) + 60);
    const stub = scriptedFetch(apiError(503)).thenAlways((request) =>
      json(request.method === 'POST' ? rex : [rex], request.method === 'POST' ? 201 : 200, {
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '41',
        'x-ratelimit-reset': reset,
        'x-echo': `Bearer ${API_KEY}`,
        'x-request-id': 'req-1',
      }),
    );
    const client = clientWith(stub.fetch);
    const { data, response } = await client.withResponse.listPets({ status: 'available' });
    expect(data).toEqual([rex]);
    expect(response.status).toBe(200);
    expect(response.attempts).toBe(2);
    expect(response.headers.get('x-request-id')).toBe('req-1');
    expect(response.headers.get('x-echo')).toBe('Bearer [redacted]');
    expect(response.rateLimit).toMatchObject({ limit: 60, remaining: 41 });
    const created = await client.withResponse.createPet({ name: 'Rex', categoryId: 3 });
    expect(created.data.name).toBe('Rex');
    expect(created.response.status).toBe(201);
    await expect(client.withResponse.getPet('x' as unknown as number)).rejects.toThrow('petId');
  });
});

describe('OpenTelemetry', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  afterEach(() => exporter.reset());
  const spans = () => exporter.getFinishedSpans();
  const everything = (list: ReadableSpan[]) =>
    JSON.stringify(
      list.map((s) => ({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
      })),
    );

  it('makes one span per call, with an event for each retry and each hold', async () => {
    const stub = scriptedFetch(apiError(503)).thenAlways(
      json([rex], 200, {
        'x-ratelimit-limit': '9',
        'x-ratelimit-remaining': '5',
        'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
      }),
    );
    const client = clientWith(stub.fetch, { apiKey: KEY, tracing: { tracerProvider: provider } });
    // Two at once on an unknown budget: the second is held for the first's answer.
    await Promise.all([client.listPets(), client.listPets()]);
    const finished = spans();
    expect(finished.map((s) => s.name)).toEqual(['listPets', 'listPets']);
    const events = finished.flatMap((s) =>
      s.events.map((e) => `${e.name}:${e.attributes?.['animal_store.reason']}`),
    );
    expect(events).toContain('retry:server-error');
    expect(events).toContain('hold:budget-unknown');
    expect(finished[0]?.kind).toBe(0);
    expect(finished[0]?.attributes).toMatchObject({
      'animal_store.operation': 'listPets',
      'server.address': '127.0.0.1',
    });
    expect(everything(finished)).not.toContain(KEY);
  });

  it('adds HTTP client spans per attempt under the call, when asked, after the semantic conventions', async () => {
    const stub = scriptedFetch(apiError(503), json([rex])).thenAlways(apiError(404));
    const client = clientWith(stub.fetch, {
      apiKey: KEY,
      tracing: { tracerProvider: provider, httpSpans: true },
    });
    await client.listPets({ limit: 3 });
    await client.getPet(5).catch(() => undefined);
    const finished = spans();
    const http = finished.filter((s) => s.kind === 2);
    expect(http.map((s) => s.name)).toEqual(['GET /pets', 'GET /pets', 'GET /pets/{petId}']);
    expect(http[0]?.attributes).toEqual({
      'http.request.method': 'GET',
      'url.full': 'http://127.0.0.1:4010/v1/pets?limit=3',
      'url.template': '/pets',
      'server.address': '127.0.0.1',
      'server.port': 4010,
      'http.response.status_code': 503,
      'error.type': '503',
    });
    expect(http[1]?.attributes).toMatchObject({
      'http.request.resend_count': 1,
      'http.response.status_code': 200,
    });
    expect(http[1]?.attributes['error.type']).toBeUndefined();
    const calls = finished.filter((s) => s.kind === 0);
    expect(http[0]?.parentSpanContext?.spanId).toBe(calls[0]?.spanContext().spanId);
    expect(calls[1]?.status.code).toBe(2);
    expect(calls[1]?.attributes['error.type']).toBe('NotFoundError');
    const exception = calls[1]?.events.find((e) => e.name === 'exception');
    expect(exception?.attributes).toMatchObject({
      'exception.type': 'NotFoundError',
      'exception.message': expect.stringContaining('404'),
    });
    expect(everything(finished)).not.toContain(KEY);
  });

  it('uses the globally registered provider, under the active span, unless turned off', async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    trace.setGlobalTracerProvider(provider);
    try {
      const stub = scriptedFetch().thenAlways(json([rex]));
      const client = clientWith(stub.fetch);
      const tracer = trace.getTracer('app');
      await tracer.startActiveSpan('request handler', async (parent) => {
        await client.listPets();
        parent.end();
      });
      const [call, parent] = spans();
      expect(call?.name).toBe('listPets');
      expect(call?.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
      exporter.reset();
      await clientWith(stub.fetch, { tracing: false }).listPets();
      expect(spans()).toEqual([]);
    } finally {
      trace.disable();
      context.disable();
    }
  });

  it('asked for without a provider registered, says once that nothing is traced', async () => {
    const { logger, lines: warnings } = recordingLogger(['warn']);
    const stub = scriptedFetch().thenAlways(json([rex]));
    const options = { logger, logLevel: 'warn' } as const;
    const client = clientWith(stub.fetch, { ...options, tracing: { httpSpans: true } });
    await client.listPets();
    await client.listPets();
    await clientWith(stub.fetch, options).listPets();
    expect(warnings).toEqual([
      expect.stringMatching(
        /tracing was passed, but no OpenTelemetry tracer provider is registered/,
      ),
    ]);
  });

  it("makes the call's span, or the attempt's HTTP span, active while fetch runs", async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const active: (string | undefined)[] = [];
      const fetch = async () => {
        active.push(trace.getActiveSpan()?.spanContext().spanId);
        return json([rex]);
      };
      await clientWith(fetch, { tracing: { tracerProvider: provider } }).listPets();
      const [call] = spans();
      expect(active).toEqual([call?.spanContext().spanId]);
      exporter.reset();
      active.length = 0;
      await clientWith(fetch, {
        tracing: { tracerProvider: provider, httpSpans: true },
      }).listPets();
      const http = spans().find((s) => s.kind === 2);
      expect(active).toEqual([http?.spanContext().spanId]);
      expect(trace.getActiveSpan()).toBeUndefined();
    } finally {
      context.disable();
    }
  });

  it('sends once, and reports what came back, whatever a broken context manager does', async () => {
    for (const broken of ['runs it twice', 'throws after it', 'returns nothing'] as const) {
      const manager = {
        active: () => ROOT_CONTEXT,
        with: (_: unknown, fn: () => unknown) => {
          const result = fn();
          if (broken === 'runs it twice') fn();
          if (broken === 'throws after it') throw new Error('manager broke');
          return broken === 'returns nothing' ? undefined : result;
        },
        bind: <T>(_: unknown, target: T) => target,
        enable() {
          return this;
        },
        disable() {
          return this;
        },
      };
      context.setGlobalContextManager(manager as unknown as ContextManager);
      try {
        const stub = scriptedFetch().thenAlways(json(rex, 201));
        const client = clientWith(stub.fetch, { tracing: { tracerProvider: provider } });
        expect(
          await client.createPet({ name: rex.name, categoryId: rex.categoryId }),
          broken,
        ).toEqual(rex);
        expect(stub.received, broken).toHaveLength(1);
      } finally {
        context.disable();
      }
    }
  });

  it('that fails never fails the call', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const broken = {
      getTracer: () => ({
        startSpan: () => {
          throw new Error('tracer down');
        },
      }),
    };
    const client = clientWith(stub.fetch, {
      logger,
      logLevel: 'error',
      tracing: { tracerProvider: broken },
    });
    expect(await client.listPets()).toEqual([rex]);
    expect(lines).toEqual([
      expect.stringContaining('Tracing failed and was skipped: Error: tracer down'),
    ]);
  });

  it('whose spans throw at every step never fails, holds or resends a call', async () => {
    const stub = scriptedFetch(apiError(503)).thenAlways(json([rex]));
    const boom = () => {
      throw new Error('span down');
    };
    const span = {
      setAttribute: boom,
      addEvent: boom,
      setStatus: boom,
      recordException: boom,
      end: boom,
    };
    const client = clientWith(stub.fetch, {
      logger,
      logLevel: 'error',
      tracing: {
        tracerProvider: { getTracer: () => ({ startSpan: () => span }) },
        httpSpans: true,
      },
    });
    await expect(client.createPet({ name: 'Rex', categoryId: 3 })).rejects.toBeInstanceOf(
      ServerError,
    );
    expect(stub.received).toHaveLength(1);
    expect(await client.listPets()).toEqual([rex]);
    expect(stub.received).toHaveLength(2);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.includes('Tracing failed and was skipped: Error: span down'))).toBe(
      true,
    );
  });
});
