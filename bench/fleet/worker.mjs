// One worker of the fleet benchmark: `node bench/fleet/worker.mjs CONFIG_JSON`.
// Runs CONCURRENCY call loops until END (epoch ms), then prints one JSON line:
// successes, failures by error name, admission latencies, the longest call
// and the longest answer of the quota store.
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { MemoryQuotaStore, PetsClient } from '../../dist/index.js';

const config = JSON.parse(process.argv[2]);
const calls = new AsyncLocalStorage();
let quotaStore;
let redis;
if (config.store === 'redis') {
  const { createClient } = await import('redis');
  const { RedisQuotaStore } = await import('../../dist/redis.js');
  redis = createClient({ url: config.redisUrl, socket: { reconnectStrategy: 100 } });
  redis.on('error', () => undefined);
  await redis.connect();
  const quiet = { error: (line) => console.error(line), warn: (line) => console.error(line) };
  quotaStore = new RedisQuotaStore({ client: redis, logger: quiet });
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
const countingFetch = (request) => {
  const call = calls.getStore();
  if (call && call.sentAt === undefined) {
    call.sentAt = performance.now();
    admissions.push(call.sentAt - call.startedAt);
  }
  return fetch(request);
};
const client = new PetsClient({
  apiKey: config.apiKey,
  baseUrl: config.url,
  fetch: countingFetch,
  quotaStore,
  timeoutMs: config.timeoutMs,
  maxRetryDelayMs: 30_000,
  logLevel: 'off',
});

let ok = 0;
let longestMs = 0;
const failed = {};
await new Promise((resolve) => setTimeout(resolve, Math.max(0, config.start - Date.now())));
await Promise.all(
  Array.from({ length: config.concurrency }, async () => {
    while (Date.now() < config.end) {
      const call = { startedAt: performance.now(), sentAt: undefined };
      try {
        await calls.run(call, () => client.listPets({ limit: 1 }));
        ok++;
      } catch (error) {
        failed[error.name] = (failed[error.name] ?? 0) + 1;
      }
      longestMs = Math.max(longestMs, performance.now() - call.startedAt);
    }
  }),
);
console.log(JSON.stringify({ ok, failed, admissions, longestMs, longestStoreMs }));
await quotaStore.close?.();
await redis?.quit().catch(() => undefined);
process.exit(0);
