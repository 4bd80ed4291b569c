import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AnimalStoreError, PetsClient } from '../src/index.js';
import {
  API_KEY,
  apiError,
  BASE_URL,
  clientWith,
  json,
  rex,
  scriptedFetch,
} from './helpers/scripted-fetch.js';

afterEach(() => vi.unstubAllEnvs());

describe('API key', () => {
  it('sends the key as a bearer token in the Authorization header only', async () => {
    const stub = scriptedFetch(json([rex]));
    await clientWith(stub.fetch).listPets({ limit: 5 });
    const [{ request, body }] = stub.received as [(typeof stub.received)[0]];
    expect(request.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
    expect(request.url).not.toContain(API_KEY);
    expect(body).not.toContain(API_KEY);
    for (const [name, value] of request.headers) {
      if (name !== 'authorization') expect(value).not.toContain(API_KEY);
    }
  });

  it('reads ANIMAL_STORE_API_KEY when no apiKey is given', async () => {
    vi.stubEnv('ANIMAL_STORE_API_KEY', 'sk_from_env');
    const stub = scriptedFetch(json([]));
    await new PetsClient({ baseUrl: BASE_URL, fetch: stub.fetch }).listPets();
    expect(stub.received[0]?.request.headers.get('authorization')).toBe('Bearer sk_from_env');
  });

  it('prefers the apiKey option over the environment', async () => {
    vi.stubEnv('ANIMAL_STORE_API_KEY', 'sk_from_env');
    const stub = scriptedFetch(json([]));
    await clientWith(stub.fetch).listPets();
    expect(stub.received[0]?.request.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
  });

  it('reports a missing key at construction, saying how to fix it', () => {
    vi.stubEnv('ANIMAL_STORE_API_KEY', undefined);
    const fetch = vi.fn();
    expect(() => new PetsClient({ fetch })).toThrow(AnimalStoreError);
    expect(() => new PetsClient({ fetch })).toThrow(/apiKey.*ANIMAL_STORE_API_KEY/);
    expect(() => new PetsClient({ apiKey: '', fetch })).toThrow(/Missing API key/);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('names every unknown option beside a missing key, each with the name likely meant', () => {
    vi.stubEnv('ANIMAL_STORE_API_KEY', undefined);
    expect(() => new PetsClient({ apikey: 'sk_x', baseURL: BASE_URL } as never)).toThrow(
      /^Missing API key: .* Unknown options were given: "apikey" \(did you mean apiKey\?\), "baseURL" \(did you mean baseUrl\?\)\.$/,
    );
  });

  it('says that an empty apiKey keeps the key in the environment from being read', () => {
    vi.stubEnv('ANIMAL_STORE_API_KEY', 'sk_from_env');
    expect(() => new PetsClient({ apiKey: '', baseUrl: BASE_URL })).toThrow(
      /An empty apiKey keeps ANIMAL_STORE_API_KEY from being read: leave it out/,
    );
  });

  it.each([
    ['a line feed', 'sk_live\nX-Evil: 1'],
    ['a carriage return', 'sk_live\r'],
    ['a space', 'sk live'],
    ['a non-ASCII character', 'sk_lïve'],
    ['a NUL', 'sk\u0000live'],
  ])('refuses a key holding %s at construction, without echoing it', (_, key) => {
    let caught: unknown;
    try {
      new PetsClient({ apiKey: key, baseUrl: BASE_URL });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AnimalStoreError);
    expect((caught as Error).message).toMatch(/Invalid API key/);
    expect((caught as Error).message).not.toContain(key);
  });

  it('names ANIMAL_STORE_API_KEY when the key read from it cannot be sent', () => {
    vi.stubEnv('ANIMAL_STORE_API_KEY', 'sk_from_env\r');
    expect(() => new PetsClient({ baseUrl: BASE_URL })).toThrow(
      /^Invalid API key \(read from ANIMAL_STORE_API_KEY\): it contains a line break/,
    );
    expect(() => new PetsClient({ apiKey: 'sk x', baseUrl: BASE_URL })).toThrow(
      /^Invalid API key: it contains white space/,
    );
  });

  it('says to drop a "Bearer " prefix pasted with the key, which the client adds itself', () => {
    for (const apiKey of ['Bearer sk_live_abc', 'bearer\tsk_live_abc']) {
      const make = () => new PetsClient({ apiKey, baseUrl: BASE_URL });
      expect(make).toThrow(
        /^Invalid API key: it starts with "Bearer ", which the client adds itself/,
      );
      expect(make).not.toThrow(/sk_live_abc/);
    }
  });

  it('refuses a key longer than 4 kB with an error of its own that does not quote it', () => {
    const key = (n: number) => `sk_${'aZ9-_.~+/'.repeat(n).slice(0, n - 3)}`;
    expect(() => new PetsClient({ apiKey: key(4096), baseUrl: BASE_URL })).not.toThrow();
    let error: unknown;
    try {
      new PetsClient({ apiKey: key(20_000), baseUrl: BASE_URL });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect((error as Error).message).toBe(
      'Invalid API key: it is 20000 characters long, more than 4096. Pass the key alone, not the file or text that holds it.',
    );
  });

  it('keeps the key out of String, JSON.stringify and util.inspect of the client', () => {
    const client = clientWith(scriptedFetch().fetch);
    expect(String(client)).not.toContain(API_KEY);
    expect(JSON.stringify(client)).not.toContain(API_KEY);
    expect(inspect(client, { showHidden: true, depth: 10 })).not.toContain(API_KEY);
    expect(inspect(client)).toContain('[redacted]');
    expect(Object.values(client).join(' ')).not.toContain(API_KEY);
  });

  it('keeps the key out of errors even when the server echoes it', async () => {
    const echo = (request: Request) =>
      json(
        {
          code: 'bad_key',
          message: `key ${request.headers.get('authorization')} is invalid`,
          status: 401,
        },
        401,
        { 'x-echo': request.headers.get('authorization') ?? '' },
      );
    const stub = scriptedFetch(echo);
    const error = await clientWith(stub.fetch)
      .listPets()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    const apiError = error as AnimalStoreError & { headers: Headers; body: unknown };
    const everything = [
      apiError.message,
      apiError.stack,
      JSON.stringify(apiError),
      JSON.stringify(apiError.body),
      inspect(apiError, { depth: 10 }),
      [...apiError.headers].join(' '),
    ].join('\n');
    expect(everything).not.toContain(API_KEY);
    expect(everything).toContain('[redacted]');
  });

  it('keeps the key out of the message about a 2xx body that is not JSON', async () => {
    const stub = scriptedFetch(new Response(`oops Bearer ${API_KEY} and more`, { status: 200 }));
    const error = (await clientWith(stub.fetch)
      .listPets()
      .catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('[redacted]');
    expect(`${error.message}\n${error.stack}`).not.toContain(API_KEY);
  });

  it('keeps the key out of log lines at every level', async () => {
    const lines: string[] = [];
    const logger = {
      debug: (m: string) => lines.push(m),
      info: (m: string) => lines.push(m),
      warn: (m: string) => lines.push(m),
      error: (m: string) => lines.push(m),
    };
    const stub = scriptedFetch(apiError(503), json([rex]));
    const client = clientWith(stub.fetch, { logLevel: 'debug', logger, maxRetryDelayMs: 100 });
    await client.listPets();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(API_KEY);
  });
});
