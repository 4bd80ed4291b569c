/**
 * Testing your own code against the SDK's msw handlers: no hand-written
 * fixtures, and the mock behaves like the service (401, 404, 429, limits…).
 */
import { MemoryQuotaStore, PetsClient, RateLimitError, TimeoutError } from '@animal-store/sdk';
import { createHandlers } from '@animal-store/sdk/mock';
import { delay, HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

// Your application code: counts the animals available for adoption.
async function countAvailable(client: PetsClient): Promise<number> {
  return (await client.listPets({ status: 'available', limit: 100 })).length;
}

const handlers = createHandlers({
  apiKeys: ['test-key'],
  seed: [
    { name: 'Rex', categoryId: 1, status: 'available' },
    { name: 'Tom', categoryId: 1, status: 'sold' },
  ],
});
const server = setupServer(...handlers);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  handlers.service.reset();
  vi.useRealTimers();
});
afterAll(() => server.close());

// baseUrl: where the handlers answer, whatever ANIMAL_STORE_BASE_URL says. A
// store of each client's own: a 429 one test provokes must not hold the next.
const client = (options: { maxRetries?: number; timeoutMs?: number } = { maxRetries: 0 }) =>
  new PetsClient({
    apiKey: 'test-key',
    baseUrl: handlers.service.baseUrl,
    quotaStore: new MemoryQuotaStore(),
    ...options,
  });
const pets = `${handlers.service.baseUrl}/pets`;

describe('countAvailable', () => {
  it('counts the available animals', async () => {
    expect(await countAvailable(client())).toBe(1);
  });

  it('sees animals the app created', async () => {
    await client().createPet({ name: 'Kit', categoryId: 2, status: 'available' });
    expect(await countAvailable(client())).toBe(2);
  });

  it('surfaces an outage as a ServerError', async () => {
    server.use(http.get(pets, () => HttpResponse.text('down', { status: 503 })));
    await expect(countAvailable(client())).rejects.toMatchObject({
      name: 'ServerError',
      status: 503,
    });
  });

  it('gets past one 503: the client retries a GET after a back-off (fake timers)', async () => {
    vi.useFakeTimers();
    let calls = 0;
    // Answers the first request with a 503; returning nothing hands the next to the mock.
    server.use(
      http.get(pets, () =>
        ++calls === 1 ? HttpResponse.text('down', { status: 503 }) : undefined,
      ),
    );
    const counted = countAvailable(client({ maxRetries: 2 }));
    await vi.advanceTimersByTimeAsync(1_000); // the first back-off is 250–500 ms
    expect(await counted).toBe(1);
    expect(calls).toBe(2);
  });

  it('gives up on a slow reply with a TimeoutError at timeoutMs (fake timers)', async () => {
    vi.useFakeTimers();
    server.use(
      http.get(pets, async () => {
        await delay(5_000); // then the mock answers
      }),
    );
    const counted = countAvailable(client({ maxRetries: 0, timeoutMs: 1_000 }));
    const failed = counted.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await failed).toBeInstanceOf(TimeoutError);
  });

  it('surfaces a 429 as a RateLimitError that says when to come back', async () => {
    server.use(
      http.get(pets, () =>
        HttpResponse.json(
          { code: 'rate_limited', message: 'Too many requests', status: 429 },
          { status: 429, headers: { 'Retry-After': '120' } },
        ),
      ),
    );
    // 120 s is longer than maxRetryDelayMs (60 s by default): the call fails at once.
    const error = await countAvailable(client()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(120_000);
  });
});
