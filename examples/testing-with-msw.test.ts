/**
 * Testing your own code against the SDK's msw handlers: no hand-written
 * fixtures, and the mock behaves like the service (401, 404, 429, limits…).
 */
import { PetsClient } from '@animal-store/sdk';
import { createHandlers } from '@animal-store/sdk/mock';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

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
});
afterAll(() => server.close());

// baseUrl: where the handlers answer, whatever ANIMAL_STORE_BASE_URL says.
const client = () =>
  new PetsClient({ apiKey: 'test-key', baseUrl: handlers.service.baseUrl, maxRetries: 0 });

describe('countAvailable', () => {
  it('counts the available animals', async () => {
    expect(await countAvailable(client())).toBe(1);
  });

  it('sees animals the app created', async () => {
    await client().createPet({ name: 'Kit', categoryId: 2, status: 'available' });
    expect(await countAvailable(client())).toBe(2);
  });

  it('surfaces an outage as a ServerError', async () => {
    server.use(
      http.get('https://api.animal-store.example/v1/pets', () =>
        HttpResponse.text('down', { status: 503 }),
      ),
    );
    await expect(countAvailable(client())).rejects.toMatchObject({
      name: 'ServerError',
      status: 503,
    });
  });
});
