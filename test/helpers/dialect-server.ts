import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the server knows when it answers one request. */
export interface WindowState {
  /** The rate-limit window's limit, what is left after this request, and its end (epoch ms). */
  readonly limit: number;
  readonly remaining: number;
  readonly resetAtMs: number;
  readonly now: number;
}

/** The rate-limit headers a dialect writes for one answer. */
export type Dialect = (state: WindowState) => Record<string, string>;

const until = ({ resetAtMs, now }: WindowState) => Math.max(0, Math.ceil((resetAtMs - now) / 1000));

/** Ways servers and gateways write a budget, usable or not. */
export const DIALECTS = {
  none: () => ({}),
  interface: (s) => ({
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-remaining': String(s.remaining),
    'x-ratelimit-reset': String(Math.ceil(s.resetAtMs / 1000)),
  }),
  'reset in seconds until': (s) => ({
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-remaining': String(s.remaining),
    'x-ratelimit-reset': String(until(s)),
  }),
  'reset in milliseconds': (s) => ({
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-remaining': String(s.remaining),
    'x-ratelimit-reset': String(s.resetAtMs),
  }),
  'reset missing': (s) => ({
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-remaining': String(s.remaining),
  }),
  'remaining missing': (s) => ({
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-reset': String(Math.ceil(s.resetAtMs / 1000)),
  }),
  'reset "soon"': (s) => ({
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-remaining': String(s.remaining),
    'x-ratelimit-reset': 'soon',
  }),
  'reset fractional': (s) => ({
    'x-ratelimit-limit': String(s.limit),
    'x-ratelimit-remaining': String(s.remaining),
    'x-ratelimit-reset': `${Math.ceil(s.resetAtMs / 1000)}.5`,
  }),
  'draft-11 RateLimit': (s) => ({
    ratelimit: `"default";r=${s.remaining};t=${until(s)}`,
    'ratelimit-policy': `"default";q=${s.limit};w=${Math.ceil((s.resetAtMs - s.now) / 1000)}`,
  }),
  'draft-06 RateLimit-*': (s) => ({
    'ratelimit-limit': String(s.limit),
    'ratelimit-remaining': String(s.remaining),
    'ratelimit-reset': String(until(s)),
  }),
} satisfies Record<string, Dialect>;

export type DialectName = keyof typeof DIALECTS;

/**
 * A loopback service that answers `GET /v1/pets` after `delayMs` with an
 * empty list, counting `limit` requests per `windowMs` window (aligned to its
 * clock) and answering 429 past them, with the budget in `dialect`. It keeps
 * the most requests it had in flight at once and how many came per window.
 */
export async function startDialectServer(options: {
  dialect: Dialect;
  limit: number;
  windowMs: number;
  delayMs: number;
  /** This request's delay instead of `delayMs` (the n-th request is n). */
  delayFor?: (n: number) => number;
}) {
  const { dialect, limit, windowMs, delayMs, delayFor } = options;
  const stats = { inFlight: 0, mostInFlight: 0, requests: 0, tooMany: 0 };
  const perWindow = new Map<number, number>();
  const server = createServer((req, res) => {
    const now = Date.now();
    const start = Math.floor(now / windowMs) * windowMs;
    const count = (perWindow.get(start) ?? 0) + 1;
    perWindow.set(start, count);
    stats.requests++;
    stats.inFlight++;
    stats.mostInFlight = Math.max(stats.mostInFlight, stats.inFlight);
    const state = {
      limit,
      remaining: Math.max(0, limit - count),
      resetAtMs: start + windowMs,
      now,
    };
    const over = count > limit;
    if (over) stats.tooMany++;
    const n = stats.requests;
    setTimeout(() => {
      stats.inFlight--;
      res.writeHead(over ? 429 : 200, {
        'content-type': 'application/json',
        ...dialect(state),
        ...(over && { 'retry-after': String(until(state)) }),
      });
      res.end(
        over ? JSON.stringify({ code: 'rate_limited', message: 'slow down', status: 429 }) : '[]',
      );
    }, delayFor?.(n) ?? delayMs);
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats,
    /** The most requests that arrived in one window. */
    mostPerWindow: () => Math.max(0, ...perWindow.values()),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
