import { describe, expect, it } from 'vitest';
import { PetsClient, RateLimitError, type RetryInfo } from '../src/index.js';
import { SAMPLE_PETS, startMockServer } from '../src/mock/index.js';

describe('loopback mock server', () => {
  it('holds concurrent calls within the budget, so none meets a 429 (real clock)', async () => {
    // Put the mock's clock one second before the end of its minute window.
    // Ahead of the local clock by two seconds at least, so that the client
    // corrects by the mock's Date (a smaller skew is taken for rounding).
    let offset = 59_000 - (Date.now() % 60_000);
    if (offset < 2_000) offset += 60_000;
    const mock = await startMockServer({
      plan: 'enterprise',
      limits: { perMinute: 1 },
      seed: SAMPLE_PETS,
      now: () => Date.now() + offset,
    });
    try {
      const retries: RetryInfo[] = [];
      const statuses: number[] = [];
      const sdk = new PetsClient({
        apiKey: 'k',
        baseUrl: mock.url,
        onRetry: (i) => retries.push(i),
        logLevel: 'off',
        fetch: async (request) => {
          const response = await fetch(request);
          statuses.push(response.status);
          return response;
        },
      });
      const started = Date.now();
      const results = await Promise.all([sdk.listPets(), sdk.listPets()]);
      expect(results).toEqual([SAMPLE_PETS, SAMPLE_PETS]);
      expect(statuses).toEqual([200, 200]);
      // The second waits for the first's headers, which say none remain until the reset.
      expect(retries.map((r) => r.reason)).toEqual(['budget-unknown', 'budget-exhausted']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      await mock.close();
    }
  });

  it('turns an exhausted daily limit into a fast RateLimitError without another request', async () => {
    const mock = await startMockServer({ limits: { perMinute: 5, perDay: 1 } });
    try {
      const sdk = new PetsClient({ apiKey: 'k', baseUrl: mock.url, logLevel: 'off' });
      await sdk.listPets();
      const started = Date.now();
      const error = await sdk.listPets().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitError);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(sdk.rateLimit?.remaining).toBe(0);
    } finally {
      await mock.close();
    }
  });

  it('answers CORS preflights and exposes the rate-limit headers', async () => {
    const mock = await startMockServer();
    try {
      const preflight = await fetch(`${mock.url}/pets`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://localhost:5173',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      const response = await fetch(`${mock.url}/pets`, { headers: { authorization: 'Bearer k' } });
      expect(response.headers.get('access-control-expose-headers')).toMatch(
        /x-ratelimit-remaining/,
      );
      expect(mock.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    } finally {
      await mock.close();
    }
  });

  it('listens on the port it is given', async () => {
    const first = await startMockServer({ port: 0 });
    const port = Number(new URL(first.url).port);
    await first.close();
    const second = await startMockServer({ port });
    try {
      expect(second.url).toBe(`http://127.0.0.1:${port}/v1`);
    } finally {
      await second.close();
    }
  });
});
