import { describe, expect, it } from 'vitest';
import {
  AnimalStoreError,
  environments,
  PetsClient,
  RequestValidationError,
} from '../src/index.js';
import { recordingLogger } from './helpers/logger.js';
import { API_KEY, clientWith, json, scriptedFetch } from './helpers/scripted-fetch.js';

/** A logger that keeps its warn lines. */
const warningsLogger = () => {
  const { logger, lines: warnings } = recordingLogger(['warn']);
  return { warnings, logger };
};

const make = (options: ConstructorParameters<typeof PetsClient>[0]) =>
  new PetsClient({ apiKey: API_KEY, fetch: scriptedFetch().fetch, ...options });

describe('environments', () => {
  it('offers production and staging, each ending in /v1', () => {
    expect(Object.keys(environments).sort()).toEqual(['production', 'staging']);
    for (const url of Object.values(environments)) expect(url).toMatch(/^https:\/\/.+\/v1$/);
    expect(Object.isFrozen(environments)).toBe(true);
  });

  it('uses production by default and staging when asked', () => {
    expect(make({}).baseUrl).toBe(environments.production);
    expect(make({ environment: 'staging' }).baseUrl).toBe(environments.staging);
  });

  it('lets baseUrl override environment and drops a trailing slash', async () => {
    const stub = scriptedFetch(json([]));
    const client = clientWith(stub.fetch, {
      environment: 'staging',
      baseUrl: 'http://localhost:9/v1/',
    });
    expect(client.baseUrl).toBe('http://localhost:9/v1');
    await client.listPets();
    expect(stub.received[0]?.request.url).toBe('http://localhost:9/v1/pets');
  });

  it('refuses an unknown environment, beside a baseUrl too', () => {
    expect(() => make({ environment: 'prod' as 'production' })).toThrow(
      /Invalid environment "prod"/,
    );
    const both = { environment: 'prod' as 'production', baseUrl: 'http://localhost:9/v1' };
    expect(() => make(both)).toThrow(/Invalid environment "prod"/);
  });
});

describe('baseUrl checks', () => {
  it.each([
    'http://127.0.0.1:4010/v1',
    'http://localhost/v1',
    'http://[::1]:80/v1',
    'https://api.example.com/v1',
  ])('accepts %s', (baseUrl) => {
    expect(make({ baseUrl }).baseUrl).toBe(baseUrl.replace(':80/', '/'));
  });

  it('accepts plain http to 127.0.0.1 written as an IPv4-mapped IPv6 address', () => {
    expect(make({ baseUrl: 'http://[::ffff:127.0.0.1]:4010/v1' }).baseUrl).toBe(
      'http://[::ffff:7f00:1]:4010/v1',
    );
    expect(() => make({ baseUrl: 'http://[::ffff:10.0.0.1]/v1' })).toThrow(/clear text/);
  });

  it.each([
    ['plain http to a remote host', 'http://api.example.com/v1', /clear text/],
    ['an empty string', '', /Invalid baseUrl "": it is empty \(from a variable set to ""\?\)/],
    ['a relative path outside a browser', '/v1', /Invalid baseUrl/],
    ['another protocol', 'ftp://example.com/v1', /protocol/],
    ['credentials in the URL', 'https://user:pw@example.com/v1', /credentials/],
    ['a query', 'https://example.com/v1?x=1', /query/],
    [
      'a loopback host without http://',
      'localhost:4010/v1',
      /\(did you mean http:\/\/localhost:4010\/v1\?\)/,
    ],
    [
      'an address without http://',
      '127.0.0.1:4010/v1',
      /\(did you mean http:\/\/127\.0\.0\.1:4010\/v1\?\)/,
    ],
    [
      'a host without https://',
      'api.example.com/v1',
      /\(did you mean https:\/\/api\.example\.com\/v1\?\)/,
    ],
  ])('refuses %s', (_, baseUrl, message) => {
    expect(() => make({ baseUrl })).toThrow(AnimalStoreError);
    expect(() => make({ baseUrl })).toThrow(message);
  });

  it('warns of a base URL that ends in /pets, which each call adds', () => {
    const { logger, warnings } = warningsLogger();
    make({ baseUrl: 'http://127.0.0.1:4010/v1/pets/', logger });
    make({ baseUrl: 'http://127.0.0.1:4010/v1', logger });
    make({ baseUrl: 'http://127.0.0.1:4010/petshop', logger });
    expect(warnings).toEqual([
      expect.stringMatching(
        /^\[animal-store\] baseUrl http:\/\/127\.0\.0\.1:4010\/v1\/pets ends in \/pets, which each call adds: pass the address up to \/v1\.$/,
      ),
    ]);
  });

  it('accepts plain http to a remote host when the caller opts in', () => {
    expect(make({ baseUrl: 'http://10.0.0.5/v1', allowInsecureHttp: true }).baseUrl).toBe(
      'http://10.0.0.5/v1',
    );
  });
});

describe('other options', () => {
  it.each([
    [{ maxRetries: -1 }, /maxRetries/],
    [{ maxRetries: 1.5 }, /maxRetries/],
    [{ timeoutMs: 0 }, /timeoutMs/],
    [{ maxRetryDelayMs: Number.NaN }, /maxRetryDelayMs/],
    [{ headers: { Authorization: 'Bearer other' } }, /Authorization is set from apiKey/],
    [{ headers: { 'x-bad': 'a\nb' } }, /Invalid header/],
    [{ onRetry: 'log' as never }, /onRetry/],
    [{ deprecationWarnings: 'false' as never }, /deprecationWarnings: expected true or false/],
    [{ allowInsecureHttp: 'true' as never }, /allowInsecureHttp: expected true or false/],
    [{ dangerouslyAllowBrowser: 1 as never }, /dangerouslyAllowBrowser: expected true or false/],
    [{ tracing: true as never }, /tracing: expected false or an object/],
    [{ tracing: { httpSpans: 'yes' as never } }, /tracing.httpSpans: expected true or false/],
  ])('refuses %o at construction', (options, message) => {
    expect(() => make(options)).toThrow(message);
  });

  it('warns once of an option it does not know, naming the one likely meant', () => {
    const { warnings, logger } = warningsLogger();
    make({ logger, ...({ maxRetry: 3, timeout: 5, colour: 'red', foo: 1 } as object) });
    expect(warnings).toEqual([
      '[animal-store] Unknown PetsClient options were ignored: "maxRetry" (did you mean maxRetries?), "timeout" (did you mean timeoutMs?), "colour", "foo".',
    ]);
    warnings.length = 0;
    make({ logger, maxRetries: 3, timeoutMs: 5, headers: {} });
    expect(warnings).toEqual([]);
    make({ logger, tracing: { httpspans: true } as object });
    expect(warnings).toEqual([
      '[animal-store] Unknown PetsClient options were ignored: "tracing.httpspans" (did you mean tracing.httpSpans?).',
    ]);
    // Clients made again with the same options (one per request) say it once to a logger.
    make({ logger, tracing: { httpspans: true } as object });
    expect(warnings).toHaveLength(1);
    const other = warningsLogger();
    make({ logger: other.logger, tracing: { httpspans: true } as object });
    expect(other.warnings).toHaveLength(1);
  });

  it('warns of an unknown per-call option once per client', async () => {
    const { warnings, logger } = warningsLogger();
    const stub = scriptedFetch().thenAlways(json([]));
    const client = clientWith(stub.fetch, { logger, logLevel: 'warn' });
    const typo = { timeout: 5, abortSignal: new AbortController().signal } as object;
    await client.listPets({}, typo);
    await client.listPets({}, typo);
    await client.listPets({}, { timeoutMs: 5_000 });
    expect(warnings).toEqual([
      '[animal-store] Unknown listPets options were ignored: "timeout" (did you mean timeoutMs?), "abortSignal" (did you mean signal?).',
    ]);
  });

  it('sends extra headers on every request', async () => {
    const stub = scriptedFetch(json([]), json([]));
    const client = clientWith(stub.fetch, { headers: { 'x-trace': '1' } });
    await client.listPets();
    await client.listPets();
    expect(stub.received.map((r) => r.request.headers.get('x-trace'))).toEqual(['1', '1']);
  });

  it('refuses invalid per-call options before sending', async () => {
    const stub = scriptedFetch(json([]));
    await expect(clientWith(stub.fetch).listPets({}, { maxRetries: -2 })).rejects.toThrow(
      /maxRetries/,
    );
    await expect(clientWith(stub.fetch).listPets({}, { timeoutMs: -5 })).rejects.toThrow(
      /timeoutMs/,
    );
    expect(stub.received).toHaveLength(0);
  });

  it('uses globalThis.fetch when no fetch is given', async () => {
    const original = globalThis.fetch;
    const stub = scriptedFetch(json([]));
    globalThis.fetch = stub.fetch as typeof fetch;
    try {
      await new PetsClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:1/v1' }).listPets();
    } finally {
      globalThis.fetch = original;
    }
    expect(stub.received).toHaveLength(1);
  });
});

describe('odd calls', () => {
  it('works with methods taken off the client', async () => {
    const stub = scriptedFetch().thenAlways(json([]));
    const { listPets } = clientWith(stub.fetch);
    expect(await listPets()).toEqual([]);
  });

  it('refuses call options that are not an object, sending nothing', async () => {
    const stub = scriptedFetch().thenAlways(json([]));
    const client = clientWith(stub.fetch);
    await expect(client.listPets({}, 5 as unknown as object)).rejects.toThrow(
      /Invalid listPets options: expected an object such as \{ timeoutMs: 5000 \}, got 5/,
    );
    await expect(client.listPets({}, null as unknown as object)).rejects.toBeInstanceOf(
      AnimalStoreError,
    );
    expect(stub.received).toHaveLength(0);
  });

  it('refuses bad call options as bad input: a RequestValidationError, with the issue', async () => {
    const stub = scriptedFetch().thenAlways(json([]));
    const client = clientWith(stub.fetch);
    for (const options of [
      { timeoutMs: -5 },
      { maxRetries: 1.5 },
      { headers: { Authorization: 'Bearer other' } },
      5 as unknown as object,
      new Proxy(
        {},
        {
          ownKeys() {
            throw null;
          },
        },
      ),
    ]) {
      const error = await client.listPets({}, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestValidationError);
      const { issues, message } = error as RequestValidationError;
      expect(issues).toEqual([{ path: [], message, code: 'invalid_option' }]);
      expect(message).toMatch(/^Invalid listPets option/);
    }
    expect(stub.received).toHaveLength(0);
  });

  it('never shows an unknown option whose name is no name (a pasted key, say)', () => {
    const { warnings, logger } = warningsLogger();
    const pasted = `sk_live_${'x'.repeat(72)}`;
    make({ logger, ...({ [pasted]: 1, 'a"b': 2, maxRetry: 1 } as object) });
    expect(warnings).toEqual([
      '[animal-store] Unknown PetsClient options were ignored: "maxRetry" (did you mean maxRetries?), 2 more.',
    ]);
  });
});
