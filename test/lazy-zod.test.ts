import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { json, rex, scriptedFetch } from './helpers/scripted-fetch.js';

// Zod is loaded only when a fast check declines a value. These tests hold the
// build to that, and the client to typed errors when that load fails (a
// browser chunk that cannot be fetched).

const dist = new URL('../dist/', import.meta.url);

describe('the Zod chunk', () => {
  afterEach(() => {
    vi.doUnmock('../src/validation/verdict.js');
    vi.resetModules();
  });

  it('is not part of what importing the ESM build loads', () => {
    const chunk = readdirSync(dist).find((f) => /^verdict-\w+\.js$/.test(f));
    expect(chunk, 'a verdict chunk is built').toBeDefined();
    // index.js and the chunks it imports up front hold no Zod, and one of them
    // imports the verdict chunk when it is needed.
    const index = readFileSync(new URL('index.js', dist), 'utf8');
    const loaded = [index];
    for (const [, shared] of index.matchAll(/^import\s[^(]*from\s+'\.\/([^']+)'/gm)) {
      loaded.push(readFileSync(new URL(shared!, dist), 'utf8'));
    }
    for (const text of loaded) expect(text).not.toContain('$ZodType');
    expect(loaded.some((text) => text.includes(`import('./${chunk}')`))).toBe(true);
    expect(readFileSync(new URL(chunk!, dist), 'utf8')).toContain('$ZodType');
  });

  it('loads under fake timers too: a declined value still rejects with the typed error', async () => {
    vi.useFakeTimers();
    try {
      const built = (await import(
        new URL('index.js', dist).href
      )) as typeof import('../src/index.js');
      const stub = scriptedFetch(json({ ...rex, id: 2 ** 53 }));
      const client = new built.PetsClient({
        apiKey: 'sk_test_lazy',
        baseUrl: 'http://127.0.0.1:4010/v1',
        fetch: stub.fetch,
        logLevel: 'off',
        deprecationWarnings: false,
      });
      const error = await client.getPet(1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(built.ResponseValidationError);
      expect((error as Error).message).toMatch(/id must be a safe integer/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('failing to load still gives typed errors, and nothing is sent for bad input', async () => {
    vi.doMock('../src/validation/verdict.js', () => {
      throw new Error('chunk failed to load');
    });
    vi.resetModules();
    const { PetsClient, RequestValidationError, ResponseValidationError } = await import(
      '../src/index.js'
    );
    const stub = scriptedFetch(json([{ ...rex, id: 'one' }]), json([rex]));
    const client = new PetsClient({
      apiKey: 'sk_test_lazy',
      baseUrl: 'http://127.0.0.1:4010/v1',
      fetch: stub.fetch,
      logLevel: 'off',
      maxRetries: 0,
    });

    const input = await client.listPets({ limit: 0 }).catch((e: unknown) => e);
    expect(input).toBeInstanceOf(RequestValidationError);
    expect((input as InstanceType<typeof RequestValidationError>).issues[0]?.code).toBe(
      'validator_unavailable',
    );
    expect(stub.received).toHaveLength(0);

    const output = await client.listPets().catch((e: unknown) => e);
    expect(output).toBeInstanceOf(ResponseValidationError);
    expect((output as Error).message).toMatch(/could not be loaded/);

    // Valid values never need it.
    await expect(client.listPets()).resolves.toEqual([rex]);
  });
});
