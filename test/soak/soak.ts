/**
 * Load and soak: N calls (default 10,000) with 100 in flight against the
 * loopback mock, 10% of requests faulted (4% 429, 3% 503, 3% socket resets).
 * Checks that every call ends with a value or a typed error, that no animal is
 * created twice, that no request arrives inside a window a 429 closed, and that
 * the heap returns to within 10% of its size before the run. Then, as the
 * key's only user with no faults injected, 1,000 calls with 100 in flight
 * against a budget of 250 requests a second: the service must answer no 429.
 * The process's resident memory must stay under 256 MiB all along.
 *
 *   node --expose-gc --import tsx test/soak/soak.ts [--calls 10000]
 *
 * Prints `soak: N passed, N failed` (checks) and exits 1 on any failure.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { AnimalStoreError, MemoryQuotaStore, PetsClient } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { send, toRequest } from '../../src/mock/server.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '10000' } } });
const CALLS = Number(values.calls);
const IN_FLIGHT = 100;
const RETRY_AFTER_MS = 200;

let seed = 20261122;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

const service = createMockService({
  plan: 'enterprise',
  limits: { perMinute: 10_000_000, perDay: 10_000_000 },
  seed: [],
});
// A window opens when a 429 reaches the client and closes when the service
// allowed the next request; every request the client dispatches is timed.
const closedWindows: { from: number; to: number }[] = [];
const dispatched: number[] = [];
let origin = '';
// The key's only user, on a budget that binds: nothing faulted.
const BUDGET_KEY = 'sk_soak_budget';
const budgetService = createMockService({
  plan: 'enterprise',
  limits: { perMinute: 250, perDay: 10_000_000, windowMs: 1000 },
  seed: Array.from({ length: 50 }, (_, i) => ({ name: `seed-${i}`, categoryId: 1 })),
});
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  if (req.headers.authorization === `Bearer ${BUDGET_KEY}`) {
    void toRequest(req, origin)
      .then(budgetService.handle)
      .then((response) => send(response, res));
    return;
  }
  const at = Date.now();
  const roll = random();
  if (roll < 0.03) {
    req.socket.destroy();
    return;
  }
  if (roll < 0.1) {
    req.resume();
    if (roll < 0.07) {
      res.writeHead(429, {
        'content-type': 'application/json',
        'retry-after': String(RETRY_AFTER_MS / 1000),
        'x-allowed-from': String(at + RETRY_AFTER_MS),
      });
      res.end(JSON.stringify({ code: 'rate_limited', message: 'slow down', status: 429 }));
    } else {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html>503</html>');
    }
    return;
  }
  void toRequest(req, origin)
    .then(service.handle)
    .then((response) => send(response, res));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const baseUrl = `${origin}/v1`;

const timedFetch = async (url: string, init: RequestInit) => {
  const request = new Request(url, init);
  dispatched.push(Date.now());
  const response = await fetch(request);
  if (response.status === 429) {
    closedWindows.push({ from: Date.now(), to: Number(response.headers.get('x-allowed-from')) });
  }
  return response;
};
const client = new PetsClient({
  apiKey: 'sk_soak_0123456789',
  baseUrl,
  fetch: timedFetch,
  maxRetries: 2,
  timeoutMs: 5000,
  logLevel: 'off',
  deprecationWarnings: false,
});
const gc = (globalThis as { gc?: () => void }).gc;
// Finalizers (undici's, for its Requests' signals) run between turns of the
// event loop: collect across several turns before reading the heap.
const heap = async () => {
  for (let i = 0; i < 5; i++) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
};

const outcomes = { ok: 0, typed: 0, other: 0 };
async function batch(count: number, prefix: string, sdk = client) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const op = i % 3;
      try {
        if (op === 0) await sdk.listPets({ limit: 5 });
        else if (op === 1) await sdk.createPet({ name: `${prefix}-${i}`, categoryId: 1 });
        else await sdk.getPet(1 + (i % 50));
        outcomes.ok++;
      } catch (error) {
        if (error instanceof AnimalStoreError) outcomes.typed++;
        else outcomes.other++;
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

// The memory ceiling: the process's resident size, sampled all through the run.
const CEILING_MIB = 256;
let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);

await batch(Math.min(1000, CALLS), 'warmup');
const before = await heap();
const started = Date.now();
outcomes.ok = outcomes.typed = outcomes.other = 0;
dispatched.length = 0;
closedWindows.length = 0;
await batch(CALLS, 'soak');
const seconds = (Date.now() - started) / 1000;
const names = service.pets.map((p) => p.name).filter((n) => n.startsWith('soak-'));
const created = names.length;
const duplicates = created - new Set(names).size;
const intrusions = dispatched.filter((t) =>
  closedWindows.some((w) => t > w.from && t < w.to),
).length;
const windows = closedWindows.length;
// What the test itself kept (the store, the timings) is released before the
// heap is read again: what remains is the client's.
service.reset();
names.length = 0;
dispatched.length = 0;
closedWindows.length = 0;
const after = await heap();

const budgetStatuses: number[] = [];
const budgetClient = new PetsClient({
  apiKey: BUDGET_KEY,
  baseUrl,
  fetch: async (url: string, init: RequestInit) => {
    const request = new Request(url, init);
    const response = await fetch(request);
    budgetStatuses.push(response.status);
    return response;
  },
  maxRetries: 2,
  logLevel: 'off',
  deprecationWarnings: false,
});
const soakOutcomes = { ...outcomes };
const budgetStarted = Date.now();
outcomes.ok = outcomes.typed = outcomes.other = 0;
const BUDGET_CALLS = 1000;
await batch(BUDGET_CALLS, 'budget', budgetClient);
const budgetSeconds = (Date.now() - budgetStarted) / 1000;
const limited = budgetStatuses.filter((status) => status === 429).length;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
server.close();
server.closeAllConnections();
const growth = (after - before) / before;

// Many keys in a cooldown at once (a proxy for many tenants, each answered 429 for an hour): every
// one is kept (about 0.9 KB a key, for as long as its cooldown lasts).
const COOLING_KEYS = 20_000;
const cooling = new MemoryQuotaStore();
gc?.();
const coolingBefore = process.memoryUsage().heapUsed;
for (let i = 0; i < COOLING_KEYS; i++) {
  const admission = await cooling.admit(`tenant-${i}`);
  if ('lease' in admission) {
    await cooling.observe(`tenant-${i}`, admission.lease, { status: 429, cooldownMs: 3_600_000 });
  }
}
gc?.();
const perKey = (process.memoryUsage().heapUsed - coolingBefore) / COOLING_KEYS;
let held = 0;
for (let i = 0; i < COOLING_KEYS; i += 97) {
  const admission = await cooling.admit(`tenant-${i}`);
  if ('reason' in admission && admission.reason === 'cooldown') held++;
}
const checks: [string, boolean][] = [
  [
    `${COOLING_KEYS} keys in an hour's cooldown: each still held (${held} of ${Math.ceil(COOLING_KEYS / 97)} asked), ${perKey.toFixed(0)} bytes a key${gc ? ' (at most 1,200)' : ', no --expose-gc: not checked'}`,
    held === Math.ceil(COOLING_KEYS / 97) && (!gc || perKey <= 1200),
  ],
  [
    `every call ended: ${soakOutcomes.ok} values + ${soakOutcomes.typed} typed errors of ${CALLS}`,
    soakOutcomes.ok + soakOutcomes.typed === CALLS && soakOutcomes.other === 0,
  ],
  [
    // 7% of requests are faulted and each call has two retries: most end with their value.
    `most calls got their value: ${soakOutcomes.ok} of ${CALLS} (at least 90%)`,
    soakOutcomes.ok >= CALLS * 0.9,
  ],
  [`no animal created twice (${created} created, ${duplicates} duplicates)`, duplicates === 0],
  [
    // Scattered 429s beside stated windows: the key goes back to the windows' pace after each.
    `recovered from each 429 at the windows' pace: ${CALLS} calls in ${seconds.toFixed(1)} s (at most 120 s)`,
    seconds <= 120,
  ],
  [
    `no request sent inside a window a 429 closed (${windows} windows, ${intrusions} intrusions)`,
    intrusions === 0,
  ],
  [
    `as the key's only user, ${BUDGET_CALLS} calls on a budget of 250/s: ${outcomes.ok} values in ${budgetSeconds.toFixed(1)} s, ${limited} answered 429`,
    limited === 0 && outcomes.ok === BUDGET_CALLS,
  ],
  [
    `resident memory stayed under ${CEILING_MIB} MiB (peak ${(peakRss / 2 ** 20).toFixed(0)} MiB)`,
    peakRss < CEILING_MIB * 2 ** 20,
  ],
  [
    `heap back within 10% (${(before / 2 ** 20).toFixed(1)} MiB → ${(after / 2 ** 20).toFixed(1)} MiB, ${(growth * 100).toFixed(1)}%${gc ? '' : ', no --expose-gc: not checked'})`,
    !gc || growth <= 0.1,
  ],
];
console.log(`soak of ${CALLS} calls, ${IN_FLIGHT} in flight, in ${seconds.toFixed(1)} s`);
for (const [label, ok] of checks) console.log(`  ${ok ? 'PASS' : 'FAIL'} ${label}`);
const failed = checks.filter(([, ok]) => !ok).length;
console.log(`soak: ${checks.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
