// Worker threads of one process: each loads the built SDK with a default store of its own, and a
// 429's cooldown reaches the others (as it reaches every client of one thread). Real threads, a
// loopback server, the real clock.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect, it } from 'vitest';

const DIST = new URL('../dist/index.js', import.meta.url).href;
// A thread with a client of the default store: 'call' makes one listPets, answered with its outcome.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.dist).then(({ PetsClient }) => {
  const client = new PetsClient({ apiKey: 'sk_threads_0123456789', baseUrl: workerData.baseUrl, logLevel: 'off', maxRetries: 0 });
  parentPort.on('message', () => client.listPets().then(() => 'ok', (e) => e.name).then((r) => parentPort.postMessage(r)));
  parentPort.postMessage('ready');
});`;

const arrivals: number[] = [];
const server = createServer((request, response) => {
  arrivals.push(Date.now());
  request.resume();
  if (arrivals.length === 1) response.writeHead(429, { 'retry-after': '1' }).end();
  else response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
});
let baseUrl = '';
const threads: Worker[] = [];

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await Promise.all(threads.map((thread) => thread.terminate()));
  server.close();
});

async function thread(): Promise<(message?: string) => Promise<unknown>> {
  const worker = new Worker(THREAD, { eval: true, workerData: { dist: DIST, baseUrl } });
  threads.push(worker);
  const [ready] = await once(worker, 'message');
  expect(ready).toBe('ready');
  return async () => {
    worker.postMessage('call');
    const [outcome] = await once(worker, 'message');
    return outcome;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("holds every thread of the process through one thread's 429, one started after it too", async () => {
  const [first, second] = [await thread(), await thread()];
  await sleep(100); // the threads have found each other
  expect(await first()).toBe('RateLimitError');
  const later = (async () => {
    const call = await thread();
    await sleep(100); // told the cooldown under way once it said hello
    return call();
  })();
  expect(await Promise.all([second(), later])).toEqual(['ok', 'ok']);
  expect(arrivals).toHaveLength(3);
  // Retry-After: 1 from the 429's arrival: neither thread sent within it.
  for (const at of arrivals.slice(1)) expect(at - arrivals[0]!).toBeGreaterThanOrEqual(990);
});

it('leaves a process free to exit once its clients are done', () => {
  const script = `import(${JSON.stringify(DIST)}).then(({ PetsClient }) => { new PetsClient({ apiKey: 'sk_exit_0123456789', baseUrl: 'http://127.0.0.1:9/v1' }); })`;
  expect(() => execFileSync(process.execPath, ['-e', script], { timeout: 10_000 })).not.toThrow();
});

it('leaves a process free to exit once its calls are done, long before their timeoutMs', () => {
  const body = JSON.stringify({ id: 1, name: 'Rex', categoryId: 3 });
  const script = `import(${JSON.stringify(DIST)}).then(async ({ PetsClient }) => {
    const fetch = async () => new Response(${JSON.stringify(body)}, { headers: { 'content-type': 'application/json' } });
    const client = new PetsClient({ apiKey: 'sk_exit_0123456789', baseUrl: 'http://127.0.0.1:9/v1', fetch, timeoutMs: 60_000 });
    for (let i = 0; i < 3; i++) await client.getPet(1);
  })`;
  expect(() => execFileSync(process.execPath, ['-e', script], { timeout: 10_000 })).not.toThrow();
});

it('takes only cooldowns from the channel, at most a day long and for at most 1,000 keys', async () => {
  const { threadsOf } = await import('../src/quota/threads.js');
  const cooldowns = new Map<string, number>();
  threadsOf(cooldowns);
  const other = new BroadcastChannel('@animal-store/sdk/cooldowns@1');
  try {
    const now = Date.now();
    for (const junk of [
      null,
      'x',
      {},
      [1, 2],
      ['b', 'soon'],
      ['x'.repeat(101), now + 5000],
      ['past', now - 1],
    ])
      other.postMessage(junk);
    other.postMessage(['far', now + 10 * 86_400_000]);
    for (let i = 0; i < 1500; i++) other.postMessage([`bucket-${i}`, now + 60_000]);
    await sleep(300);
    expect(cooldowns.size).toBe(1000);
    expect(cooldowns.get('far')).toBeLessThanOrEqual(Date.now() + 86_400_000);
    expect([...cooldowns.keys()].filter((name) => !/^(far|bucket-\d+)$/.test(name))).toEqual([]);
  } finally {
    other.close();
  }
});
