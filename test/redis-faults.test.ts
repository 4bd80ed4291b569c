// A fleet of real processes sharing one key through a real Redis that
// misbehaves: every worker reaches it through a TCP proxy of our own on
// loopback that delays, cuts (packets dropped, or connections reset and
// refused) or survives a Redis restarted empty. Whatever Redis does, the
// service sees no 429 and no window over its limit, no call fails, and the
// fleet sends again within a window of Redis's return. With equal demand,
// turns go round. Each worker runs the built SDK (`npm run build`).
import { describe, expect, it } from 'vitest';
import { FAULTS, type FaultRun, runFaultFleet } from './helpers/fleet-faults.js';

const LIMIT = 10;
const WINDOW_MS = 2_000;

// A process's turn may be granted by a reply the fault delayed: the bound on silence allows for it.
const DELAYED_MS: Partial<Record<keyof typeof FAULTS, number>> = {
  'every Redis reply delayed 0–400 ms': 400,
};

function expectSafe(run: FaultRun, limit = LIMIT, delayedMs = 0) {
  const why = `${JSON.stringify({ ...run, arrivals: undefined, log: undefined })}\n${run.log}`;
  expect(run.limited, why).toBe(0);
  expect(run.mostInAWindow, why).toBeLessThanOrEqual(limit);
  expect(run.failed, why).toEqual({});
  // Nobody stops sending for longer than a window once Redis is whole again.
  expect(run.silenceAfterMs, why).toBeLessThanOrEqual(WINDOW_MS + 1_000 + delayedMs);
  // And every process sends again within that long, the one cut off included.
  expect(run.backAfterMs, why).toBeLessThanOrEqual(WINDOW_MS + 1_000 + delayedMs);
}

const faults: Array<keyof typeof FAULTS> = [
  'every Redis reply delayed 0–400 ms',
  'one worker partitioned from Redis for 6 s (packets dropped)',
  'one worker partitioned for 6 s (connections reset and refused)',
  'every worker partitioned for 6 s (packets dropped)',
  "every worker's connections to Redis dropped silently by the network for 6 s",
  'Redis SIGKILLed, restarted empty 1 s later',
];

describe('a fleet of 4 processes, 4 calls in flight each, 10 requests per 2 s, when Redis', () => {
  it.each(faults)(
    '%s: no 429, no call lost, sending again within a window',
    async (name) => {
      const run = await runFaultFleet({
        workers: 4,
        limit: LIMIT,
        windowMs: WINDOW_MS,
        concurrency: 4,
        durationMs: 12_000,
        fault: FAULTS[name],
      });
      expectSafe(run, LIMIT, DELAYED_MS[name]);
      expect(run.completed.every((n) => n > 0)).toBe(true);
      // A connection the network dropped is replaced; one behind a slow or cut-off Redis is not.
      const reconnected = run.log.match(/the client reconnects/g)?.length ?? 0;
      if (name.includes('dropped silently')) expect(reconnected, run.log).toBeGreaterThanOrEqual(4);
      if (/delayed|partitioned/.test(name)) expect(reconnected, run.log).toBe(0);
    },
    40_000,
  );
});

describe('turns that go round, with equal demand', () => {
  // About 15 requests a worker in 12 s (20 with 8 workers): one turn more or
  // less moves the ratio by 0.07.
  it.each([
    [4, 10, 12_000],
    [8, 20, 16_000],
  ])(
    '%i processes at %i requests per 2 s for %i ms: the busiest sends at most 1.25 × the least busy',
    async (workers, limit, durationMs) => {
      const run = await runFaultFleet({
        workers,
        limit,
        windowMs: WINDOW_MS,
        concurrency: 4,
        durationMs,
      });
      expectSafe(run, limit);
      expect(run.goodput).toBeGreaterThanOrEqual(0.95);
      expect(run.fairness, JSON.stringify(run.shares)).toBeLessThanOrEqual(1.25);
    },
    40_000,
  );
});
