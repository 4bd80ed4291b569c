import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PetsClient, type RetryInfo } from '../src/index.js';
import { createHandlers } from '../src/mock/index.js';
import { today } from './helpers/fake-time.js';

// Users fake time in their own tests; the mock's clock must follow.
const handlers = createHandlers({ plan: 'enterprise', limits: { perMinute: 1 } });
const server = setupServer(...handlers);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  vi.useRealTimers();
  server.events.removeAllListeners();
  handlers.service.reset();
});
afterAll(() => server.close());

describe('the msw mock under vitest’s default fake timers', () => {
  it('follows the faked clock, so the client waits out the window in fake time', async () => {
    vi.useFakeTimers({ now: today(12, 0, 30) });
    const retries: RetryInfo[] = [];
    let sent = 0;
    const statuses: number[] = [];
    server.events.on('request:start', () => {
      sent++;
    });
    server.events.on('response:mocked', ({ response }) => {
      statuses.push(response.status);
    });
    const client = new PetsClient({
      apiKey: 'sk_fake_timers',
      onRetry: (i) => retries.push(i),
      logLevel: 'off',
    });
    await client.listPets();
    expect(client.rateLimit).toEqual({
      limit: 1,
      remaining: 0,
      resetAt: new Date(today(12, 1, 0)),
    });
    const second = client.listPets();
    const third = client.listPets();
    const settled = Promise.allSettled([second, third]);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(sent).toBe(1);
    await vi.advanceTimersByTimeAsync(61_000);
    const results = await settled;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    // Held within the budget (one a minute), never sent into a 429.
    expect(statuses).toEqual([200, 200, 200]);
    expect(retries.map((r) => r.reason)).toEqual([
      'budget-exhausted', // both held until the window resets
      'budget-exhausted',
      'budget-unknown', // then one goes first in the new window
      'budget-exhausted', // and it took that window's only request
    ]);
  });
});
