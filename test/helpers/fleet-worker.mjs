// One process of a fleet sharing a key, for the fleet tests and benchmark:
// `node test/helpers/fleet-worker.mjs CONFIG_JSON`. Runs `concurrency` call
// loops of the built SDK from `start` to `end` (epoch ms), then prints one
// JSON line: calls completed within the run, failures by error name,
// admission latencies, the longest call and the longest answer of the store.
//
// CONFIG: url, apiKey, store ('memory' | 'redis'), concurrency, start, end,
// timeoutMs, maxRetryDelayMs?, worker? (sent as x-worker), stopAfterMs? (the
// first request about to leave after start + stopAfterMs stops the process
// with SIGSTOP, after a "SIGSTOP" line on stderr), and for Redis:
// redis: { client: 'node-redis' | 'ioredis', url? | cluster?: [{ host, port }]
// | sentinel?: { name, sentinels: [{ host, port }] } }.
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { MemoryQuotaStore, PetsClient } from '../../dist/index.js';

const config = JSON.parse(process.argv[2]);
const calls = new AsyncLocalStorage();

async function connect({ client, url, cluster, sentinel }) {
  if (client === 'ioredis') {
    const { Cluster, Redis } = await import('ioredis');
    const redis = cluster
      ? new Cluster(cluster)
      : sentinel
        ? new Redis({ sentinels: sentinel.sentinels, name: sentinel.name })
        : new Redis(url);
    redis.on('error', () => undefined);
    return { redis, close: () => redis.disconnect() };
  }
  const { createClient, createCluster, createSentinel } = await import('redis');
  const redis = cluster
    ? createCluster({
        rootNodes: cluster.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      })
    : sentinel
      ? createSentinel({ name: sentinel.name, sentinelRootNodes: sentinel.sentinels })
      : createClient({ url, socket: { reconnectStrategy: 100 } });
  redis.on('error', () => undefined);
  await redis.connect();
  return { redis, close: () => (redis.close ?? redis.quit).call(redis) };
}

let quotaStore;
let connection;
if (config.store === 'redis') {
  const { RedisQuotaStore } = await import('../../dist/redis.js');
  connection = await connect(config.redis ?? { client: 'node-redis', url: config.redisUrl });
  const quiet = { error: (line) => console.error(line), warn: (line) => console.error(line) };
  quotaStore = new RedisQuotaStore({ client: connection.redis, logger: quiet });
} else {
  quotaStore = new MemoryQuotaStore();
}

// The longest any one answer of the store took (admit, observe or release).
let longestStoreMs = 0;
for (const method of ['admit', 'observe', 'release']) {
  const original = quotaStore[method].bind(quotaStore);
  quotaStore[method] = async (...args) => {
    const started = performance.now();
    try {
      return await original(...args);
    } finally {
      longestStoreMs = Math.max(longestStoreMs, performance.now() - started);
    }
  };
}

const admissions = [];
const countingFetch = (url, init) => {
  const call = calls.getStore();
  if (call && call.sentAt === undefined) {
    call.sentAt = performance.now();
    admissions.push(call.sentAt - call.startedAt);
  }
  return fetch(url, init);
};
let stopped = config.stopAfterMs === undefined;
const client = new PetsClient({
  apiKey: config.apiKey,
  baseUrl: config.url,
  fetch: countingFetch,
  quotaStore,
  timeoutMs: config.timeoutMs,
  maxRetryDelayMs: config.maxRetryDelayMs ?? 30_000,
  logLevel: 'off',
  ...(config.worker !== undefined && { headers: { 'x-worker': String(config.worker) } }),
  ...(config.stopAfterMs !== undefined && {
    hooks: {
      // Runs once the request's turn is taken, just before it leaves.
      beforeRequest() {
        if (stopped || Date.now() < config.start + config.stopAfterMs) return;
        stopped = true;
        console.error('SIGSTOP');
        process.kill(process.pid, 'SIGSTOP');
      },
    },
  }),
});

let ok = 0;
let longestMs = 0;
const failed = {};
// The first message of each kind of failure, so that a failing run says why.
const reasons = {};
await new Promise((resolve) => setTimeout(resolve, Math.max(0, config.start - Date.now())));
// Later than start when the machine was slow to boot this process.
const begunAt = Date.now();
// Calls still waiting at the end are dropped: only what completed within the run counts.
const over = new AbortController();
setTimeout(() => over.abort(), Math.max(0, config.end - Date.now()));
await Promise.all(
  Array.from({ length: config.concurrency }, async () => {
    while (Date.now() < config.end) {
      const call = { startedAt: performance.now(), sentAt: undefined };
      try {
        await calls.run(call, () => client.listPets({ limit: 1 }, { signal: over.signal }));
        ok++;
      } catch (error) {
        if (over.signal.aborted) break;
        failed[error.name] = (failed[error.name] ?? 0) + 1;
        reasons[error.name] ??= String(error.message).slice(0, 400);
      }
      longestMs = Math.max(longestMs, performance.now() - call.startedAt);
    }
  }),
);
console.log(
  JSON.stringify({ ok, failed, reasons, admissions, longestMs, longestStoreMs, begunAt }),
);
await quotaStore.close?.();
await Promise.resolve(connection?.close()).catch(() => undefined);
process.exit(0);
