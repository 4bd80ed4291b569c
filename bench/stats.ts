// Small statistics shared by the benchmarks.
import { performance } from 'node:perf_hooks';

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

export const p99 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]!;
};

/** `xs` rotated by `n`: each round starts with another client, so drift falls on all alike. */
export const rotate = <T>(xs: T[], n: number) => xs.map((_, i) => xs[(i + n) % xs.length]!);

/** µs per call of `run`, over `n` calls in a row. */
export async function perCall(run: () => Promise<unknown>, n: number): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) await run();
  return ((performance.now() - t) * 1000) / n;
}

/**
 * A fetch that answers every request at once with one pet, and a budget of
 * `limit` (one spent) that resets an hour after this run's clock: what the
 * stub benchmarks measure the client's own cost against.
 */
export function stubPetFetch(limit = 60) {
  const body = JSON.stringify({ id: 1, name: 'Rex', categoryId: 3, status: 'available' });
  const headers = {
    'content-type': 'application/json',
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(limit - 1),
    'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 3600),
  };
  return async (_input: unknown, _init?: unknown) => new Response(body, { status: 200, headers });
}
