/**
 * Real limiters: 20 concurrent `listPets` against each third-party rate
 * limiter of test/helpers/limiters.ts (5 requests per 2 s, one budget for
 * everyone), one client with a store of its own per limiter.
 *
 *   npm run build && npx tsx bench/limiters.ts [path-to-sdk-entry]
 *
 * The entry defaults to ../dist/index.js beside this file; a path given is
 * taken from the current directory. Columns: the 429s the server sent, the
 * calls that rejected (by error class), the time until every call settled,
 * the least time 20 calls can take at 5 per 2 s ((ceil(20/5) - 1) * 2 s: the
 * first 5 at once, the last 5 three windows later), and the most accepted
 * requests the server saw in any 2 s (sliding; see mostPerWindow). Each call
 * is aborted after 120 s so that a run always ends; an abort counts as a
 * failed call. nginx's row is left out, said so, when nginx is not installed.
 */

import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import {
  LIMITER_KINDS,
  type LimiterKind,
  nginxAvailable,
  startLimiter,
} from '../test/helpers/limiters.js';

type Sdk = typeof import('../src/index.js');

const LIMIT = 5;
const WINDOW_MS = 2000;
const CALLS = 20;
const CALL_TIMEOUT_MS = 120_000;

const SENDS: Record<LimiterKind, string> = {
  'express-legacy': 'X-RateLimit-Limit/Remaining/Reset (Unix s); 429: + Retry-After',
  'express-draft-6':
    'RateLimit-Policy, RateLimit-Limit/Remaining/Reset (s left); 429: + Retry-After',
  'express-draft-7': 'RateLimit-Policy, RateLimit: limit, remaining, reset; 429: + Retry-After',
  'express-draft-8':
    'RateLimit: "5-in-2sec"; r; t + RateLimit-Policy: q; w; pk; 429: + Retry-After',
  'express-stacked':
    'X-RateLimit-* of a looser limiter (20 per 10 s), then draft-7 RateLimit of the 5 per 2 s; 429: + Retry-After',
  'express-hidden':
    "the 5 per 2 s (draft-6) behind whose headers a looser one's (20 per 8 s) are written; 429: the 5 per 2 s's, + Retry-After",
  fastify: 'x-ratelimit-limit/remaining/reset (s left); 429: + retry-after',
  'fastify-draft': 'ratelimit-limit/remaining/reset (s left); 429: + retry-after',
  'fastify-retry-after': 'nothing; 429: retry-after only',
  hono: 'RateLimit-Policy, RateLimit-Limit/Remaining/Reset (draft-6); 429: + Retry-After',
  nginx: 'nothing (429: HTML page, no Retry-After)',
};

const least = (Math.ceil(CALLS / LIMIT) - 1) * (WINDOW_MS / 1000);

function errorName(error: unknown): string {
  if (error instanceof Error) return error.constructor.name || error.name;
  return typeof error;
}

async function measure(sdk: Sdk, kind: LimiterKind): Promise<string> {
  const limiter = await startLimiter(kind, { limit: LIMIT, windowMs: WINDOW_MS });
  try {
    const client = new sdk.PetsClient({
      apiKey: 'sk_bench',
      baseUrl: limiter.url,
      quotaStore: new sdk.MemoryQuotaStore(),
      logLevel: 'off',
    });
    const started = performance.now();
    const settled = await Promise.allSettled(
      Array.from({ length: CALLS }, () =>
        client.listPets({}, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const failures = new Map<string, number>();
    for (const result of settled) {
      if (result.status === 'rejected') {
        const name = errorName(result.reason);
        failures.set(name, (failures.get(name) ?? 0) + 1);
      }
    }
    const failed = [...failures.values()].reduce((a, b) => a + b, 0);
    const names = [...failures].map(([name, count]) => `${name} ×${count}`).join(', ');
    const stats = await limiter.stats();
    const most = await limiter.mostPerWindow(WINDOW_MS);
    return `| ${kind} | ${SENDS[kind]} | ${stats.tooMany} | ${failed}${names ? ` (${names})` : ''} | ${seconds.toFixed(1)} | ${least} | ${most} |`;
  } finally {
    await limiter.close();
  }
}

const entry = process.argv[2]
  ? pathToFileURL(resolve(process.argv[2])).href
  : new URL('../dist/index.js', import.meta.url).href;
const sdk = (await import(entry)) as Sdk;

console.log(
  `${CALLS} concurrent listPets, limit ${LIMIT} per ${WINDOW_MS / 1000} s, one budget for everyone; SDK: ${entry}\n`,
);
console.log(
  '| limiter | what it sends | 429s | calls failed | time (s) | least (s) | most per window |',
);
console.log('|---|---|---|---|---|---|---|');
for (const kind of LIMITER_KINDS) {
  if (kind === 'nginx' && !nginxAvailable()) {
    console.log(
      `| nginx | ${SENDS.nginx} | – | not run: nginx is not installed | – | ${least} | – |`,
    );
    continue;
  }
  console.log(await measure(sdk, kind));
}
