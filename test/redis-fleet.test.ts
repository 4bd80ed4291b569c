// A fleet of real processes sharing one key through a real Redis: processes
// killed mid-request or frozen before sending, and Redis Cluster and
// Sentinel failovers. Each worker runs the built SDK (`npm run build`).
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FleetService,
  type FleetWorker,
  killMidRequest,
  startFleet,
  startFleetService,
  type WorkerReport,
} from './helpers/fleet.js';
import { type RedisServer, startRedis } from './helpers/redis-server.js';
import { startCluster, startSentinels } from './helpers/redis-topologies.js';
import { sleep } from './helpers/sleep.js';

let keys = 0;
const freshKey = () => `fleet-${process.pid}-${Date.now()}-${++keys}`;

/** The first window boundary at least `ms` from now. */
function boundaryAfter(ms: number, windowMs: number): number {
  return Math.ceil((Date.now() + ms) / windowMs) * windowMs;
}

/** Requests the service counted per window, and those it refused with 429. */
function tally(service: FleetService) {
  const perWindow = new Map<string, number>();
  for (const { window, status } of service.arrivals) {
    if (status !== 429) perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
  }
  return { perWindow, limited: service.arrivals.filter((a) => a.status === 429) };
}

const reports = (workers: FleetWorker[]) => Promise.all(workers.map((w) => w.report));

/** Every call served: none failed, none held longer than a hold may last and one attempt takes. */
function expectServed(
  report: WorkerReport | undefined,
  maxRetryDelayMs: number,
  timeoutMs: number,
) {
  expect(report).toBeDefined();
  expect(report!.failed, JSON.stringify(report!.reasons)).toEqual({});
  expect(report!.ok).toBeGreaterThan(0);
  expect(report!.longestMs).toBeLessThanOrEqual(maxRetryDelayMs + timeoutMs);
}

describe('a fleet whose processes die or freeze', () => {
  let redis: RedisServer;
  let admin: ReturnType<typeof createClient>;
  beforeAll(async () => {
    redis = await startRedis();
    admin = createClient({ url: redis.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.quit();
    await redis?.stop();
  });

  it('gives a killed process’s budget back within about 2 s, wherever in a window it died', async () => {
    const LIMIT = 8;
    const WINDOW_MS = 2_000;
    const service = await startFleetService(LIMIT, WINDOW_MS);
    const start = Date.now() + 1_500;
    const end = start + 13_000;
    const apiKey = freshKey();
    const workers = startFleet(6, service, {
      apiKey,
      start,
      end,
      concurrency: 3,
      timeoutMs: 10_000,
      maxRetryDelayMs: 20_000,
      redis: (client) => ({ client, url: redis.url }),
    });
    // Three workers die, each with a request the service never answers: the
    // first of a window (the one that learns its budget), one in the middle,
    // and the last.
    const { kills, watched } = killMidRequest(
      service,
      workers,
      admin,
      [
        { nth: 1, after: start + 2_500 },
        { nth: LIMIT / 2, after: start + 6_000 },
        { nth: LIMIT, after: start + 8_500 },
      ],
      end,
    );
    const ended = await reports(workers);
    await watched;
    const killed = new Set(kills.map((k) => k.worker));
    await service.close();

    expect(kills.map((k) => k.nth).sort()).toEqual([1, LIMIT / 2, LIMIT].sort());
    for (const kill of kills) {
      expect(kill.leases.length).toBeGreaterThan(0);
      // Leases live 2 s after their last renewal, renewed once a second.
      expect(kill.backMs).toBeLessThanOrEqual(2_600);
    }
    const { perWindow, limited } = tally(service);
    expect(limited).toEqual([]);
    for (const count of perWindow.values()) expect(count).toBeLessThanOrEqual(LIMIT);
    expect(killed.size).toBe(3);
    for (const [i, report] of ended.entries())
      if (!killed.has(i)) expectServed(report, 20_000, 10_000);
    // The rest of the fleet never stopped for long: the longest silence after a kill.
    const after = service.arrivals.filter((a) => a.at > kills[0]!.at).map((a) => a.at);
    const silence = Math.max(...after.slice(1).map((at, i) => at - after[i]!));
    expect(silence).toBeLessThan(3_500);
  }, 40_000);

  it('never sends on a turn whose lease lapsed while its process was frozen', async () => {
    const LIMIT = 6;
    const WINDOW_MS = 5_000;
    const service = await startFleetService(LIMIT, WINDOW_MS);
    const boundary = boundaryAfter(2_500, WINDOW_MS);
    const start = boundary - 1_000;
    const end = boundary + 2 * WINDOW_MS;
    const apiKey = freshKey();
    const workers = startFleet(4, service, {
      apiKey,
      start,
      end,
      concurrency: 4,
      timeoutMs: 5_000,
      maxRetryDelayMs: 20_000,
      redis: (client) => ({ client, url: redis.url }),
      // Worker 0 freezes as its first request of the new window is about to leave.
      each: (i) => (i === 0 ? { stopAfterMs: 1_100 } : {}),
    });
    await workers[0]!.stopped;
    const frozenAt = Date.now();
    // Its lease lapses 2 s on; the others take the turn meanwhile.
    await sleep(3_500);
    workers[0]!.child.kill('SIGCONT');
    const ended = await reports(workers);
    await service.close();

    const { perWindow, limited } = tally(service);
    expect(limited, JSON.stringify(service.arrivals)).toEqual([]);
    for (const count of perWindow.values()) expect(count).toBeLessThanOrEqual(LIMIT);
    // The window it froze in was spent whole by the others, its turn included.
    const frozenWindow = service.arrivals.find((a) => a.at >= frozenAt - 50)?.window;
    expect(perWindow.get(frozenWindow!)).toBe(LIMIT);
    for (const report of ended) expectServed(report, 20_000, 5_000);
  }, 40_000);
});

/**
 * Runs a fleet of 4 workers (2 on node-redis, 2 on ioredis) for `durationMs`,
 * failing Redis over 3 s in; the 429s the service answered, by when.
 */
async function fleetThroughFailover(
  redis: (client: 'node-redis' | 'ioredis') => object,
  failover: () => Promise<void>,
  durationMs: number,
) {
  const LIMIT = 8;
  const WINDOW_MS = 2_000;
  const MAX_RETRY_DELAY_MS = 10_000;
  const service = await startFleetService(LIMIT, WINDOW_MS);
  const start = Date.now() + 2_000;
  const end = start + durationMs;
  const apiKey = freshKey();
  const workers = startFleet(4, service, {
    apiKey,
    start,
    end,
    concurrency: 3,
    timeoutMs: 5_000,
    maxRetryDelayMs: MAX_RETRY_DELAY_MS,
    redis,
  });
  await sleep(start - Date.now() + 3_000);
  const failing = Date.now();
  await failover();
  const failedOver = Date.now();
  const ended = await reports(workers);
  await service.close();
  const { perWindow, limited } = tally(service);
  for (const count of perWindow.values()) expect(count).toBeLessThanOrEqual(LIMIT);
  // No call lost, failed or held past its maxRetryDelayMs.
  for (const report of ended) expectServed(report, MAX_RETRY_DELAY_MS, 5_000);
  const logs = workers.map((w, i) => `${i}: ${w.log.join('')}`).join('\n');
  return {
    limited,
    why: `failover ${failing}..${failedOver}: ${JSON.stringify(limited)}\n${logs}`,
  };
}

describe('a fleet on a real Redis Cluster (3 masters, 3 replicas)', () => {
  it('gets no 429 and loses no call while the master of its slot fails over', async () => {
    const cluster = await startCluster();
    try {
      const { limited, why } = await fleetThroughFailover(
        (client) => ({ client, cluster: cluster.nodes }),
        // Every key of a budget lives in one slot: its state names it.
        () => cluster.failover('*:state'),
        10_000,
      );
      expect(limited, why).toEqual([]);
    } finally {
      await cluster.stop();
    }
  }, 60_000);
});

describe('a fleet on Redis Sentinel (a master, a replica, three Sentinels)', () => {
  it('gets no 429 and loses no call when the master dies and the replica takes over', async () => {
    const sentinels = await startSentinels();
    try {
      const { limited, why } = await fleetThroughFailover(
        (client) => ({
          client,
          sentinel: { name: sentinels.name, sentinels: sentinels.sentinels },
        }),
        () => sentinels.failover(),
        12_000,
      );
      expect(limited, why).toEqual([]);
    } finally {
      await sentinels.stop();
    }
  }, 60_000);
});
