// What a new user meets first: messages that say what is wrong, errors that
// serialise, input types that take `undefined`, and a base address from the
// environment.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AnimalStoreError,
  type ApiError,
  BadRequestError,
  ConnectionError,
  MemoryQuotaStore,
  PetsClient,
  RateLimitError,
  RequestValidationError,
} from '../src/index.js';
import {
  API_KEY,
  apiError,
  BASE_URL,
  clientWith,
  json,
  rex,
  scriptedFetch,
} from './helpers/scripted-fetch.js';

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('messages a new user can act on', () => {
  it('says a missing categoryId or name is required, and a wrong one what it must be', async () => {
    const client = clientWith(scriptedFetch().fetch);
    const missing = (await rejection(
      client.createPet({ name: 'Rex' } as unknown as { name: string; categoryId: number }),
    )) as RequestValidationError;
    expect(missing).toBeInstanceOf(RequestValidationError);
    expect(missing.issues).toEqual([
      expect.objectContaining({ path: ['categoryId'], message: 'categoryId is required' }),
    ]);
    const wrong = (await rejection(
      client.createPet({ name: 'Rex', categoryId: 1.5 }),
    )) as RequestValidationError;
    expect(wrong.issues[0]?.message).toBe('categoryId must be a safe integer');
    const noName = (await rejection(
      client.createPet({ categoryId: 1 } as unknown as { name: string; categoryId: number }),
    )) as RequestValidationError;
    expect(noName.issues[0]?.message).toBe('name is required');
  });

  it('names petId in the issues of getPet', async () => {
    const client = clientWith(scriptedFetch().fetch);
    const error = (await rejection(
      client.getPet('7' as unknown as number),
    )) as RequestValidationError;
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(error.issues[0]?.path).toEqual(['petId']);
  });

  it('says a 400 to a GET is about its parameters, and to a POST about its body', async () => {
    const stub = scriptedFetch(apiError(400), apiError(400));
    const client = clientWith(stub.fetch);
    const get = (await rejection(client.listPets())) as BadRequestError;
    expect(get).toBeInstanceOf(BadRequestError);
    expect(get.message).toContain("Fix the request's parameters");
    expect(get.message).not.toContain('body');
    const post = (await rejection(
      client.createPet({ name: 'Rex', categoryId: 3 }),
    )) as BadRequestError;
    expect(post.message).toContain("Fix the request's body");
  });

  it('shows that an option given as a string was a string', () => {
    for (const [option, text] of [
      [{ maxRetries: '3' }, 'got the string "3"'],
      [{ timeoutMs: '100' }, 'got the string "100"'],
      [{ maxResponseBytes: {} }, 'got a value of type object'],
      [{ maxRetries: -1 }, 'got -1'],
    ] as const) {
      expect(() => clientWith(scriptedFetch().fetch, option as never)).toThrow(text);
    }
  });
});

describe('errors as data', () => {
  it('serialise with their message, fields and headers', async () => {
    const stub = scriptedFetch(
      json({ code: 'not_found', message: 'no animal has id 9', status: 404 }, 404, {
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '59',
        'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 30),
        'x-echo': `Bearer ${API_KEY}`,
      }),
    );
    const error = (await rejection(clientWith(stub.fetch).getPet(9))) as ApiError;
    const data = JSON.parse(JSON.stringify(error)) as Record<string, unknown>;
    expect(data).toMatchObject({
      name: 'NotFoundError',
      message: error.message,
      status: 404,
      code: 'not_found',
      body: { code: 'not_found', message: 'no animal has id 9', status: 404 },
      headers: {
        'content-type': 'application/json',
        'x-ratelimit-limit': '60',
        'x-echo': 'Bearer [redacted]',
      },
      rateLimit: { limit: 60, remaining: 59 },
    });
    expect(JSON.stringify(error)).not.toContain(API_KEY);
  });

  it('serialise whatever their cause, never throwing', () => {
    const causes = [
      Object.create(null),
      {
        toString: () => {
          throw new Error('no');
        },
      },
      new TypeError('fetch failed'),
      'text',
      { code: 'ECONNRESET' },
    ];
    const shown = causes.map(
      (cause) => JSON.parse(JSON.stringify(new AnimalStoreError('boom', { cause }))).cause,
    );
    expect(shown).toEqual([
      '[object Object]',
      '[object Object]',
      'TypeError: fetch failed',
      'text',
      '[object Object]',
    ]);
  });

  it('type body as the spec Error, with the text of any other body in rawBody', async () => {
    const html = '<html><body>Bad gateway</body></html>';
    const stub = scriptedFetch(
      new Response(html, { status: 502, headers: { 'content-type': 'text/html' } }),
      json({ error: 'other shape' }, 500),
    );
    const client = clientWith(stub.fetch, { maxRetries: 0 });
    const proxy = (await rejection(client.listPets())) as ApiError;
    expect(proxy.body).toBeUndefined();
    expect(proxy.rawBody).toBe(html);
    expect(proxy.code).toBe('http_502');
    const other = (await rejection(client.listPets())) as ApiError;
    expect(other.body).toBeUndefined();
    expect(other.rawBody).toBe('{"error":"other shape"}');
    // The spec's Error: typed, unknown fields dropped.
    const typed = (await rejection(
      clientWith(
        scriptedFetch(json({ code: 'bad', message: 'm', status: 400, extra: 1 }, 400)).fetch,
      ).listPets(),
    )) as ApiError;
    expect(typed.body).toEqual({ code: 'bad', message: 'm', status: 400 });
    const code: string | undefined = typed.body?.code;
    expect(code).toBe('bad');
  });

  it('give a RateLimitError for a call never sent: code rate_limit_hold, no headers, no body, the last values seen', async () => {
    const reset = Math.ceil(Date.now() / 1000) + 120;
    const stub = scriptedFetch(
      json([rex], 200, {
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(reset),
      }),
    );
    const client = clientWith(stub.fetch, { maxRetryDelayMs: 1000 });
    await client.listPets();
    const error = (await rejection(client.listPets())) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.code).toBe('rate_limit_hold');
    expect(error.status).toBe(429);
    expect([...error.headers]).toEqual([]);
    expect(error.body).toBeUndefined();
    expect(error.rawBody).toBeUndefined();
    expect(error.rateLimit).toMatchObject({ limit: 60, remaining: 0 });
    expect(error.retryAfterMs).toBeGreaterThan(100_000);
    expect(error.message).toContain('was not sent');
    expect(stub.received).toHaveLength(1);
  });

  it('leave retryAfterMs and rateLimit out of an error that has none, rather than undefined', async () => {
    const stub = scriptedFetch(json([rex]), json([rex]));
    const client = clientWith(stub.fetch, { maxRetryDelayMs: 0 });
    const [first, second] = await Promise.allSettled([client.listPets(), client.listPets()]);
    expect(first.status).toBe('fulfilled');
    const error = (second as PromiseRejectedResult).reason as RateLimitError;
    expect(error.code).toBe('rate_limit_hold');
    expect(Object.hasOwn(error, 'retryAfterMs')).toBe(false);
    expect(Object.hasOwn(error, 'rateLimit')).toBe(false);
  });
});

describe('the address of the service', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('comes from ANIMAL_STORE_BASE_URL when neither baseUrl nor environment is given', async () => {
    vi.stubEnv('ANIMAL_STORE_BASE_URL', BASE_URL);
    const stub = scriptedFetch(json([rex]));
    const client = new PetsClient({
      apiKey: API_KEY,
      fetch: stub.fetch,
      logLevel: 'off',
      quotaStore: new MemoryQuotaStore(),
    });
    await client.listPets();
    expect(stub.received[0]?.request.url).toBe(`${BASE_URL}/pets`);
    // Explicit options win over the environment variable.
    const staging = new PetsClient({ apiKey: API_KEY, environment: 'staging', fetch: stub.fetch });
    expect(String(staging)).toContain('staging.api.animal-store.example');
    for (const mark of ['?', '#']) {
      vi.stubEnv('ANIMAL_STORE_BASE_URL', `${BASE_URL}${mark}`);
      expect(() => new PetsClient({ apiKey: API_KEY })).toThrow(
        'must not carry a query or a fragment',
      );
      expect(() => new PetsClient({ apiKey: API_KEY, baseUrl: `${BASE_URL}${mark}` })).toThrow(
        'Invalid baseUrl',
      );
    }
    vi.stubEnv('ANIMAL_STORE_BASE_URL', 'ftp://x/v1');
    expect(() => new PetsClient({ apiKey: API_KEY })).toThrow(
      'Invalid ANIMAL_STORE_BASE_URL: the protocol must be https: or http:',
    );
  });

  it('says that the built-in hosts are placeholders when they cannot be reached', async () => {
    const failure = new TypeError('fetch failed', {
      cause: Object.assign(new Error('getaddrinfo EAI_AGAIN api.animal-store.example'), {
        code: 'EAI_AGAIN',
      }),
    });
    const client = new PetsClient({
      apiKey: API_KEY,
      fetch: scriptedFetch(failure, failure, failure).fetch,
      logLevel: 'off',
      maxRetries: 0,
      quotaStore: new MemoryQuotaStore(),
    });
    const retried: unknown[] = [];
    const patient = new PetsClient({
      apiKey: API_KEY,
      fetch: scriptedFetch(failure, failure, failure).fetch,
      logLevel: 'off',
      onRetry: (info) => retried.push(info),
      quotaStore: new MemoryQuotaStore(),
    });
    const error = (await rejection(patient.listPets())) as ConnectionError;
    // Nothing answers at a placeholder: the call fails at once, not after retries.
    expect(retried).toEqual([]);
    expect(await rejection(client.listPets())).toBeInstanceOf(ConnectionError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain('EAI_AGAIN');
    expect(error.message).not.toContain('..');
    expect(error.message).toContain(
      'pass baseUrl with the address your account was given, or set ANIMAL_STORE_BASE_URL and pass neither baseUrl nor environment.',
    );
    expect(error).toBeInstanceOf(AnimalStoreError);
  });
});

describe('documentation in the editor', () => {
  it('shows the range and default of limit, and what undefined means, when hovering the built types', () => {
    const file = fileURLToPath(new URL('../dist/hover-check.ts', import.meta.url));
    const source = [
      `import type { ListPetsParams, NewPet } from './index.js';`,
      'export const query: ListPetsParams = { limit: 5, status: undefined };',
      `export const pet: NewPet = { name: 'Rex', categoryId: 3, status: undefined };`,
    ].join('\n');
    const options: ts.CompilerOptions = {
      strict: true,
      exactOptionalPropertyTypes: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    };
    const service = ts.createLanguageService({
      getScriptFileNames: () => [file],
      getScriptVersion: () => '1',
      getScriptSnapshot: (name) =>
        ts.ScriptSnapshot.fromString(name === file ? source : (ts.sys.readFile(name) ?? '')),
      getCurrentDirectory: () => dirname(file),
      getCompilationSettings: () => options,
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: (name) => name === file || ts.sys.fileExists(name),
      readFile: (name) => (name === file ? source : ts.sys.readFile(name)),
    });
    const hover = (word: string, from = 0) => {
      const info = service.getQuickInfoAtPosition(file, source.indexOf(word, from) + 1);
      return [
        ts.displayPartsToString(info?.displayParts),
        ts.displayPartsToString(info?.documentation),
        ...(info?.tags ?? []).map((tag) => ts.displayPartsToString(tag.text)),
      ].join('\n');
    };
    expect(service.getSemanticDiagnostics(file)).toEqual([]);
    const limit = hover('limit');
    expect(limit).toContain('limit?: number | undefined');
    expect(limit).toContain('an integer from 1 to 100; 20 when omitted');
    expect(hover('categoryId')).toContain('Identifier of the category');
    expect(hover('status', source.indexOf('NewPet ='))).toContain(
      'status?: "available" | "pending" | "sold" | undefined',
    );
  });
});
