import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AnimalStoreError, AuthenticationError, NotFoundError, PetsClient } from '../src/index.js';
import {
  createHandlers,
  createMockService,
  MockServerOptionError,
  PLAN_LIMITS,
  SAMPLE_PETS,
} from '../src/mock/index.js';
import { MOST_KEYS, RateLimiter } from '../src/mock/rate-limiter.js';
import { today } from './helpers/fake-time.js';

const BASE = 'https://api.animal-store.example/v1';
const handlers = createHandlers({ apiKeys: ['test-key'], plan: 'free', seed: SAMPLE_PETS });
const server = setupServer(...handlers);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  handlers.service.reset();
});
afterAll(() => server.close());

const client = (apiKey = 'test-key') =>
  new PetsClient({ apiKey, maxRetries: 0, logLevel: 'off', deprecationWarnings: false });

describe('msw handlers', () => {
  it('start from an empty store unless seeded', async () => {
    const service = createMockService();
    expect(service.pets).toEqual([]);
    const response = await service.handle(
      new Request(`${BASE}/pets`, {
        method: 'POST',
        headers: { authorization: 'Bearer k' },
        body: '{"name":"A","categoryId":1}',
      }),
    );
    expect(await response.json()).toEqual({ id: 1, name: 'A', categoryId: 1 });
  });

  it('serve the production base address by default, with the sample animals', async () => {
    expect(await client().listPets()).toEqual(SAMPLE_PETS);
  });

  it('filter by status and cap by limit', async () => {
    handlers.service.seed(
      Array.from({ length: 130 }, (_, i) => ({
        name: `p${i}`,
        categoryId: 1,
        status: 'available' as const,
      })),
    );
    expect(await client().listPets({ status: 'sold' })).toEqual([SAMPLE_PETS[2]]);
    expect(await client().listPets()).toHaveLength(20);
    expect(await client().listPets({ limit: 100 })).toHaveLength(100);
    expect(await client().listPets({ limit: 5, status: 'available' })).toHaveLength(5);
  });

  it('assign ids on creation and serve the animal back', async () => {
    const created = await client().createPet({ name: 'Kit', categoryId: 2 });
    expect(created).toEqual({ id: 4, name: 'Kit', categoryId: 2 });
    expect(await client().getPet(created.id)).toEqual(created);
    expect(handlers.service.pets).toContainEqual(created);
  });

  it('answer 401 to an unknown key and 404 to an unknown id', async () => {
    await expect(client('wrong').listPets()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(client().getPet(999)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('answer 400 to a body the service would refuse', async () => {
    const response = await fetch(`${BASE}/pets`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-key', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'NoCategory' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_body', status: 400 });
  });

  it('reset to the seed', async () => {
    await client().createPet({ name: 'Kit', categoryId: 2 });
    handlers.service.reset();
    expect(handlers.service.pets).toEqual(SAMPLE_PETS);
  });
});

describe('rate limiting', () => {
  it('allows 60 a minute on the free plan, then 429 with Retry-After until the next minute', async () => {
    let now = today(12, 0, 15);
    const service = createMockService({ plan: 'free', now: () => now });
    const get = () =>
      service.handle(new Request(`${BASE}/pets`, { headers: { authorization: 'Bearer k' } }));
    for (let i = 0; i < 60; i++) expect((await get()).status).toBe(200);
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('45');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset')).toBe(String(today(12, 1, 0) / 1000));
    now += 45_000;
    const after = await get();
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('59');
  });

  it.each([
    ['pro', 300],
    ['business', 1000],
  ] as const)('allows %s its %i a minute', async (plan, perMinute) => {
    const service = createMockService({ plan, now: () => 0 });
    const response = await service.handle(
      new Request(`${BASE}/pets`, { headers: { authorization: 'Bearer k' } }),
    );
    expect(response.headers.get('x-ratelimit-limit')).toBe(String(perMinute));
  });

  it('enforces the daily limit across minutes and reports it once it binds', async () => {
    let now = today(0, 0, 0);
    const service = createMockService({
      plan: 'enterprise',
      limits: { perMinute: 50, perDay: 100 },
      now: () => now,
    });
    const get = () =>
      service.handle(new Request(`${BASE}/pets`, { headers: { authorization: 'Bearer k' } }));
    for (let minute = 0; minute < 2; minute++) {
      for (let i = 0; i < 50; i++) expect((await get()).status).toBe(200);
      now += 60_000;
    }
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('100');
    expect(Number(limited.headers.get('retry-after'))).toBe(86_400 - 120);
  });

  it('counts each key separately', async () => {
    const service = createMockService({ limits: { perMinute: 1 }, now: () => 0 });
    const get = (key: string) =>
      service.handle(new Request(`${BASE}/pets`, { headers: { authorization: `Bearer ${key}` } }));
    expect((await get('a')).status).toBe(200);
    expect((await get('a')).status).toBe(429);
    expect((await get('b')).status).toBe(200);
  });
});

describe('msw missing', () => {
  it('is told apart from a dependency of msw that is missing, whatever the path', async () => {
    const { isMswMissing } = await import('../src/mock/msw-missing.js');
    expect(
      isMswMissing({
        code: 'ERR_MODULE_NOT_FOUND',
        message: "Cannot find package 'msw' imported from /app/x.js",
      }),
    ).toBe(true);
    expect(
      isMswMissing({
        code: 'MODULE_NOT_FOUND',
        message: "Cannot find module 'msw'\nRequire stack:",
      }),
    ).toBe(true);
    expect(
      isMswMissing({
        code: 'ERR_MODULE_NOT_FOUND',
        message:
          "Cannot find package 'graphql' imported from /tmp/'msw'/node_modules/msw/lib/core/index.mjs",
      }),
    ).toBe(false);
    expect(isMswMissing(new Error("Cannot find package 'msw'"))).toBe(false);
  });

  it('is an AnimalStoreError, as every error of the SDK', async () => {
    const { mswMissingError } = await import('../src/mock/msw-missing.js');
    const error = mswMissingError(new Error("Cannot find package 'msw'"));
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect(error).toMatchObject({ name: 'MswMissingError', code: 'ERR_ANIMAL_STORE_MSW_MISSING' });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'MswMissingError',
      message: expect.stringContaining('needs msw 2'),
      code: 'ERR_ANIMAL_STORE_MSW_MISSING',
      cause: "Error: Cannot find package 'msw'",
    });
    expect(new Error('other')).not.toBeInstanceOf(AnimalStoreError);
  });
});

describe('the mock under callers that make up keys', () => {
  it('keeps at most 10,000 counters, forgetting the oldest, and none for a refused key', () => {
    const limiter = new RateLimiter({ perMinute: 5, perDay: 100 });
    const at = today();
    limiter.take('first', at);
    limiter.take('first', at);
    expect(limiter.peek('first', at).remaining).toBe(3);
    for (let i = 0; i < MOST_KEYS; i++) limiter.peek(`anonymous:${i}`, at);
    expect(limiter.peek('first', at).remaining).toBe(3);
    for (let i = 0; i < MOST_KEYS - 1; i++) limiter.take(`made-up-${i}`, at);
    // Counted again: the last to be forgotten.
    limiter.take('first', at);
    // Refused at its limit, but used: not forgotten before the others either.
    const held = new RateLimiter({ perMinute: 1, perDay: 100 });
    held.take('held', at);
    for (let i = 0; i < MOST_KEYS - 1; i++) held.take(`other-${i}`, at);
    expect(held.take('held', at).allowed).toBe(false);
    held.take('newcomer', at);
    expect(held.take('held', at).allowed).toBe(false);
    limiter.take('one-more', at);
    expect(limiter.peek('first', at).remaining).toBe(2);
    expect(limiter.peek('made-up-0', at).remaining).toBe(5);
  });

  it('keeps its seed as given, answers nothing on a clock that is no time, and shares no plan', async () => {
    const seed = [{ name: 'Rex', categoryId: 1 }];
    const service = createMockService({ seed });
    seed[0]!.name = 'changed';
    service.reset();
    expect(service.pets).toEqual([{ id: 1, name: 'Rex', categoryId: 1 }]);
    expect(() => service.seed([{ name: 'x' } as never])).toThrow(/seed\[0\] is not an animal/);
    expect(() => service.seed([{ id: 1, name: 'Tom', categoryId: 2 }])).toThrow(
      'id 1 is taken already; seed it without an id.',
    );
    expect(() => createMockService({ baseUrl: 'not a url' })).toThrow(
      "baseUrl must be an absolute URL such as 'http://127.0.0.1:4010/v1'",
    );
    const broken = createMockService({ now: () => Number.NaN });
    await expect(
      broken.handle(
        new Request(`${broken.baseUrl}/pets`, { headers: { authorization: 'Bearer k' } }),
      ),
    ).rejects.toThrow('now() returned NaN; it must return epoch milliseconds.');
    expect(Object.isFrozen(PLAN_LIMITS.free)).toBe(true);
    expect(() => createMockService(null as never)).toThrow(MockServerOptionError);
  });
});
