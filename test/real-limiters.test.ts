// The client behind rate limiters nobody here wrote, on loopback: 20
// concurrent calls on a budget of 5 per 2 s. A limiter that states its budget
// (in any form) is followed without a 429; one that states nothing (nginx's
// limit_req) meets the client reactive (the contract): the first burst gets
// its 429s, the budget is learnt from them with a few more, and every call
// still gets its data.
import { describe, expect, it } from 'vitest';
import { MemoryQuotaStore, PetsClient } from '../src/index.js';
import {
  LIMITER_KINDS,
  type LimiterKind,
  nginxAvailable,
  startLimiter,
} from './helpers/limiters.js';

/** What the client did, in order: each request sent and each answer, by attempt. */
type Event = { kind: 'sent' | 'answered'; id: number; status?: number };

/** `count` concurrent calls through `kind`, at 5 per `windowMs`: what the calls and the limiter saw. */
async function twentyCalls(kind: LimiterKind, count = 20, windowMs = 2000) {
  const limiter = await startLimiter(kind, { limit: 5, windowMs });
  try {
    const events: Event[] = [];
    let next = 0;
    const client = new PetsClient({
      apiKey: 'sk_real_limiters',
      baseUrl: limiter.url,
      quotaStore: new MemoryQuotaStore(),
      logLevel: 'off',
      maxRetries: 20,
      fetch: async (input, init) => {
        const id = next++;
        events.push({ kind: 'sent', id });
        const response = await fetch(input, init);
        events.push({ kind: 'answered', id, status: response.status });
        return response;
      },
    });
    const results = await Promise.allSettled(
      Array.from({ length: count }, () => client.listPets()),
    );
    return { stats: await limiter.stats(), results, events };
  } finally {
    await limiter.close();
  }
}

/** The 429s answered to requests sent after the first 429 came back: those of later bursts. */
function after429s(events: Event[]): Event[] {
  const refused = events.filter((e) => e.kind === 'answered' && e.status === 429);
  const first = events.indexOf(refused[0]!);
  const next = events.find((e, i) => i > first && e.kind === 'sent')?.id ?? 0;
  return refused.filter((e) => e.id >= next);
}

/** After each 429, the next request is sent alone: nothing more before its answer. */
function oneFirstAfterEach429(events: Event[]): void {
  for (const [at, event] of events.entries()) {
    if (event.kind !== 'answered' || event.status !== 429) continue;
    const rest = events.slice(at + 1);
    const first = rest.findIndex((e) => e.kind === 'sent');
    if (first < 0) continue;
    const firstId = rest[first]!.id;
    const answered = rest.findIndex((e) => e.kind === 'answered' && e.id === firstId);
    const second = rest.findIndex((e, i) => i > first && e.kind === 'sent');
    if (second >= 0) expect(second).toBeGreaterThan(answered);
  }
}

describe.concurrent('limiters that state the budget', () => {
  const saysNothing = ['nginx', 'fastify-retry-after', 'express-hidden'];
  it.each(LIMITER_KINDS.filter((kind) => !saysNothing.includes(kind)))(
    '%s: 20 calls, all resolved, not one 429',
    async (kind) => {
      const { stats, results } = await twentyCalls(kind);
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      // The limiter's own count: nothing was sent past its budget.
      expect(stats.tooMany).toBe(0);
      expect(stats.ok).toBe(20);
    },
    30_000,
  );
});

describe('a limiter that states nothing (nginx limit_req, no Retry-After)', () => {
  const available = nginxAvailable();
  if (!available && process.env.CI) throw new Error('nginx is not installed; CI needs nginx-light');

  it.skipIf(!available)(
    'is met reactive, then learnt with at most 5 × 429 after the first burst: every call resolves with its data, one request first after each 429',
    async () => {
      const { stats, results, events } = await twentyCalls('nginx');
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(results.every((r) => r.status === 'fulfilled' && Array.isArray(r.value))).toBe(true);
      expect(stats.ok).toBe(20);
      // Reactive: after the first answer, the rest went at once, before the first 429 came back.
      const first429 = events.findIndex((e) => e.kind === 'answered' && e.status === 429);
      expect(events.slice(0, first429).filter((e) => e.kind === 'sent').length).toBe(20);
      expect(after429s(events).length).toBeLessThanOrEqual(5);
      oneFirstAfterEach429(events);
    },
    40_000,
  );
});

describe('a limiter that says only when to come back (Retry-After on its 429s, nothing else)', () => {
  it('is learnt as one that says nothing: 40 calls at 5 per second meet at most 8 × 429 after the first burst, not one every other window', async () => {
    const { stats, results, events } = await twentyCalls('fastify-retry-after', 40, 1000);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(stats.ok).toBe(40);
    expect(after429s(events).length).toBeLessThanOrEqual(8);
    oneFirstAfterEach429(events);
  }, 40_000);
});

// Met only in the first burst, which what the client knew allowed; from then on the window the
// 429s state starts over after each end.
describe('a limit stated only on its 429s (a looser limiter behind it writes its headers over it)', () => {
  it('is met in the first burst alone: 40 calls at 5 per second, all resolved, no 429 after it', async () => {
    const { stats, results, events } = await twentyCalls('express-hidden', 40, 1000);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(stats.ok).toBe(40);
    expect(stats.tooMany).toBeGreaterThan(0);
    expect(after429s(events)).toEqual([]);
    oneFirstAfterEach429(events);
  }, 40_000);
});
