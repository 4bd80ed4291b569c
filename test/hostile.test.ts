import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Redactor } from '../src/errors.js';
import {
  AnimalStoreError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  MemoryQuotaStore,
  PetsClient,
  RateLimitError,
  RequestValidationError,
  ResponseValidationError,
  ServerError,
} from '../src/index.js';

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

// What hostile or broken servers and callers try, each point of the SDK's
// promise as its own test; the fault matrix runs the wire-level ones.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  servers.length = 0;
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('a short key', () => {
  it('is redacted where it stands as a token, and nothing else is touched', async () => {
    const body = JSON.stringify({ code: 'a', message: 'key a is not valid', status: 401 });
    const stub = scriptedFetch(
      new Response(body, {
        status: 401,
        headers: { 'content-type': 'application/json', 'x-echo': 'Bearer a' },
      }),
    );
    const error = (await clientWith(stub.fetch, { apiKey: 'a', maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e)) as AuthenticationError;
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.headers.get('content-type')).toBe('application/json');
    expect(error.headers.get('x-echo')).toBe('Bearer [redacted]');
    expect(error.body).toEqual({
      code: '[redacted]',
      message: 'key [redacted] is not valid',
      status: 401,
    });
    expect(error.message).toContain('is not valid');
  });
});

describe('redaction of an echoed key: in causes and escaped', () => {
  const KEY = 'sk_secret_key_123';

  it('keeps the key out of the cause of a non-JSON 2xx', async () => {
    const stub = scriptedFetch(new Response(KEY, { status: 200 }));
    const error = await clientWith(stub.fetch, { apiKey: KEY })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(inspect(error, { depth: 20 })).not.toContain(KEY);
  });

  it('keeps an escaped key out of the message about a body of another shape', async () => {
    const escaped = `{"detail":"\\u0073${KEY.slice(1)}"}`;
    const stub = scriptedFetch(
      new Response(escaped, {
        status: 404,
        headers: { 'content-type': 'application/json' },
      }),
    );
    const error = (await clientWith(stub.fetch, { apiKey: KEY })
      .getPet(1)
      .catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('[redacted]');
    expect(error.message).not.toContain(KEY.slice(1));
  });

  it.each([
    ['json', 'content-type', 'application/json'],
    ['x', 'x-ratelimit-limit', '60'],
  ])('with the key %j leaves %s alone', async (key, name, value) => {
    const stub = scriptedFetch(
      new Response('{"code":"c","message":"m","status":404}', {
        status: 404,
        headers: { 'content-type': 'application/json', 'x-ratelimit-limit': '60' },
      }),
    );
    const error = (await clientWith(stub.fetch, { apiKey: key })
      .getPet(1)
      .catch((e: unknown) => e)) as ApiError;
    expect(error.headers.get(name)).toBe(value);
  });
});

describe('the key echoed encoded (percent, JSON, HTML, base64), or as a name in the input', () => {
  const KEY = 'sk_live_SECRET/KEY+1234567890==abc';
  const encoded = encodeURIComponent(KEY);
  const lower = encoded.replace(/%[\dA-F]{2}/g, (hex) => hex.toLowerCase());
  const partly = KEY.replace(/[+=]/g, encodeURIComponent);
  const escaped = [...KEY]
    .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('');
  const shown = (error: unknown) => `${inspect(error, { depth: 20 })}${JSON.stringify(error)}`;
  // Basic credentials and tokens carry it in base64, from any offset of their run; HTML in references.
  const basic = Buffer.from(`user:${KEY}`).toString('base64');
  const urlSafe = Buffer.from(`x${KEY}`).toString('base64url');
  const references = [...KEY]
    .map((c, i) => `&#${i % 2 ? 'x' : ''}${c.charCodeAt(0).toString(i % 2 ? 16 : 10)};`)
    .join('');
  // As an HTML encoder that names what it can: `&lowbar;`, `&sol;`, `&plus;`, `&equals;`.
  const named = KEY.replace(/_/g, '&lowbar;')
    .replace(/\//g, '&sol;')
    .replace(/\+/g, '&plus;')
    .replace(/=/g, '&equals;');
  // What a dump of bytes or a debug page may show: hex (bare, `\x`), percent-encoding twice, `\u{}`,
  // UTF-16 read as single bytes, zero-width characters between, base64 wrapped every 16.
  const bytes = [...Buffer.from(KEY)].map((byte) => byte.toString(16).padStart(2, '0'));
  const dumped = [
    bytes.join('').toUpperCase(),
    bytes.map((byte) => `\\x${byte}`).join(''),
    bytes.map((byte) => `%25${byte}`).join(''),
    [...KEY].map((c) => `\\u{${c.charCodeAt(0).toString(16)}}`).join(''),
    Buffer.from(KEY, 'utf16le').toString('latin1'),
    [...KEY].join('\u200b'),
    // Others a terminal shows as nothing: a direction mark, a soft hyphen, a tag, DEL, a control.
    [...KEY].join('\u200e'),
    [...KEY].join('\u00ad'),
    [...KEY].join('\u{e0020}'),
    [...KEY].join('\u007f'),
    [...KEY].join('\u0001'),
    // Spaces and separators of every kind, and what a byte no decoder reads becomes.
    [...KEY].join('\u00a0'),
    [...KEY].join('\u2028'),
    [...KEY].join('\u3000'),
    [...KEY].join('\ufffd'),
    // Split: a header sent twice (joined with ", "), a line wrapped, a space between each.
    `${KEY.slice(0, 10)}, ${KEY.slice(10)}`,
    `${KEY.slice(0, 16)}\r\n${KEY.slice(16)}`,
    [...KEY].join(' '),
    Buffer.from(`user:${KEY}`).toString('base64').replace(/.{16}/g, '$&\r\n'),
    inspect(Buffer.from(KEY)),
    JSON.stringify(Buffer.from(KEY)),
  ];

  it.each(dumped)('keeps it out of the error when a text body holds it as %j', async (form) => {
    const stub = scriptedFetch(new Response(`debug: ${form}`, { status: 500 }));
    const error = await clientWith(stub.fetch, { apiKey: KEY, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    const { rawBody, message } = error as ApiError;
    expect(rawBody).toContain('[redacted]');
    for (const text of [rawBody, message]) expect(text).not.toContain(form);
  });

  // Half the key or more, as is, in any case: what is left shows less than half of it.
  const half = Math.ceil(KEY.length / 2);
  const plain = (text: string) => text.normalize('NFKD').replace(/\p{M}/gu, '');
  const showsHalf = (text: string) =>
    [...KEY].some(
      (_, at) =>
        at + half <= KEY.length &&
        text.toLowerCase().includes(KEY.slice(at, at + half).toLowerCase()),
    );
  it.each([
    ['all but its last character', KEY.slice(0, -1)],
    ['in capitals, all but its first character', KEY.slice(1).toUpperCase()],
    ['around a tag', `${KEY.slice(0, 15)}<b></b>${KEY.slice(15)}`],
    ['around a look-alike', KEY.replace('K', '\uff2b')],
    ['around a no-break space', `${KEY.slice(0, 20)}\u00a0${KEY.slice(20)}`],
    ['with a combining mark after each character', [...KEY].join('\u0301')],
  ])('leaves less than half of it in the error when a body holds it %s', async (_, form) => {
    const stub = scriptedFetch(new Response(`debug: ${form}`, { status: 500 }));
    const error = await clientWith(stub.fetch, { apiKey: KEY, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    const { rawBody, message } = error as ApiError;
    expect(showsHalf(plain(form))).toBe(true);
    for (const text of [rawBody ?? '', message, inspect(error)]) {
      expect(text).toContain('[redacted]');
      expect(showsHalf(plain(text))).toBe(false);
    }
  });

  it('leaves less than half of it in headers that split it in two', async () => {
    const at = half - 1;
    const stub = scriptedFetch(apiError(500, { 'x-a': KEY.slice(0, at), 'x-b': KEY.slice(at) }));
    const error = (await clientWith(stub.fetch, { apiKey: KEY, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e)) as ApiError;
    expect(error.headers.get('x-b')).toBe('[redacted]');
    expect(`${error.headers.get('x-a')}${error.headers.get('x-b')}`).not.toContain(KEY);
  });

  it.each([
    [
      'a WWW-Authenticate header in base64',
      () => apiError(401, { 'www-authenticate': `Basic ${basic}` }),
    ],
    ['a text body in URL-safe base64', () => new Response(`token=${urlSafe}`, { status: 401 })],
    [
      'an HTML body of character references',
      () => new Response(`<p>${references}</p>`, { status: 401 }),
    ],
    [
      'an HTML body of named character references',
      () => new Response(`<p>${named}</p>`, { status: 401 }),
    ],
    [
      'a redirect Location',
      () =>
        new Response(null, {
          status: 302,
          headers: { location: `https://login.example/?api_key=${encoded}` },
        }),
    ],
    [
      'a JSON error body',
      () => json({ code: 'unauthorized', message: `invalid key ${encoded}`, status: 401 }, 401),
    ],
    [
      'a text body in lower-case hex',
      () => new Response(`invalid api_key=${lower}`, { status: 401 }),
    ],
    ['a reason phrase', () => new Response('', { status: 503, statusText: `Bad key ${encoded}` })],
    // As Python's quote() spells it: '/' kept, '+' and '=' encoded.
    ['a text body partly encoded', () => new Response(`bad ${partly}`, { status: 401 })],
    ['a header, every character escaped', () => apiError(401, { 'x-echo': escaped })],
  ])('keeps it out of the error when %s holds it', async (_, answer) => {
    const stub = scriptedFetch(answer());
    const error = await clientWith(stub.fetch, { apiKey: KEY, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(shown(error)).toContain('[redacted]');
    const base64 = [basic.slice(8, -8), urlSafe.slice(4, -4)];
    for (const form of [
      KEY,
      encoded,
      lower,
      partly,
      escaped,
      KEY.toLowerCase(),
      references,
      named,
      ...base64,
    ]) {
      expect(shown(error)).not.toContain(form);
    }
  });

  it('keeps it out of the headers a hook, withResponse and an error are given, in a header name', async () => {
    const name = `x-echo-${lower.toLowerCase()}`;
    const stub = scriptedFetch(
      json([rex], 200, { [name]: '1', 'x-kept': '1' }),
      apiError(401, { [name]: '1' }),
    );
    const seen: string[] = [];
    const client = clientWith(stub.fetch, {
      apiKey: KEY,
      hooks: { afterResponse: ({ headers }) => seen.push(...headers.keys()) },
    });
    const { response } = await client.withResponse.listPets();
    expect([...response.headers.keys()]).toContain('x-kept');
    expect([...response.headers.keys(), ...seen].join(' ')).not.toContain(name);
    const error = (await client.listPets().catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect([...error.headers.keys()].join(' ')).not.toContain(name);
  });

  it('keeps it out of the issues of an input that holds it as a name', async () => {
    const stub = scriptedFetch(json([rex]));
    const client = clientWith(stub.fetch, { apiKey: KEY });
    const error = await client.listPets({ [KEY]: 1 } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues[0]?.message).toContain('[redacted]');
    expect(shown(error)).not.toContain(KEY);
    expect(stub.received).toHaveLength(0);
  });
});

describe('answers that contradict the request', () => {
  it('fail validation when getPet answers another animal', async () => {
    const stub = scriptedFetch(json({ ...rex, id: 6 }));
    await expect(clientWith(stub.fetch).getPet(5)).rejects.toThrow(/id is 6, but animal 5/);
  });

  it('fail validation when createPet answers another category or status', async () => {
    const stub = scriptedFetch(
      json({ ...rex, categoryId: 9 }, 201),
      json({ ...rex, status: 'sold' }, 201),
    );
    const client = clientWith(stub.fetch);
    await expect(client.createPet({ name: 'Rex', categoryId: 3 })).rejects.toThrow(
      /categoryId is 9/,
    );
    await expect(
      client.createPet({ name: 'Rex', categoryId: 3, status: 'available' }),
    ).rejects.toThrow(/status is "sold"/);
  });

  it('fail validation when a filtered list holds another status', async () => {
    const stub = scriptedFetch(json([{ ...rex, status: 'available' }]));
    const error = (await clientWith(stub.fetch)
      .listPets({ status: 'sold' })
      .catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues).toEqual([
      expect.objectContaining({ path: [0, 'status'], code: 'invalid_value' }),
    ]);
    expect(error.message).toMatch(/contradicts the request: 0\.status is "available"/);
  });

  it('fail validation when a list is longer than the limit asked for (20 by default)', async () => {
    const pets = (n: number) => Array.from({ length: n }, (_, i) => ({ ...rex, id: i + 1 }));
    const stub = scriptedFetch(json(pets(21)), json(pets(6)), json(pets(5)));
    const client = clientWith(stub.fetch);
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toMatch(/holds 21 pets, more than the default limit of 20\b/);
    await expect(client.listPets({ limit: 5 })).rejects.toThrow(/more than the limit of 5 asked/);
    await expect(client.listPets({ limit: 5 })).resolves.toHaveLength(5);
  });
});

describe('bounded reading', () => {
  it('stops at maxResponseBytes of decoded body, releases the stream, and fails typed', async () => {
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1024;
        controller.enqueue(new Uint8Array(1024).fill(0x20));
      },
      cancel() {
        cancelled = true;
      },
    });
    const stub = scriptedFetch(() => new Response(endless, { status: 200 }));
    const error = (await clientWith(stub.fetch, { maxResponseBytes: 10_000 })
      .listPets()
      .catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toMatch(/larger than maxResponseBytes \(10000 bytes\)/);
    expect(error.issues[0]?.code).toBe('too_big');
    // The stream reads a chunk or two ahead; an endless body would be pulled forever.
    expect(pulled).toBeLessThanOrEqual(10_000 + 2 * 1024);
    expect(cancelled).toBe(true);
  });

  it('keeps the class of an error status whose body is too large', async () => {
    const stub = scriptedFetch(new Response('x'.repeat(5000), { status: 503 }));
    const error = await clientWith(stub.fetch, { maxResponseBytes: 100, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
  });

  it('refuses a maxResponseBytes that is not a whole number of bytes', () => {
    expect(() => clientWith(scriptedFetch().fetch, { maxResponseBytes: 0 })).toThrow(
      /Invalid maxResponseBytes: expected a whole number of bytes/,
    );
  });

  it('times out while the body is still being read', async () => {
    const slow = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('['));
      },
    });
    const stub = scriptedFetch(new Response(slow, { status: 200 }));
    const error = await clientWith(stub.fetch, { timeoutMs: 50, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
  });
});

describe('arbitrary bodies (properties)', () => {
  it('never crash and never buffer past the cap, whatever the sizes and chunks', async () => {
    const cap = 4096;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 12 }),
        fc.constantFrom(200, 201, 404, 503),
        fc.boolean(),
        async (chunks, status, json) => {
          let pulled = 0;
          let index = 0;
          const body = new ReadableStream<Uint8Array>({
            pull(controller) {
              const size = chunks[index++];
              if (size === undefined) return controller.close();
              pulled += size;
              controller.enqueue(new Uint8Array(size).fill(json ? 0x20 : 0x7b));
            },
          });
          const stub = scriptedFetch(() => new Response(body, { status }));
          const client = clientWith(stub.fetch, { maxResponseBytes: cap, maxRetries: 0 });
          const result = await client.getPet(1).catch((e: unknown) => e);
          expect(result).toBeInstanceOf(AnimalStoreError);
          expect(pulled).toBeLessThanOrEqual(cap + 2 * 3000);
        },
      ),
      { numRuns: 200, seed: 1416 },
    );
  });

  it('never crash on any encoding of any bytes from a real server', async () => {
    let next: { encoding: string; bytes: Buffer; status: number } = {
      encoding: 'identity',
      bytes: Buffer.alloc(0),
      status: 200,
    };
    const base = await listen((_, res) => {
      res.writeHead(next.status, {
        'content-type': 'application/json',
        'content-encoding': next.encoding,
      });
      res.end(next.bytes);
    });
    const client = new PetsClient({
      apiKey: 'sk_encoding_test',
      baseUrl: `${base}/v1`,
      maxResponseBytes: 4096,
      maxRetries: 0,
      logLevel: 'off',
      deprecationWarnings: false,
    });
    const { gzipSync, deflateSync, brotliCompressSync } = await import('node:zlib');
    const encoders: Record<string, (b: Buffer) => Buffer> = {
      identity: (b) => b,
      gzip: (b) => gzipSync(b),
      deflate: (b) => deflateSync(b),
      br: (b) => brotliCompressSync(b),
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('identity', 'gzip', 'deflate', 'br'),
        fc.uint8Array({ maxLength: 2000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.boolean(),
        fc.constantFrom(200, 401, 503),
        async (encoding, seed, repeat, corrupt, status) => {
          let bytes = encoders[encoding]!(Buffer.concat(Array(repeat).fill(Buffer.from(seed))));
          if (corrupt) bytes = bytes.subarray(0, Math.floor(bytes.length / 2));
          next = { encoding, bytes, status };
          // No bytes of these make a pet: every call fails, and only ever with the SDK's own error.
          const result = await client.getPet(1).catch((e: unknown) => e);
          expect(result).toBeInstanceOf(AnimalStoreError);
        },
      ),
      { numRuns: 80, seed: 1417 },
    );
  });
});

describe('redirects', () => {
  it('followed by a custom fetch fail the call, never retried, the answer unread', async () => {
    const seen: string[] = [];
    const base = await listen((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/v1/elsewhere') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(req.method === 'POST' ? rex : [rex]));
        return;
      }
      res.writeHead(307, { location: '/v1/elsewhere' });
      res.end();
    });
    const client = new PetsClient({
      apiKey: 'sk_redirect_test',
      baseUrl: `${base}/v1`,
      logLevel: 'off',
      quotaStore: new MemoryQuotaStore(),
      fetch: (url, init) => fetch(url, { ...init, redirect: 'follow' }),
    });
    for (const call of [
      () => client.listPets(),
      () => client.createPet({ name: 'Rex', categoryId: 3 }),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toContain('followed a redirect');
    }
    expect(seen).toEqual([
      'GET /v1/pets',
      'GET /v1/elsewhere',
      'POST /v1/pets',
      'POST /v1/elsewhere',
    ]);
  });

  it('are never followed, to another origin least of all', async () => {
    let elsewhere = 0;
    const other = await listen((_, res) => {
      elsewhere++;
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify(rex));
    });
    let here = 0;
    const base = await listen((_, res) => {
      here++;
      res.writeHead(307, { location: `${other}/v1/pets` });
      res.end();
    });
    const client = new PetsClient({
      apiKey: 'sk_redirect_test',
      baseUrl: `${base}/v1`,
      logLevel: 'off',
    });
    const error = (await client
      .createPet({ name: 'Rex', categoryId: 1 })
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(ServerError);
    expect(error.status).toBe(307);
    expect(error.message).toMatch(
      /redirect \(HTTP 307\) to ".*\/v1\/pets", which the SDK does not follow/,
    );
    expect([here, elsewhere]).toEqual([1, 0]);
  });

  it('never reach a second origin, whatever the status and Location (property)', async () => {
    let elsewhere = 0;
    const other = await listen((_, res) => {
      elsewhere++;
      res.end('{}');
    });
    let here = 0;
    let next = { status: 301, location: '' };
    const base = await listen((_, res) => {
      here++;
      res.writeHead(next.status, { location: next.location });
      res.end();
    });
    const client = new PetsClient({
      apiKey: 'sk_redirect_test',
      baseUrl: `${base}/v1`,
      logLevel: 'off',
      deprecationWarnings: false,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(300, 301, 302, 303, 307, 308),
        fc.constantFrom(`${other}/v1/pets`, '/v1/pets', `${base}/v1/pets/1`, '//evil.invalid/x'),
        fc.constantFrom('listPets', 'createPet', 'getPet'),
        async (status, location, op) => {
          next = { status, location };
          here = 0;
          const call =
            op === 'listPets'
              ? client.listPets()
              : op === 'createPet'
                ? client.createPet({ name: 'Rex', categoryId: 1 })
                : client.getPet(1);
          const error = await call.catch((e: unknown) => e);
          expect(error).toBeInstanceOf(ApiError);
          expect(error).not.toBeInstanceOf(ServerError);
          expect(here).toBe(1);
          expect(elsewhere).toBe(0);
        },
      ),
      { numRuns: 40, seed: 1414 },
    );
  });

  it('come back from a browser as an opaque redirect, and give the same error', async () => {
    // What fetch gives a page for `redirect: 'manual'`: status 0, no headers, no body.
    const opaque = {
      type: 'opaqueredirect',
      status: 0,
      ok: false,
      statusText: '',
      headers: new Headers(),
      body: null,
      text: async () => '',
    } as unknown as Response;
    const error = (await clientWith(scriptedFetch(() => opaque).fetch)
      .listPets()
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(ServerError);
    expect(error.message).toMatch(/was answered with a redirect, which the SDK does not follow/);
  });
});

describe('smaller ones', () => {
  it('refuses to read a deflate-encoded body, which it did not ask for', async () => {
    const stub = scriptedFetch(
      () => new Response('whatever', { status: 200, headers: { 'content-encoding': 'deflate' } }),
    );
    const error = (await clientWith(stub.fetch)
      .listPets()
      .catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toMatch(/deflate-encoded/);
    expect(stub.received[0]?.request.headers.get('accept-encoding')).toBe('gzip, br');
  });

  it('refuses a logger without the four methods at construction, naming every one missing', () => {
    const { fetch } = scriptedFetch();
    expect(() => clientWith(fetch, { logger: {} as never })).toThrow(
      /Invalid logger: .*; error, warn, info and debug are missing\.$/,
    );
    const partial = { warn: () => undefined, error: () => undefined };
    expect(() => clientWith(fetch, { logger: partial as never })).toThrow(
      /; info and debug are missing\.$/,
    );
    expect(() => clientWith(fetch, { logger: { ...partial, info: () => 0 } as never })).toThrow(
      /; debug is missing\.$/,
    );
  });

  it('reports a custom fetch resolving something else than a Response as a ConnectionError', async () => {
    const stub = scriptedFetch(() => ({}) as Response);
    const error = await clientWith(stub.fetch, { maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
  });

  it('turns a per-call option getter that throws into an AnimalStoreError', async () => {
    const options = Object.defineProperty({}, 'timeoutMs', {
      get() {
        throw new Error('z');
      },
    });
    const error = await clientWith(scriptedFetch().thenAlways(json([rex])).fetch)
      .listPets({}, options)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
  });

  it('share one signal among many concurrent calls without a MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const stub = scriptedFetch().thenAlways(json([rex]));
      const client = clientWith(stub.fetch);
      const { signal } = new AbortController();
      await Promise.all(Array.from({ length: 30 }, () => client.listPets({}, { signal })));
      await sleep(10);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('reports a custom fetch resolving Response.error() as a ConnectionError', async () => {
    const stub = scriptedFetch(Response.error(), Response.error(), Response.error());
    const error = await clientWith(stub.fetch, { maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
  });

  it('reports a custom fetch rejecting what is no Error as a ConnectionError that says what', async () => {
    for (const thrown of [null, undefined, 'proxy down', 42]) {
      const fetch = () => Promise.reject(thrown);
      const error = await clientWith(fetch, { maxRetries: 0 })
        .listPets()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toContain(`fetch rejected with ${thrown}`);
    }
    const echo = () => Promise.reject(`refused ${API_KEY}`);
    const error = await clientWith(echo, { maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(inspect(error, { depth: 5 })).toContain('fetch rejected with refused [redacted]');
    expect(inspect(error, { depth: 5 })).not.toContain(API_KEY);
  });

  it('rejects a call whose input has a getter that throws the key, sending nothing', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const params = Object.defineProperty({}, 'limit', {
      enumerable: true,
      get() {
        throw new Error(`boom ${API_KEY}`);
      },
    });
    const error = (await clientWith(stub.fetch)
      .listPets(params)
      .catch((e: unknown) => e)) as RequestValidationError;
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(error.message).toMatch(/reading it threw Error: boom \[redacted\]\.$/);
    expect(JSON.stringify(error.issues)).not.toContain(API_KEY);
    expect(stub.received).toHaveLength(0);
  });

  it('names the option of a call whose getter throws, sending nothing', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const headers = Object.defineProperty({}, 'x-trace', {
      enumerable: true,
      get() {
        throw new Error(`boom ${API_KEY}`);
      },
    });
    const error = await clientWith(stub.fetch)
      .listPets({}, { headers })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect((error as Error).message).toBe(
      'Invalid listPets option headers: reading it threw Error: boom [redacted].',
    );
    expect(inspect(error, { depth: 5 })).not.toContain(API_KEY);
    expect(stub.received).toHaveLength(0);
  });

  it('never reports a 2xx as a failure because of its headers (property)', async () => {
    vi.useRealTimers();
    const header = fc.oneof(
      fc.string(),
      fc.constantFrom(
        '-1',
        '1e400',
        '99999999999999999999',
        '0',
        '',
        'Thu, 01 Jan 1970 00:00:00 GMT',
      ),
      fc.integer().map(String),
    );
    await fc.assert(
      fc.asyncProperty(
        header,
        header,
        header,
        header,
        header,
        async (limit, left, reset, after, date) => {
          const headers = new Headers({ 'content-type': 'application/json' });
          const put = (name: string, value: string) => {
            try {
              headers.set(name, value);
            } catch {}
          };
          put('x-ratelimit-limit', limit);
          put('x-ratelimit-remaining', left);
          put('x-ratelimit-reset', reset);
          put('retry-after', after);
          put('date', date);
          const stub = scriptedFetch(
            new Response(JSON.stringify(rex), { status: 201, headers }),
            apiError(429, Object.fromEntries(headers)),
          );
          const client = clientWith(stub.fetch, { maxRetries: 0, maxRetryDelayMs: 10 });
          await expect(client.createPet({ name: 'Rex', categoryId: 3 })).resolves.toEqual(rex);
          // The next answer is a 429 with those headers, or the call is held past 10 ms: either
          // way it fails, and only ever with the SDK's own error.
          const next = await client.listPets().catch((e: unknown) => e);
          expect(next).toBeInstanceOf(AnimalStoreError);
        },
      ),
      { numRuns: 200, seed: 1415 },
    );
  });
});

describe('redaction in header names, hidden causes and short keys', () => {
  const KEY = 'sk_live_SECRET123456789';
  const shown = (error: unknown) =>
    [JSON.stringify(error), inspect(error, { depth: 20, showHidden: true }), String(error)].join(
      '\n',
    );

  it('finds a long key in a large body, and takes a client per key, in time that grows with them only', () => {
    const key = Array.from(
      { length: 800 },
      (_, i) => 'abcdefghijklmnopqrstuvwxyz0123456789'[(i * 7) % 36],
    ).join('');
    const started = performance.now();
    // A server that echoes half the key and a little more, again and again, up to a body's cap.
    const body = `${key.slice(0, 403)}!`.repeat(2600);
    const redacted = new Redactor(key).text(body);
    expect(redacted).toBe('[redacted]!'.repeat(2600));
    for (let i = 0; i < 20; i++) new Redactor(`${key.slice(i)}${i}`);
    // A body of what starts an HTML reference again and again.
    expect(new Redactor(key).text('&abcdefghijklmnop'.repeat(60_000))).not.toContain('[redacted]');
    // Linear: well under a second, or a few on a loaded machine; trying the key at each
    // character of the body took many.
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('drops a header whose name holds a key with capitals (names arrive lowercased)', async () => {
    const stub = scriptedFetch(
      new Response('{}', { status: 401, headers: { [`x-echo-${KEY}`]: '1', 'x-plain': 'ok' } }),
    );
    const error = await clientWith(stub.fetch, { apiKey: KEY, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(shown(error).toLowerCase()).not.toContain(KEY.toLowerCase());
    expect((error as AuthenticationError).headers.get('x-plain')).toBe('ok');
  });

  it('replaces a cause that carries the key anywhere, however it is hidden', async () => {
    const request = new Request('http://127.0.0.1:1/v1/pets', {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const nested: Record<string, unknown> = {};
    let at = nested;
    for (let i = 0; i < 8; i++) at = at.next = {};
    at.token = KEY;
    const causes: unknown[] = [
      Object.assign(new TypeError('fetch failed'), {
        request,
        config: { headers: { Authorization: `Bearer ${KEY}` } },
      }),
      new AggregateError([new Error(`bad ${KEY}`)], 'several'),
      Object.assign(new Error('deep'), { detail: nested }),
      Object.assign(new Error('listed'), { list: ['x', KEY] }),
      Object.assign(new Error('symbol'), { [Symbol('s')]: KEY }),
      Object.assign(new Error('inspect'), {
        [Symbol.for('nodejs.util.inspect.custom')]: () => KEY,
      }),
      { toString: () => KEY },
      Object.defineProperty(new Error('getter'), 'secret', {
        get() {
          throw new Error(KEY);
        },
        enumerable: true,
      }),
    ];
    for (const cause of causes) {
      const error = await clientWith(
        async () => {
          throw cause;
        },
        {
          apiKey: KEY,
          maxRetries: 0,
        },
      )
        .listPets()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(shown(error)).not.toContain(KEY);
    }
    // A clean cause is kept as it is.
    const clean = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    const error = (await clientWith(scriptedFetch(clean).fetch, { apiKey: KEY, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e)) as ConnectionError;
    expect(error.cause).toBe(clean);
  });

  it('redacts a short key that ends a sentence or follows =', async () => {
    const key = 'abc123';
    const stub = scriptedFetch(
      json(
        {
          code: 'bad_key',
          message: `Invalid key ${key}. Sent key=${key}, then ${key}`,
          status: 401,
        },
        401,
      ),
    );
    const error = (await clientWith(stub.fetch, { apiKey: key, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e)) as AuthenticationError;
    expect(error.body?.message).toBe(
      'Invalid key [redacted]. Sent key=[redacted], then [redacted]',
    );
    // Still left alone inside words, paths and base64 runs.
    expect(redactShort('abc123def /abc123/ xabc123 abc123.json')).toBe(
      'abc123def /abc123/ xabc123 abc123.json',
    );
  });

  it('takes out a run of half the key or more however it is spelt, and of a key over 256 characters', () => {
    const long = Array.from(
      { length: 300 },
      (_, i) => 'k7Xq2Zr9'[i % 8]! + 'abcdefghij'[i % 10],
    ).join('');
    const key = 'sk_live_0123456789abcdefghijklmn';
    const percent = (text: string) =>
      [...text].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    const unicode = (text: string) =>
      [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const hex = (text: string) => Buffer.from(text).toString('hex');
    for (const [secret, shown] of [
      [long, long.slice(0, 400)],
      [long, percent(long.slice(100, 420))],
      [key, percent(key.slice(0, 20))],
      [key, unicode(key.slice(12))],
      [key, `${key.slice(0, 10)}\u200b${unicode(key.slice(10, 24))}`],
      [key, hex(key.slice(8))],
      // In full width, as a terminal or a font for East Asian text shows it.
      [key, [...key].map((c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join('')],
    ] as const) {
      expect(new Redactor(secret).text(`<p>${shown}</p>`)).toBe('<p>[redacted]</p>');
    }
  });

  it('redacts a key holding a run of backslashes without trying every reading of the run', () => {
    const key = `sk_live_${'\\'.repeat(30)}Z`;
    const redactor = new Redactor(key);
    const started = performance.now();
    // All of the key but its last character: taken out, as any run of half the key or more.
    expect(redactor.text(`sk_live_${'\\'.repeat(60)}Y`)).toBe('[redacted]Y');
    expect(redactor.text(`sk_live_${'\\'.repeat(11)}Y`)).not.toContain('[redacted]');
    // Linear: microseconds; trying every reading of the run took seconds, doubling with each one.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(redactor.text(`x ${key} y`)).toBe('x [redacted] y');
  });

  it('redacts a key of digits that are hex too without trying every reading of them', () => {
    const key = '3'.repeat(24);
    const redactor = new Redactor(key);
    const started = performance.now();
    expect(redactor.text(`${'3'.repeat(47)}x`.repeat(200))).toContain('[redacted]');
    expect(redactor.text(`${'3'.repeat(11)}x`.repeat(4000))).not.toContain('[redacted]');
    // Linear: milliseconds; a digit read either as itself or as half of a byte took seconds.
    expect(performance.now() - started).toBeLessThan(1000);
    // Its dump reads as the key's bytes, or as the key spaced out: either way, nothing is left.
    expect(redactor.text(`<Buffer ${'33 '.repeat(24)}>`)).toMatch(/^<Buffer (?:\[redacted\] ?)+>$/);
  });
});

describe('headers that cannot be read are as none: a 429 is still a 429, a 2xx still a success', () => {
  // 130,000 values in each X-RateLimit field: more than a stack holds as arguments.
  const many = Array(130_000).fill('5').join(',');
  const flood = {
    'x-ratelimit-limit': many,
    'x-ratelimit-remaining': many,
    'x-ratelimit-reset': many,
  };

  it('waits the Retry-After of a 429 whose other fields cannot be taken, then succeeds', async () => {
    const sentAt: number[] = [];
    const fetch = async () => {
      sentAt.push(Date.now());
      return sentAt.length === 1 ? apiError(429, { ...flood, 'retry-after': '1' }) : json([rex]);
    };
    await expect(clientWith(fetch).listPets()).resolves.toEqual([rex]);
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThanOrEqual(1000);
  });

  it('resolves a 201 whose rate-limit fields cannot be taken', async () => {
    const fetch = async () => json(rex, 201, flood);
    await expect(clientWith(fetch).createPet({ name: 'Rex', categoryId: 3 })).resolves.toEqual(rex);
  });

  it('cools the key down after a 429 whose headers throw when read', async () => {
    const broken = {
      get() {
        throw new Error('get');
      },
      forEach() {
        throw new Error('forEach');
      },
    };
    const sentAt: number[] = [];
    const fetch = async () => {
      sentAt.push(Date.now());
      return { status: 429, statusText: '', headers: broken, body: null, text: async () => '' };
    };
    const client = clientWith(fetch as never, { maxRetries: 0 });
    for (let i = 0; i < 2; i++) {
      expect(await client.listPets().catch((e: unknown) => e)).toBeInstanceOf(RateLimitError);
    }
    // The back-off of a 429 that says nothing (1 s, less up to half), not the pause after a
    // request without a response (100 ms).
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThanOrEqual(500);
  });

  it('resolves a 201 whose headers throw when asked for one by name', async () => {
    const text = JSON.stringify(rex);
    const headers = {
      get() {
        throw new Error('get');
      },
      forEach() {},
    };
    const fetch = async () => ({
      status: 201,
      statusText: '',
      headers,
      body: null,
      text: async () => text,
    });
    let sent = 0;
    const counting = async () => {
      sent++;
      return fetch();
    };
    await expect(
      clientWith(counting as never).createPet({ name: 'Rex', categoryId: 3 }),
    ).resolves.toEqual(rex);
    expect(sent).toBe(1);
  });

  it("keeps the key out of a fetch option's headers whose values are no text", async () => {
    const key = 'sk_live_0123456789abcdef';
    const said = new Map<string, unknown>([
      ['content-type', ['application/json']],
      ['x-echo', ['Bearer', key]],
      ['x-object', { key }],
    ]);
    const headers = {
      get: (name: string) => said.get(name) ?? null,
      forEach: (each: (value: unknown, name: string) => void) => said.forEach(each),
    };
    const body = JSON.stringify({ code: 'bad', message: 'bad', status: 400 });
    const fetch = async () => ({
      status: 400,
      statusText: '',
      headers,
      body: null,
      text: async () => body,
    });
    const error = (await clientWith(fetch as never, { apiKey: key, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.headers).toBeInstanceOf(Headers);
    expect(error.headers.get('x-echo')).toBe('Bearer,[redacted]');
    expect(inspect(error, { depth: 10 })).not.toContain(key);
    expect(JSON.stringify(error)).not.toContain(key);
  });

  it("reads a fetch option's headers that keep names as sent and match them case by case", async () => {
    let sent = 0;
    const said: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-RateLimit-Limit': '1',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 60),
    };
    const headers = {
      get: (name: string) => said[name] ?? null,
      forEach: (each: (value: string, name: string) => void) => {
        for (const [name, value] of Object.entries(said)) each(value, name);
      },
    };
    const fetch = async () => {
      sent++;
      const text = JSON.stringify([rex]);
      return { status: 200, statusText: 'OK', headers, body: null, text: async () => text };
    };
    const client = clientWith(fetch as never, { maxRetryDelayMs: 100 });
    await client.listPets();
    expect(client.rateLimit).toMatchObject({ limit: 1, remaining: 0 });
    const later = await Promise.allSettled(Array.from({ length: 5 }, () => client.listPets()));
    expect(later.every((r) => r.status === 'rejected')).toBe(true);
    expect(sent).toBe(1);
  });
});

describe('a 429 asking for more than a day', () => {
  it('is not retried, and says why', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '99999999999' })).thenAlways(
      json([rex]),
    );
    const error = (await clientWith(stub.fetch, { maxRetries: 2 })
      .listPets()
      .catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.message).toContain('asks to wait more than a day');
    expect(stub.received).toHaveLength(1);
  });
});

function redactShort(text: string): string {
  return new Redactor('abc123').text(text);
}

describe('custom fetches, hooks, stores and options that misbehave', () => {
  const KEY = 'sk_attack_0123456789abcdef';
  const { logger, lines } = recordingLogger(['error', 'warn']);
  afterEach(() => {
    lines.length = 0;
  });

  it('reports a response-like object it cannot read as a ConnectionError, and frees the budget', async () => {
    const store = new MemoryQuotaStore();
    const broken = {
      status: 200,
      statusText: 'OK',
      headers: { get: () => null },
      body: null,
      text: async () => '[]',
    };
    const odd = clientWith(async () => broken as unknown as Response, {
      quotaStore: store,
      maxRetries: 0,
    });
    await expect(odd.listPets()).rejects.toBeInstanceOf(ConnectionError);
    // Another client of the same key and store is not held by a lease left open.
    const stub = scriptedFetch().thenAlways(json([rex]));
    const healthy = clientWith(stub.fetch, { quotaStore: store, maxRetryDelayMs: 1_000 });
    expect(await healthy.listPets()).toEqual([rex]);
  });

  it('refuses a signal that is not an AbortSignal, sending nothing', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch);
    for (const signal of [{}, { aborted: false, throwIfAborted() {} }]) {
      const error = await client
        .listPets({}, { signal: signal as AbortSignal })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AnimalStoreError);
      expect((error as Error).message).toMatch(
        /Invalid listPets option signal: expected an AbortSignal/,
      );
    }
    expect(stub.received).toHaveLength(0);
    expect(await client.listPets()).toEqual([rex]);
  });

  it('gives afterResponse a copy of the headers: it cannot shorten a wait or lift a hold', async () => {
    vi.useFakeTimers();
    try {
      const stub = scriptedFetch(apiError(429, { 'retry-after': '3' })).thenAlways(json([rex]));
      const waits: number[] = [];
      let seen = 0;
      const client = clientWith(stub.fetch, {
        onRetry: ({ delayMs }) => waits.push(delayMs),
        hooks: {
          afterResponse: ({ headers }) => {
            seen++;
            headers.delete('retry-after');
            headers.set('x-ratelimit-remaining', '999');
          },
        },
      });
      const call = client.listPets();
      await vi.advanceTimersByTimeAsync(3_000);
      expect(await call).toEqual([rex]);
      // Called under fake timers too, where performance.now() starts at 0.
      expect(seen).toBe(2);
      expect(waits).toEqual([3_000]);
      expect(stub.received[1]!.at - stub.received[0]!.at).toBeGreaterThanOrEqual(3_000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('holds a custom fetch to maxResponseBytes whatever Content-Length it states', async () => {
    const big = 'x'.repeat(64 * 1024);
    const lying = async () =>
      new Response(`["${big}"]`, {
        headers: { 'content-length': '10', 'content-type': 'application/json' },
      });
    const error = await clientWith(lying, { maxResponseBytes: 1024, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toContain('larger than maxResponseBytes (1024 bytes)');
  });

  it('keeps the key out of the cause of a timeout', async () => {
    const fetch = async (
      _url: string,
      init: { signal: AbortSignal; headers: Record<string, string> },
    ) =>
      new Response(
        new ReadableStream({
          start(controller) {
            init.signal.addEventListener('abort', () =>
              controller.error(new Error(`stream aborted for ${init.headers.authorization}`)),
            );
          },
        }),
        { headers: { 'content-type': 'application/json' } },
      );
    const error = await clientWith(fetch, { apiKey: KEY, timeoutMs: 50, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(inspect(error, { depth: 10 })).not.toContain(KEY);
    expect(JSON.stringify(error)).not.toContain(KEY);
  });

  it.each([
    ['a Map of the headers', (h: Record<string, string>) => new Map(Object.entries(h))],
    ['a Set of them', (h: Record<string, string>) => new Set(Object.values(h))],
    ['a boxed string', (h: Record<string, string>) => new String(h.authorization)],
    ['a promise of it', (h: Record<string, string>) => Promise.resolve(h.authorization)],
    ['a function holding it', (h: Record<string, string>) => Object.assign(() => 0, { h })],
    ['a symbol of it', (h: Record<string, string>) => Symbol(h.authorization)],
    [
      'an error whose class is named after it',
      (h: Record<string, string>) => {
        const name = String(h.authorization);
        return new { [name]: class extends Error {} }[name]!();
      },
    ],
    [
      'an error whose message no own property holds',
      (h: Record<string, string>) => {
        const error = new DOMException(h.authorization);
        delete (error as { stack?: string }).stack;
        return error;
      },
    ],
  ])('keeps the key out of a failure whose cause is %s', async (_, cause) => {
    const fetch = async (_url: string, init: { headers: Record<string, string> }) => {
      throw new TypeError('fetch failed', { cause: cause(init.headers) });
    };
    const error = await clientWith(fetch, { apiKey: KEY, maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(KEY);
    expect((error as Error).message).toContain('fetch failed');
  });

  it('waits for a store to record a response no longer than timeoutMs', async () => {
    const memory = new MemoryQuotaStore();
    const store = {
      admit: memory.admit.bind(memory),
      release: memory.release.bind(memory),
      observe: () => new Promise<void>(() => undefined),
    };
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, {
      quotaStore: store,
      timeoutMs: 200,
      logger,
      logLevel: 'error',
    });
    const started = Date.now();
    expect(await client.listPets()).toEqual([rex]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(lines).toEqual([
      expect.stringContaining('the store did not record the response within timeoutMs (200 ms)'),
    ]);
  });

  it('turns any option getter that throws into an AnimalStoreError without the key', () => {
    const throwing = Object.defineProperty({ apiKey: KEY }, 'headers', {
      get: () => {
        throw new Error(`client headers ${KEY}`);
      },
    });
    for (const options of [
      throwing,
      {
        apiKey: KEY,
        headers: {
          get 'x-a'(): string {
            throw new Error(`nested ${KEY}`);
          },
        },
      },
      {
        apiKey: KEY,
        tracing: {
          get tracerProvider(): never {
            throw new Error(`tracer ${KEY}`);
          },
        },
      },
    ]) {
      const error = (() => {
        try {
          new PetsClient(options as ConstructorParameters<typeof PetsClient>[0]);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(AnimalStoreError);
      expect((error as Error).message).toMatch(
        /Invalid (?:PetsClient options: reading them|[\w.]+: reading it) threw/,
      );
      expect(inspect(error, { depth: 10 })).not.toContain(KEY);
    }
  });

  it('reads the tracer provider once, and survives a broken OpenTelemetry registry', async () => {
    let reads = 0;
    const provider = {
      getTracer: () => ({
        startSpan: () => ({ setAttribute() {}, addEvent() {}, setStatus() {}, end() {} }),
      }),
    };
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, {
      tracing: {
        get tracerProvider() {
          reads++;
          return provider;
        },
      },
    });
    await client.listPets();
    await client.listPets();
    expect(reads).toBe(1);
    const registry = Symbol.for('opentelemetry.js.api.1');
    Object.defineProperty(globalThis, registry, {
      configurable: true,
      get: () => ({
        get trace(): never {
          throw new Error('registry broken');
        },
      }),
    });
    try {
      const traced = clientWith(stub.fetch, { logger, logLevel: 'error' });
      expect(await traced.listPets()).toEqual([rex]);
      expect(lines).toEqual([
        expect.stringContaining('Tracing failed and was skipped: Error: registry broken'),
      ]);
    } finally {
      delete (globalThis as Record<symbol, unknown>)[registry];
    }
  });

  it('keeps the key out of errors quoted from a getter of the input or a failing store', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const input = {
      get name(): string {
        throw new Error(`getter ${KEY}`);
      },
      categoryId: 1,
    };
    const fromInput = await clientWith(stub.fetch, { apiKey: KEY })
      .createPet(input)
      .catch((e: unknown) => e);
    expect(fromInput).toBeInstanceOf(AnimalStoreError);
    expect(inspect(fromInput, { depth: 10 })).not.toContain(KEY);
    const store = {
      admit: () => {
        throw new Error(`store down for ${KEY}`);
      },
      observe: async () => undefined,
      release: async () => undefined,
    };
    const fromStore = await clientWith(stub.fetch, { apiKey: KEY, quotaStore: store })
      .listPets()
      .catch((e: unknown) => e);
    expect(fromStore).toBeInstanceOf(AnimalStoreError);
    expect((fromStore as Error).message).toContain('The quota store failed to admit a request');
    expect(inspect(fromStore, { depth: 10 })).not.toContain(KEY);
    expect(stub.received).toHaveLength(0);
  });

  it('refuses a baseUrl that holds the key', () => {
    for (const baseUrl of [
      `https://api.example.com/${KEY}/v1`,
      `https://api.example.com/v1;key=${encodeURIComponent(KEY)}`,
    ]) {
      let error: unknown;
      try {
        new PetsClient({ apiKey: KEY, baseUrl });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AnimalStoreError);
      expect((error as Error).message).toContain('Invalid baseUrl: it holds the API key');
      expect((error as Error).message).not.toContain(KEY);
    }
  });

  /** A client of KEY whose `beforeRequest` hook sets `set`, logging errors to `lines`. */
  const hookedClient = (set: (headers: Headers) => void) => {
    const { logger, lines } = recordingLogger(['error']);
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, {
      apiKey: KEY,
      logger,
      logLevel: 'error',
      hooks: { beforeRequest: ({ headers }) => set(headers) },
    });
    return { stub, client, lines };
  };

  it('sends the key in Authorization alone, whoever puts it in another header', async () => {
    expect(() => new PetsClient({ apiKey: KEY, headers: { 'x-api-key': KEY } })).toThrow(
      'Invalid headers: it holds the API key',
    );
    const { stub, client, lines } = hookedClient((headers) =>
      headers.set('x-hooked', `Key ${KEY}`),
    );
    // Every character percent-encoded, as no encoder would, but a decoder reads.
    const encoded = [...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    await client.listPets({}, { headers: { 'x-call': KEY, 'x-kept': '1', 'x-encoded': encoded } });
    const sent = stub.received[0]!.request.headers;
    expect([...sent].filter(([, value]) => decodeURIComponent(value).includes(KEY))).toEqual([
      ['authorization', `Bearer ${KEY}`],
    ]);
    expect(sent.get('x-kept')).toBe('1');
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).toContain('"x-call" was left out: it holds the API key');
    expect(lines.join('\n')).not.toContain(KEY);
  });

  it('sends no header whose name holds the key', async () => {
    expect(() => new PetsClient({ apiKey: KEY, headers: { [KEY]: 'v' } })).toThrow(
      'Invalid headers: it holds the API key',
    );
    const { stub, client, lines } = hookedClient((headers) =>
      headers.set(`y-${KEY.toUpperCase()}`, '1'),
    );
    await client.listPets({}, { headers: { [`x-${KEY}`]: '1', 'x-kept': '1' } });
    const sent = [...stub.received[0]!.request.headers].flat().join('\n').toLowerCase();
    expect(sent.split(KEY.toLowerCase())).toHaveLength(2);
    expect(stub.received[0]!.request.headers.get('x-kept')).toBe('1');
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toMatch(new RegExp(KEY, 'i'));
  });

  it('refuses headers as a Map or pairs rather than dropping them in silence', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const map = new Map([['x-app', 'shelter']]);
    expect(() => clientWith(stub.fetch, { headers: map as never })).toThrow(
      /expected an object of header names and values, got (a Map|an array): pass Object.fromEntries/,
    );
    await expect(
      clientWith(stub.fetch).listPets({}, { headers: [['x-call', '1']] as never }),
    ).rejects.toThrow(
      /expected an object of header names and values, got (a Map|an array): pass Object.fromEntries/,
    );
    expect(stub.received).toHaveLength(0);
  });

  it('refuses a header value that is no string, and headers of the connection, before sending', async () => {
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ 'x-a': null }, /the value of "x-a" must be a string, got null/],
      [{ 'x-a': { nested: 1 } }, /the value of "x-a" must be a string/],
      [{ 'Transfer-Encoding': 'chunked' }, /"transfer-encoding" is set by the HTTP client/],
      [{ connection: 'upgrade' }, /"connection" is set by the HTTP client/],
    ];
    for (const [headers, message] of cases) {
      await expect(
        client.listPets({}, { headers: headers as Record<string, string> }),
      ).rejects.toThrow(message);
      expect(() => clientWith(stub.fetch, { headers: headers as Record<string, string> })).toThrow(
        message,
      );
    }
    expect(stub.received).toHaveLength(0);
  });
});

describe('a hostile caller and a broken fetch or store', () => {
  const KEY = 'sk_live_ABCDEFGHIJKLMNOP1234';
  const thrown = (make: () => unknown) => {
    try {
      make();
    } catch (error) {
      return error;
    }
    return undefined;
  };
  const clean = (error: unknown) => {
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect((error as Error).message).not.toContain(KEY);
    expect(JSON.stringify(error)).not.toContain(KEY);
    expect(inspect(error, { depth: 10 })).not.toContain(KEY);
  };

  it('keeps the key out of an option error that quotes the key given to another option', async () => {
    for (const options of [
      { baseUrl: KEY },
      { environment: KEY },
      { timeoutMs: KEY },
      { logLevel: KEY },
      { headers: { [KEY]: null } },
      { headers: { [`${KEY} `]: 'v' } },
      { hooks: { [KEY]: () => {} } },
    ]) {
      clean(thrown(() => new PetsClient({ apiKey: KEY, ...(options as object) })));
    }
    const client = clientWith(scriptedFetch().thenAlways(json([rex])).fetch, { apiKey: KEY });
    for (const options of [{ timeoutMs: KEY }, { headers: { [KEY]: null } }]) {
      clean(await client.listPets({}, options as never).catch((e: unknown) => e));
    }
  });

  it('gives the lease back when a signal breaks as the attempt starts, so the key is not held', async () => {
    let reads = 0;
    const signal = {
      get aborted() {
        if (reads++ > 0) throw new Error(`signal ${KEY}`);
        return false;
      },
      addEventListener() {},
      removeEventListener() {},
      throwIfAborted() {},
    };
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { apiKey: KEY, maxRetryDelayMs: 1000 });
    clean(await client.listPets({}, { signal: signal as never }).catch((e: unknown) => e));
    await expect(client.listPets()).resolves.toEqual([rex]);
  });

  it('holds a custom fetch whose body streams strings to maxResponseBytes, reading no further', async () => {
    let pulled = 0;
    const body = new ReadableStream({
      pull(controller) {
        // 20 kB in all: ten times the cap.
        if (++pulled > 200) controller.close();
        else controller.enqueue('x'.repeat(100));
      },
    });
    const client = clientWith((async () => new Response(body as never, { status: 200 })) as never, {
      maxResponseBytes: 2000,
      maxRetries: 0,
    });
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/body broke off: the body stream gave no bytes/);
    expect(pulled).toBeLessThan(5);
  });

  it('quotes at most 200 characters of a reason phrase', async () => {
    const stub = scriptedFetch(new Response('', { status: 418, statusText: 'x'.repeat(100_000) }));
    const error = await clientWith(stub.fetch)
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as Error).message.length).toBeLessThan(600);
  });

  it('says in one line that a 2xx body is not JSON', async () => {
    const client = clientWith(scriptedFetch(new Response('oops', { status: 200 })).fetch);
    const error = (await client.listPets().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toMatch(
      /^The service's response to GET \S+\/pets \(HTTP 200\) is not JSON: "oops"\.$/,
    );
  });

  it('keeps a logger whose methods reject from failing the process or the call', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const rejects = async () => {
        throw new Error('logger down');
      };
      const logger = { error: rejects, warn: rejects, info: rejects, debug: rejects };
      const client = clientWith(scriptedFetch().thenAlways(json([rex])).fetch, {
        logger,
        logLevel: 'debug',
        ...({ unknownOption: 1 } as object),
      });
      await expect(client.listPets()).resolves.toEqual([rex]);
      await sleep(20);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('refuses a custom fetch that resolves nothing, or a status no response has, as no response', async () => {
    for (const resolved of [undefined, null, 1000, -1, 1e21]) {
      const response =
        typeof resolved === 'number'
          ? { status: resolved, headers: new Headers(), body: null, text: async () => '[]' }
          : resolved;
      const client = clientWith((async () => response) as never, { maxRetries: 0 });
      const error = await client.listPets().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toMatch(/fetch resolved something that is not a Response/);
    }
  });

  it('turns whatever a broken custom fetch throws or resolves into a success or an AnimalStoreError', async () => {
    const odd = [
      { status: 200, statusText: '', headers: { get: () => ({}), has: () => true, forEach() {} } },
      {
        status: 200,
        get statusText(): string {
          throw new Error(KEY);
        },
        headers: { get: () => null, has: () => false, forEach() {} },
      },
    ];
    for (const response of odd) {
      for (const status of [200, 500]) {
        const client = clientWith(
          (async () => ({ ...response, status, body: null, text: async () => '[]' })) as never,
          { apiKey: KEY, maxRetries: 0 },
        );
        const result = await client.listPets().catch((e: unknown) => e);
        // A 2xx is never failed for its headers. (Spreading the second throws the key.)
        if (status === 200 && response === odd[0]) expect(result).toEqual([]);
        else clean(result);
      }
    }
    const proxy = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('proxy proto');
        },
      },
    );
    const rejecting = clientWith((() => Promise.reject(proxy)) as never, { maxRetries: 0 });
    expect(await rejecting.listPets().catch((e: unknown) => e)).toBeInstanceOf(AnimalStoreError);
  });

  it('retries a 429 that says nothing after the back-off capped at maxRetryDelayMs, and cools down as long', async () => {
    const stub = scriptedFetch(apiError(429)).thenAlways(json([rex]));
    const client = clientWith(stub.fetch, { maxRetryDelayMs: 150 });
    const started = Date.now();
    await expect(client.listPets()).resolves.toEqual([rex]);
    expect(stub.received).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('rejects with the abort reason at once while a slow store records the response', async () => {
    const store = new MemoryQuotaStore();
    const slow = {
      admit: (b: string, r: never) => store.admit(b, r),
      release: (b: string, l: string) => store.release(b, l),
      observe: async (b: string, l: string, o: never) => {
        await sleep(3000);
        return store.observe(b, l, o);
      },
    };
    const client = clientWith(scriptedFetch().thenAlways(json([rex])).fetch, { quotaStore: slow });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 300);
    const started = Date.now();
    const error = await client.listPets({}, { signal: controller.signal }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('stop');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('reports the wait a 429 really asks for, never under the floor', async () => {
    const stub = scriptedFetch().thenAlways(apiError(429, { 'retry-after': '0' }));
    const error = await clientWith(stub.fetch, { maxRetryDelayMs: 0 })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(100);
    expect(stub.received).toHaveLength(1);
  });

  it('says what is wrong with options that are no object, and with headers that are no pairs', () => {
    const none = thrown(() => new PetsClient(null as never));
    expect((none as Error).message).toMatch(/Invalid PetsClient options: expected an object/);
    const key = thrown(() => new PetsClient(KEY as never));
    clean(key);
    expect((key as Error).message).toMatch(/got a value of type string/);
    const pairs = thrown(() => new PetsClient({ apiKey: KEY, headers: [['a']] as never }));
    expect((pairs as Error).message).toMatch(
      /^Invalid headers: expected an object of header names/,
    );
  });

  it('suggests the option meant, and says where an option of the other kind belongs', () => {
    const { logger, lines } = recordingLogger(['warn']);
    new PetsClient({
      apiKey: KEY,
      logger,
      ...({ maxRetryDelayMS: 5, retries: 1, signal: 1, log_level: 'off' } as object),
    });
    expect(lines).toEqual([
      '[animal-store] Unknown PetsClient options were ignored: "maxRetryDelayMS" (did you mean maxRetryDelayMs?), "retries" (did you mean maxRetries?), "signal" (an option of each call, not of the client), "log_level" (did you mean logLevel?).',
    ]);
  });
});

describe('an outage, seen as one', () => {
  it('fails a call held after requests that got no response as a ConnectionError, never as a 429', async () => {
    const server = createServer(() => {
      // Never answers.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const reasons: string[] = [];
    try {
      const client = new PetsClient({
        apiKey: 'sk_outage_0123456789',
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        quotaStore: new MemoryQuotaStore(),
        logLevel: 'off',
        timeoutMs: 100,
        maxRetries: 5,
        maxRetryDelayMs: 150,
        onRetry: (info) => reasons.push(info.reason),
      });
      const error = await client.listPets().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).not.toBeInstanceOf(RateLimitError);
      // The time to retry at is left out: its milliseconds may read 429.
      const message = (error as Error).message.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>');
      expect(message).not.toMatch(/429/);
      expect(reasons).not.toContain('cooldown');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a broken store, an odd status and a flooding body', () => {
  const KEY = 'sk_live_ATTACK_0123456789abcdef';
  const delegating = (holds: () => boolean) => {
    const inner = new MemoryQuotaStore();
    return {
      admit: (bucket: string) => inner.admit(bucket),
      observe: (bucket: string, lease: string, observation: never) =>
        inner.observe(bucket, lease, observation),
      release: (bucket: string, lease: string) => inner.release(bucket, lease),
      holds,
    };
  };

  it('asks again 100 ms apart when a lease lapses, and gives up after maxRetryDelayMs', async () => {
    vi.useFakeTimers();
    let asked = 0;
    const stub = scriptedFetch().thenAlways(json([rex]));
    const client = clientWith(stub.fetch, {
      quotaStore: delegating(() => (asked++, false)) as never,
      maxRetryDelayMs: 1_000,
    });
    const call = client.listPets().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_200);
    const error = (await call) as Error;
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect(error.message).toMatch(/every lease lapsed before the request could leave/);
    expect(asked).toBeGreaterThan(5);
    expect(asked).toBeLessThan(15);
    expect(stub.received).toHaveLength(0);
    vi.useRealTimers();
  });

  it('bounds a store that answers "wait 0" forever by maxRetryDelayMs, asking 10 ms apart', async () => {
    vi.useFakeTimers();
    let asked = 0;
    const store = {
      admit: async () => (asked++, { reason: 'budget-in-flight', waitMs: 0 }),
      observe: async () => undefined,
      release: async () => undefined,
    };
    const client = clientWith(scriptedFetch().thenAlways(json([rex])).fetch, {
      quotaStore: store as never,
      maxRetryDelayMs: 1_000,
    });
    const call = client.listPets().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_100);
    expect(await call).toBeInstanceOf(RateLimitError);
    expect(asked).toBeLessThanOrEqual(102);
    vi.useRealTimers();
  });

  it('refuses a hold reason the interface does not name', async () => {
    const store = {
      admit: async () => ({ reason: 'lol', waitMs: 10 }),
      observe: async () => undefined,
      release: async () => undefined,
    };
    const error = await clientWith(scriptedFetch().thenAlways(json([rex])).fetch, {
      quotaStore: store as never,
    })
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect((error as Error).message).toMatch(/not \{ lease \} or \{ reason, waitMs\? \}/);
  });

  it('takes a status past 599 as an ApiError, never retried', async () => {
    let requests = 0;
    const base = await listen((_req, res) => {
      requests++;
      res.writeHead(600, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'odd', message: 'odd', status: 600 }));
    });
    const client = new PetsClient({
      apiKey: KEY,
      baseUrl: `${base}/v1`,
      logLevel: 'off',
      quotaStore: new MemoryQuotaStore(),
    });
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(ServerError);
    expect(requests).toBe(1);
  });

  it('cuts a flooding Error body to a line a log can hold', async () => {
    const body = { code: 'c'.repeat(10_000), message: 'm'.repeat(100_000), status: 400 };
    const error = (await clientWith(scriptedFetch().thenAlways(json(body, 400)).fetch)
      .createPet({ name: 'Rex', categoryId: 1 })
      .catch((e: unknown) => e)) as ApiError;
    expect(error.message.length).toBeLessThan(1_000);
    expect(error.code).toHaveLength(100);
  });

  it('keeps the key in the environment out of an error read from the options', () => {
    const before = process.env.ANIMAL_STORE_API_KEY;
    process.env.ANIMAL_STORE_API_KEY = KEY;
    try {
      const options = new Proxy(
        { baseUrl: 'http://127.0.0.1:9/v1' },
        {
          ownKeys() {
            throw new Error(`own ${KEY}`);
          },
        },
      );
      let error: unknown;
      try {
        new PetsClient(options);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AnimalStoreError);
      expect(inspect(error, { depth: 10 })).not.toContain(KEY);
    } finally {
      if (before === undefined) delete process.env.ANIMAL_STORE_API_KEY;
      else process.env.ANIMAL_STORE_API_KEY = before;
    }
  });

  it('reports the key’s real wait after 429s in a row, and what the service asked', async () => {
    vi.useFakeTimers();
    const stub = scriptedFetch().thenAlways(apiError(429, { 'retry-after': '0' }));
    const call = clientWith(stub.fetch, { maxRetries: 5, maxRetryDelayMs: 3_000 })
      .listPets()
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);
    const error = (await call) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.message).toMatch(
      /The service asks to wait 100 ms; after 429s in a row the key waits \d+ ms \(until [^)]+\), longer than maxRetryDelayMs/,
    );
    expect(error.retryAfterMs).toBeGreaterThan(3_000);
    vi.useRealTimers();
  });
});
