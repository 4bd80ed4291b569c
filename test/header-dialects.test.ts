// Rate-limit headers in every dialect a gateway may send, through the public
// API against a loopback service: a budget the client can read is followed,
// and headers it cannot use leave it as it is with none: the budget is
// learnt, and a service without limits is met at full concurrency within a
// few round trips.
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryQuotaStore, PetsClient } from '../src/index.js';
import { DIALECTS, type DialectName, startDialectServer } from './helpers/dialect-server.js';
import { recordingLogger } from './helpers/logger.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function clientFor(url: string) {
  const { logger, lines: warnings } = recordingLogger(['warn']);
  const client = new PetsClient({
    apiKey: 'sk_dialects',
    baseUrl: url,
    quotaStore: new MemoryQuotaStore(),
    logger,
  });
  return Object.assign(client, { warnings });
}

async function serve(
  dialect: DialectName,
  limit: number,
  windowMs: number,
  delayFor?: (n: number) => number,
) {
  const server = await startDialectServer({
    dialect: DIALECTS[dialect],
    limit,
    windowMs,
    delayMs: 20,
    ...(delayFor && { delayFor }),
  });
  closers.push(server.close);
  return server;
}

describe('a large budget, in whatever form the headers give it', () => {
  it.each([
    ['none', undefined],
    ['reset in seconds until', /X-RateLimit-Reset "\d+" was read as seconds until the reset/],
    ['reset in milliseconds', /X-RateLimit-Reset "\d+" was read as a Unix time in milliseconds/],
    ['reset missing', /could not be used: X-RateLimit-Reset missing.*learns the budget instead/],
    ['remaining missing', /could not be used: X-RateLimit-Remaining missing/],
    ['reset "soon"', /could not be used: X-RateLimit-Reset "soon" \(not a number\)/],
    ['reset fractional', undefined],
    ['interface', undefined],
    ['draft-11 RateLimit', undefined],
    ['draft-06 RateLimit-*', undefined],
  ] as const)(
    '%s: 50 calls go out together by the third burst, not one at a time',
    async (dialect, warning) => {
      // The third burst's answers take 100 ms, so that its 50 calls overlap on
      // a loaded machine too (at 20 ms, a CI run saw 36 of 50 at once).
      const server = await serve(dialect, 100_000, 60_000, (n) => (n > 100 ? 100 : 20));

      const client = clientFor(server.url);
      const { warnings } = client;
      for (let round = 0; round < 3; round++) {
        await Promise.all(Array.from({ length: 50 }, () => client.listPets()));
      }
      expect(server.stats.requests).toBe(150);
      expect(server.stats.mostInFlight).toBeGreaterThanOrEqual(40);
      if (warning) expect(warnings).toEqual([expect.stringMatching(warning)]);
      else expect(warnings).toEqual([]);
    },
  );
});

describe('a budget of 5 per 2-second window', () => {
  it.each(['interface', 'draft-11 RateLimit', 'draft-06 RateLimit-*'] as const)(
    'in %s headers: 20 concurrent calls, never more than 5 in a window, no 429',
    async (dialect) => {
      const server = await serve(dialect, 5, 2000);
      const client = clientFor(server.url);
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => client.listPets()));
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(server.stats.tooMany).toBe(0);
      expect(server.stats.requests).toBe(20);
      expect(server.mostPerWindow()).toBeLessThanOrEqual(5);
    },
    40_000,
  );
});

describe('budgets a hostile or odd server states', () => {
  it('keeps a late response from loosening a budget whose reset is seconds-until', async () => {
    // Five a minute; the second request's answer (4 left) comes after the
    // third's and fourth's (3 and 2 left).
    const start = Date.now();
    let count = 0;
    const server = await startDialectServer({
      dialect: (s) => ({
        'x-ratelimit-limit': String(s.limit),
        'x-ratelimit-remaining': String(s.remaining),
        'x-ratelimit-reset': String(Math.ceil((start + 60_000 - s.now) / 1000)),
      }),
      limit: 5,
      windowMs: 3_600_000,
      delayMs: 20,
      delayFor: () => (++count === 2 ? 2500 : 20),
    });
    closers.push(server.close);
    const client = new PetsClient({
      apiKey: 'sk_dialects',
      baseUrl: server.url,
      quotaStore: new MemoryQuotaStore(),
      logLevel: 'off',
      // A hold until the window's reset fails at once instead of waiting a minute.
      maxRetryDelayMs: 5000,
      maxRetries: 0,
    });
    await client.listPets();
    // The four left go together; the first of them is answered last.
    await Promise.all(Array.from({ length: 4 }, () => client.listPets()));
    const later = await Promise.allSettled(Array.from({ length: 3 }, () => client.listPets()));
    expect(server.stats.tooMany).toBe(0);
    expect(server.stats.requests).toBe(5);
    expect(later.every((c) => c.status === 'rejected')).toBe(true);
  }, 20_000);

  it('follows a full token bucket whose reset is now, at full concurrency', async () => {
    const bucket = await startDialectServer({
      dialect: (s) => ({
        'x-ratelimit-limit': '100',
        'x-ratelimit-remaining': '100',
        'x-ratelimit-reset': String(Math.floor(s.now / 1000)),
      }),
      limit: 1_000_000,
      windowMs: 60_000,
      delayMs: 100,
    });
    closers.push(bucket.close);
    const client = clientFor(bucket.url);
    await Promise.all(Array.from({ length: 50 }, () => client.listPets()));
    // Such a window lasts a second: on a loaded machine the burst can straddle
    // two, each opened by one request alone. One at a time would be 1 or 2.
    expect(bucket.stats.mostInFlight).toBeGreaterThanOrEqual(25);
  });

  it('holds on nothing left whose reset is more than a day away, instead of sending into 429s', async () => {
    const server = await startDialectServer({
      dialect: () => ({
        ratelimit: '"min";r=50;t=30, "month";r=0;t=1000000',
        'ratelimit-policy': '"min";q=60;w=60, "month";q=10000;w=2592000',
      }),
      limit: 1,
      windowMs: 3_600_000,
      delayMs: 20,
    });
    closers.push(server.close);
    const client = clientFor(server.url);
    await client.listPets();
    const later = await Promise.allSettled(Array.from({ length: 10 }, () => client.listPets()));
    expect(server.stats.requests).toBe(1);
    expect(later.every((r) => r.status === 'rejected')).toBe(true);
  });

  it('keeps a key with quotes and backslashes out of the warn line that quotes a header', async () => {
    const key = 'sk_live_ABCDEFGHIJ\\KLMN"OP1234';
    const server = await startDialectServer({
      dialect: () => ({ ratelimit: key }),
      limit: 1_000_000,
      windowMs: 60_000,
      delayMs: 1,
    });
    closers.push(server.close);
    const { logger, lines: warnings } = recordingLogger(['warn']);
    const client = new PetsClient({
      apiKey: key,
      baseUrl: server.url,
      quotaStore: new MemoryQuotaStore(),
      logger,
    });
    await client.listPets();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('[redacted]');
    expect(warnings[0]).not.toContain('ABCDEFGHIJ');
  });
});
