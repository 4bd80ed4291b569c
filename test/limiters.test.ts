// Smoke test of test/helpers/limiters.ts: each real limiter, 3 per second,
// takes 5 sequential requests; the server's counts and the headers each one
// is documented to send are checked. No client here: only raw fetch.
import { describe, expect, it } from 'vitest';
import {
  LIMITER_KINDS,
  type LimiterKind,
  nginxAvailable,
  startLimiter,
} from './helpers/limiters.js';

interface Expected {
  ok: number;
  tooMany: number;
  /** Headers on every answer, 200 and 429 alike. */
  always: string[];
  /** Headers on a 429 only. */
  on429: string[];
  /** A check of the 200's header values (the first answer: 3 per 1 s, 2 left). */
  values?: (headers: Headers) => void;
  /** A check of the first 429's header values. */
  values429?: (headers: Headers) => void;
}

const LEGACY = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const DRAFT_6 = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

const EXPECTED: Record<LimiterKind, Expected> = {
  'express-legacy': {
    ok: 3,
    tooMany: 2,
    always: LEGACY,
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('x-ratelimit-limit')).toBe('3');
      expect(h.get('x-ratelimit-remaining')).toBe('2');
      // A Unix time in seconds, not seconds left.
      expect(Number(h.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 5);
    },
  },
  'express-draft-6': {
    ok: 3,
    tooMany: 2,
    always: ['ratelimit-policy', ...DRAFT_6],
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('ratelimit-policy')).toBe('3;w=1');
      expect(h.get('ratelimit-remaining')).toBe('2');
      expect(h.get('ratelimit-reset')).toBe('1');
    },
  },
  'express-draft-7': {
    ok: 3,
    tooMany: 2,
    always: ['ratelimit', 'ratelimit-policy'],
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('ratelimit')).toBe('limit=3, remaining=2, reset=1');
      expect(h.get('ratelimit-policy')).toBe('3;w=1');
    },
  },
  'express-draft-8': {
    ok: 3,
    tooMany: 2,
    always: ['ratelimit', 'ratelimit-policy'],
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('ratelimit')).toBe('"3-in-1sec"; r=2; t=1');
      expect(h.get('ratelimit-policy')).toMatch(/^"3-in-1sec"; q=3; w=1; pk=:[A-Za-z0-9+/=]+:$/);
    },
  },
  // A looser limiter (12 per 5 s) with X-RateLimit-* in front of the 3 per second.
  'express-stacked': {
    ok: 3,
    tooMany: 2,
    always: ['ratelimit', 'ratelimit-policy', ...LEGACY],
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('ratelimit')).toBe('limit=3, remaining=2, reset=1');
      expect(h.get('x-ratelimit-limit')).toBe('12');
      expect(h.get('x-ratelimit-remaining')).toBe('11');
    },
  },
  // The 3 per second in front of a looser one (12 per 4 s) in the same dialect, which writes over it.
  'express-hidden': {
    ok: 3,
    tooMany: 2,
    always: ['ratelimit-policy', ...DRAFT_6],
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('ratelimit-policy')).toBe('12;w=4');
      expect(h.get('ratelimit-remaining')).toBe('11');
    },
    values429: (h) => {
      expect(h.get('ratelimit-policy')).toBe('3;w=1');
      expect(h.get('ratelimit-remaining')).toBe('0');
    },
  },
  fastify: {
    ok: 3,
    tooMany: 2,
    always: LEGACY,
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('x-ratelimit-remaining')).toBe('2');
      // Seconds left, unlike express-rate-limit's Unix time.
      expect(h.get('x-ratelimit-reset')).toBe('1');
    },
  },
  'fastify-draft': {
    ok: 3,
    tooMany: 2,
    always: DRAFT_6,
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('ratelimit-remaining')).toBe('2');
      expect(h.get('ratelimit-reset')).toBe('1');
      expect(h.has('ratelimit-policy')).toBe(false);
    },
  },
  'fastify-retry-after': { ok: 3, tooMany: 2, always: [], on429: ['retry-after'] },
  hono: {
    ok: 3,
    tooMany: 2,
    always: ['ratelimit-policy', ...DRAFT_6],
    on429: ['retry-after'],
    values: (h) => {
      expect(h.get('ratelimit-policy')).toBe('3;w=1');
      expect(h.get('ratelimit-remaining')).toBe('2');
    },
  },
  // A leaky bucket at 3 r/s with burst=3 nodelay: the first request and 3 of
  // burst pass at once, the 5th (well within 1/3 s) is rejected.
  nginx: { ok: 4, tooMany: 1, always: [], on429: [] },
};

const RATE_LIMIT_HEADER = /ratelimit|retry-after/i;

const haveNginx = nginxAvailable();
if (!haveNginx && !process.env.CI) {
  console.warn(
    'test/limiters.test.ts: nginx is not installed (/usr/sbin/nginx or on PATH), so its case is skipped; under CI it fails instead.',
  );
}

describe('real rate limiters on loopback (smoke)', () => {
  for (const kind of LIMITER_KINDS) {
    const skip = kind === 'nginx' && !haveNginx && !process.env.CI;
    const title = skip
      ? `${kind}: skipped, nginx is not installed (/usr/sbin/nginx or on PATH; required when CI is set)`
      : `${kind}: 3 per second, 5 sequential requests`;

    it.skipIf(skip)(title, async () => {
      const expected = EXPECTED[kind];
      const limiter = await startLimiter(kind, { limit: 3, windowMs: 1000 });
      try {
        const answers: { status: number; headers: Headers; body: string }[] = [];
        for (let i = 0; i < 5; i++) {
          const response = await fetch(`${limiter.url}/pets`);
          answers.push({
            status: response.status,
            headers: response.headers,
            body: await response.text(),
          });
        }

        expect(answers.map((a) => a.status)).toEqual([
          ...Array<number>(expected.ok).fill(200),
          ...Array<number>(expected.tooMany).fill(429),
        ]);
        expect(await limiter.stats()).toMatchObject({
          requests: 5,
          ok: expected.ok,
          tooMany: expected.tooMany,
        });
        expect(await limiter.mostPerWindow(1000)).toBe(expected.ok);

        const first = answers[0]!;
        expect(first.body).toBe('[]');
        expect(first.headers.get('content-type')).toMatch(/^application\/json/);
        for (const { status, headers } of answers) {
          const names = [...headers.keys()].filter((name) => RATE_LIMIT_HEADER.test(name));
          const wanted = status === 429 ? [...expected.always, ...expected.on429] : expected.always;
          expect(names.sort(), `headers of a ${status}`).toEqual([...wanted].sort());
        }
        expected.values?.(first.headers);
        expected.values429?.(answers[expected.ok]!.headers);
      } finally {
        await limiter.close();
      }
    });
  }
});
