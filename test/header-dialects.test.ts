// Rate-limit headers in every dialect a gateway may send, through the public
// API against a loopback service: a budget the client can read is followed,
// and headers it cannot use leave it as it is with none (reactive, at full
// concurrency, holding only after a 429), never one request at a time.
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryQuotaStore, PetsClient } from '../src/index.js';
import { DIALECTS, type DialectName, startDialectServer } from './helpers/dialect-server.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function clientFor(url: string, warnings: string[] = []) {
  return new PetsClient({
    apiKey: 'sk_dialects',
    baseUrl: url,
    quotaStore: new MemoryQuotaStore(),
    logger: {
      error: () => {},
      warn: (line) => warnings.push(line),
      info: () => {},
      debug: () => {},
    },
  });
}

async function serve(dialect: DialectName, limit: number, windowMs: number) {
  const server = await startDialectServer({
    dialect: DIALECTS[dialect],
    limit,
    windowMs,
    delayMs: 20,
  });
  closers.push(server.close);
  return server;
}

describe('a large budget, in whatever form the headers give it', () => {
  it.each([
    ['none', undefined],
    ['reset in seconds until', /X-RateLimit-Reset "\d+" was read as seconds until the reset/],
    ['reset in milliseconds', /X-RateLimit-Reset "\d+" was read as a Unix time in milliseconds/],
    ['reset missing', /could not be used: X-RateLimit-Reset missing.*holds calls only after a 429/],
    ['remaining missing', /could not be used: X-RateLimit-Remaining missing/],
    ['reset "soon"', /could not be used: X-RateLimit-Reset "soon" \(not a number\)/],
    ['reset fractional', undefined],
    ['interface', undefined],
    ['draft-11 RateLimit', undefined],
    ['draft-06 RateLimit-*', undefined],
  ] as const)('%s: 50 calls go out together, not one at a time', async (dialect, warning) => {
    const server = await serve(dialect, 100_000, 60_000);
    const warnings: string[] = [];
    const client = clientFor(server.url, warnings);
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 50 }, () => client.listPets()));
    }
    expect(server.stats.requests).toBe(150);
    expect(server.stats.mostInFlight).toBeGreaterThanOrEqual(40);
    if (warning) expect(warnings).toEqual([expect.stringMatching(warning)]);
    else expect(warnings).toEqual([]);
  });
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
