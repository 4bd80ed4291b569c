// The Redis store against a real redis-server of its own (never a fake): the
// scripts' rules, the two clients, several stores standing for several
// processes, and Redis paused or gone.
import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AnimalStoreError, PetsClient, RateLimitError } from '../src/index.js';
import { startMockServer } from '../src/mock/index.js';
import type { Admission, QuotaStore } from '../src/quota/store.js';
import { type RedisClient, RedisQuotaStore, type RedisScripts } from '../src/redis/index.js';
import { startRedisProxy } from './helpers/redis-proxy.js';
import { type RedisServer, startRedis } from './helpers/redis-server.js';
import { sleep } from './helpers/sleep.js';
import { window } from './helpers/window.js';

let server: RedisServer;
let admin: Awaited<ReturnType<typeof connectNodeRedis>>;
const connectNodeRedis = (url: string) => createClient({ url }).connect();
const closers: Array<() => Promise<unknown> | unknown> = [];

beforeAll(async () => {
  server = await startRedis();
  admin = await connectNodeRedis(server.url);
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await admin?.quit();
  await server?.stop();
});

type Kind = 'node-redis' | 'ioredis';

async function clientOf(kind: Kind, url = server.url): Promise<RedisClient> {
  if (kind === 'node-redis') {
    const client = await connectNodeRedis(url);
    closers.push(() => client.quit());
    return client;
  }
  const client = new Redis(url);
  closers.push(() => client.disconnect());
  return client;
}

/** A client of `store` whose fetch records each URL and answers an empty list. */
function recordingClient(store: QuotaStore) {
  const sent: string[] = [];
  const client = new PetsClient({
    apiKey: 'sk_recording_key',
    baseUrl: 'http://127.0.0.1:9/v1',
    quotaStore: store,
    logLevel: 'off',
    fetch: async (input) => {
      sent.push(input);
      return new Response('[]');
    },
  });
  return { client, sent };
}

interface Lines {
  error: string[];
  warn: string[];
}

/** A store standing for one process. */
async function storeOf(
  kind: Kind,
  options: { prefix?: string; commandTimeoutMs?: number; url?: string } = {},
): Promise<{ store: RedisQuotaStore; lines: Lines }> {
  const lines: Lines = { error: [], warn: [] };
  const store = new RedisQuotaStore({
    client: await clientOf(kind, options.url),
    prefix: options.prefix ?? `test:${Math.random().toString(36).slice(2)}:`,
    commandTimeoutMs: options.commandTimeoutMs,
    logger: { error: (l) => lines.error.push(l), warn: (l) => lines.warn.push(l) },
  });
  closers.push(() => store.close());
  return { store, lines };
}

const BUCKET = 'b'.repeat(64);
/** A store that sent the probe and saw `report`. */
async function saw(store: RedisQuotaStore, report: ReturnType<typeof window>): Promise<void> {
  const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
  await store.observe(BUCKET, probe, { status: 200, window: report });
}

const leaseOf = (admission: Admission): string => {
  if (!('lease' in admission)) throw new Error(`held: ${JSON.stringify(admission)}`);
  return admission.lease;
};

describe.each(['node-redis', 'ioredis'] as const)('RedisQuotaStore on %s', (kind) => {
  it('adds one listener to a client however many stores share it', async () => {
    const redis = (await clientOf(kind)) as unknown as { listenerCount(event: string): number };
    const before = redis.listenerCount('ready');
    for (let i = 0; i < 20; i++) {
      const store = new RedisQuotaStore({
        client: redis as unknown as RedisClient,
        logger: { error() {}, warn() {} },
      });
      closers.push(() => store.close());
    }
    expect(redis.listenerCount('ready') - before).toBeLessThanOrEqual(1);
  });

  it("waits out a BLPOP of the app's own on the client it shares, never reconnecting it", async () => {
    const redis = await clientOf(kind);
    const lines: Lines = { error: [], warn: [] };
    const store = new RedisQuotaStore({
      client: redis,
      prefix: `t:${kind}:blpop:`,
      logger: { error: (l) => lines.error.push(l), warn: (l) => lines.warn.push(l) },
    });
    closers.push(() => store.close());
    const { client, sent } = recordingClient(store);
    await client.listPets();
    const connections = async () =>
      Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))?.[1]);
    const before = await connections();
    const popped =
      kind === 'ioredis'
        ? (redis as Redis).blpop('nothing-here', 3)
        : (redis as Awaited<ReturnType<typeof connectNodeRedis>>).blPop('nothing-here', 3);
    await sleep(50);
    const call = client.listPets();
    await expect(popped).resolves.toBeNull();
    await expect(call).resolves.toEqual([]);
    expect(sent).toHaveLength(2);
    // Redis was asked which clients are blocked once a second at most, each on a new connection.
    expect((await connections()) - before).toBeLessThanOrEqual(3);
    expect(lines.warn.join('\n')).not.toMatch(/reconnects/);
    expect(lines.warn.join('\n')).toMatch(/lists a client blocked .*a Redis client of their own/);
  });

  it("reconnects a connection the network dropped silently while another client of the app's is blocked", async () => {
    const proxy = await startRedisProxy(server.port);
    closers.push(() => proxy.close());
    const redis =
      kind === 'ioredis'
        ? new Redis(proxy.url)
        : await createClient({ url: proxy.url, socket: { reconnectStrategy: 100 } })
            .on('error', () => undefined)
            .connect();
    closers.push(() => ('destroy' in redis ? redis.destroy() : redis.disconnect()));
    const lines: Lines = { error: [], warn: [] };
    const store = new RedisQuotaStore({
      client: redis,
      prefix: `t:${kind}:dropped:`,
      logger: { error: (l) => lines.error.push(l), warn: (l) => lines.warn.push(l) },
    });
    closers.push(() => store.close());
    const { client, sent } = recordingClient(store);
    await client.listPets();
    // A job queue's worker, on a connection of its own straight to Redis, waits for a job.
    const jobs = `t:${kind}:jobs`;
    const worker = await clientOf(kind);
    closers.push(async () => {
      await admin.lPush(jobs, 'end');
      await admin.del(jobs);
    });
    const popped =
      kind === 'ioredis'
        ? (worker as Redis).blpop(jobs, 0)
        : (worker as Awaited<ReturnType<typeof connectNodeRedis>>).blPop(jobs, 0);
    popped.catch(() => undefined);
    await sleep(50);
    // The store's connection is forgotten by the network; new connections pass.
    proxy.sever();
    proxy.heal();
    const started = Date.now();
    const took = await Promise.race([
      client.listPets().then(
        () => Date.now() - started,
        () => Number.POSITIVE_INFINITY,
      ),
      sleep(5_000).then(() => Number.POSITIVE_INFINITY),
    ]);
    expect(lines.warn.join('\n')).not.toMatch(/lists a client blocked/);
    expect(lines.warn.join('\n')).toMatch(/the client reconnects/);
    expect(took).toBeLessThan(3_000);
    expect(sent).toHaveLength(2);
    await admin.lPush(jobs, 'job-1');
    expect(await popped).toEqual(
      kind === 'ioredis' ? [jobs, 'job-1'] : { key: jobs, element: 'job-1' },
    );
  });

  it('lets one probe go while the budget is unknown, for every process', async () => {
    const prefix = `t:${kind}:probe:`;
    const a = (await storeOf(kind, { prefix })).store;
    const b = (await storeOf(kind, { prefix })).store;
    const probe = leaseOf(await a.admit(BUCKET, { leaseMs: 10_000 }));
    expect(await b.admit(BUCKET, { leaseMs: 10_000 })).toEqual({ reason: 'budget-unknown' });
    expect(await a.admit(BUCKET, { leaseMs: 10_000 })).toEqual({ reason: 'budget-unknown' });
    await a.observe(BUCKET, probe, { status: 200, window: window(2) });
    // b asked first: b goes first.
    leaseOf(await b.admit(BUCKET, { leaseMs: 10_000 }));
    leaseOf(await a.admit(BUCKET, { leaseMs: 10_000 }));
    expect(await b.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      reason: 'budget-in-flight',
    });
  });

  it('never has more in flight, across processes, than the smallest window leaves', async () => {
    const prefix = `t:${kind}:inflight:`;
    const stores = await Promise.all(
      [1, 2, 3].map(async () => (await storeOf(kind, { prefix })).store),
    );
    const [first] = stores;
    const probe = leaseOf(await first!.admit(BUCKET, { leaseMs: 10_000 }));
    // A minute window with 5 left and a day window with 3 left: the day binds.
    await first!.observe(BUCKET, probe, { status: 200, window: window(5) });
    await first!.observe(BUCKET, 'none', { status: 200, window: window(3, 3_600_000, 1000, 2000) });
    const answers = await Promise.all(
      stores.flatMap((store) => [1, 2].map(() => store.admit(BUCKET, { leaseMs: 10_000 }))),
    );
    expect(answers.filter((a) => 'lease' in a)).toHaveLength(3);
    for (const held of answers.filter((a) => !('lease' in a))) {
      expect(held).toMatchObject({ reason: 'budget-in-flight' });
      expect((held as { waitMs: number }).waitMs).toBeGreaterThan(3_500_000);
    }
  });

  it('only tightens on reports out of order, and only extends a cooldown', async () => {
    const prefix = `t:${kind}:order:`;
    const { store } = await storeOf(kind, { prefix });
    const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    await store.observe(BUCKET, probe, { status: 200, window: window(2, 60_000, 60, 1000) });
    // A larger remaining for the same window, and an older window: both ignored.
    await store.observe(BUCKET, 'x', { status: 200, window: window(50, 60_000, 60, 1000) });
    await store.observe(BUCKET, 'y', { status: 200, window: window(50, 60_000, 60, 999) });
    // The last answer of the window before, whose reset is now: ignored too.
    await store.observe(BUCKET, 'v', { status: 200, window: window(0, 1000, 60, 940) });
    leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    const second = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    expect(await store.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      reason: 'budget-in-flight',
    });
    // An earlier reset still ahead is the same window said otherwise: it tightens.
    await store.observe(BUCKET, second, { status: 200, window: window(0, 59_000, 60, 999) });
    expect(await store.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      reason: 'budget-in-flight',
    });

    // A 429 asks for 5 s; a later one for 1 s does not shorten it.
    await store.observe(BUCKET, 'z', { status: 429, window: window(0), cooldownMs: 5_000 });
    await store.observe(BUCKET, 'w', { status: 429, window: window(0), cooldownMs: 1_000 });
    const held = await store.admit(BUCKET, { leaseMs: 10_000 });
    expect(held).toMatchObject({ reason: 'cooldown' });
    expect((held as { waitMs: number }).waitMs).toBeGreaterThan(4_500);
  });

  it('holds the key a little after a request that got no response, as no-response, not as a 429', async () => {
    const { store } = await storeOf(kind, { prefix: `t:${kind}:quiet:` });
    const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    await store.observe(BUCKET, probe, { status: 0, cooldownMs: 400 });
    const held = await store.admit(BUCKET, { leaseMs: 10_000 });
    expect(held).toMatchObject({ reason: 'no-response' });
    expect((held as { waitMs: number }).waitMs).toBeGreaterThan(200);
    await sleep(450);
    leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
  });

  it('counts the key’s 429s in a row for every process, until an answer sent after them', async () => {
    const prefix = `t:${kind}:strikes:`;
    const [{ store: a }, { store: b }] = await Promise.all([
      storeOf(kind, { prefix }),
      storeOf(kind, { prefix }),
    ]);
    const first = await a.admit(BUCKET, { leaseMs: 10_000 });
    expect(first).toMatchObject({ strikes: 0 });
    await a.observe(BUCKET, leaseOf(first), { status: 429, cooldownMs: 100, guessed: true });
    await sleep(150);
    // Another process's 503 does not end the count; its 429 adds to it.
    const second = await b.admit(BUCKET, { leaseMs: 10_000 });
    expect(second).toMatchObject({ strikes: 1 });
    await b.observe(BUCKET, leaseOf(second), { status: 503 });
    const third = await b.admit(BUCKET, { leaseMs: 10_000 });
    await b.observe(BUCKET, leaseOf(third), { status: 429, cooldownMs: 100, guessed: true });
    await sleep(150);
    const fourth = await a.admit(BUCKET, { leaseMs: 10_000 });
    expect(fourth).toMatchObject({ strikes: 2 });
    await a.observe(BUCKET, leaseOf(fourth), { status: 200 });
    await sleep(150);
    expect(await b.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({ strikes: 0 });
  });

  it('fails a call at once, saying to keep it open, once its owner closed the client', async () => {
    const redis =
      kind === 'node-redis' ? await connectNodeRedis(server.url) : new Redis(server.url);
    const store = new RedisQuotaStore({ client: redis, logger: { error() {}, warn() {} } });
    closers.push(() => store.close());
    const { client, sent } = recordingClient(store);
    await expect(client.listPets()).resolves.toEqual([]);
    await redis.quit();
    const started = Date.now();
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect(error).not.toBeInstanceOf(RateLimitError);
    expect((error as Error).message).toMatch(/not connected .*close it only after the last/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(sent).toHaveLength(1);
  });

  it('fails a call at once, saying why, when Redis refuses its scripts (a user without EVAL)', async () => {
    const user = `noeval-${kind}`;
    await admin.sendCommand([
      'ACL',
      'SETUSER',
      user,
      'on',
      '>pw',
      '~*',
      '&*',
      '+@all',
      '-eval',
      '-evalsha',
    ]);
    closers.push(() => admin.sendCommand(['ACL', 'DELUSER', user]));
    const url = server.url.replace('redis://', `redis://${user}:pw@`);
    const { store, lines } = await storeOf(kind, { url });
    const { client, sent } = recordingClient(store);
    const started = Date.now();
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect((error as Error).message).toMatch(/Redis refused the quota store's script \(NOPERM/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sent).toEqual([]);
    expect(lines.error).toEqual([]);
  });

  it('keeps a window stated only by 429s, to requests another window allowed, starting over', async () => {
    const { store } = await storeOf(kind, { prefix: `t:${kind}:hidden:` });
    const lease = async () => leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    const loose = (remaining: number) => window(remaining, 60_000, 100, 100);
    const limit = { ...window(0, 400, 3, 40), windowMs: 400 };
    await store.observe(BUCKET, await lease(), { status: 200, window: loose(99) });
    const burst = [await lease(), await lease(), await lease()];
    await store.observe(BUCKET, burst[0]!, { status: 200, window: loose(98) });
    await store.observe(BUCKET, burst[1]!, { status: 429, window: limit, cooldownMs: 400 });
    await store.observe(BUCKET, burst[2]!, { status: 429, window: limit, cooldownMs: 400 });
    for (let i = 0; i < 2; i++) {
      await sleep(450);
      await store.observe(BUCKET, await lease(), { status: 200, window: loose(90) });
      const two = [await lease(), await lease()];
      expect(await store.admit(BUCKET)).toMatchObject({ reason: 'budget-in-flight' });
      for (const one of two) await store.observe(BUCKET, one, { status: 200, window: loose(90) });
    }
  });

  it('grows learnt rounds back by one, up to the size a 429 met, though the 429 said how long to wait', async () => {
    const { store } = await storeOf(kind, { prefix: `t:${kind}:ceiling:` });
    const round = async (status = 200) => {
      const leases: string[] = [];
      for (let admission = await store.admit(BUCKET); 'lease' in admission; ) {
        leases.push(admission.lease);
        admission = await store.admit(BUCKET);
      }
      for (const one of leases) {
        await store.observe(BUCKET, one, status === 429 ? { status, cooldownMs: 300 } : { status });
      }
      return leases.length;
    };
    // Reactive until the 429: the probe, then a round of 16 that meets it.
    const sizes: number[] = [await round()];
    const sixteen = await Promise.all(Array.from({ length: 16 }, () => store.admit(BUCKET)));
    expect(sixteen.every((one) => 'lease' in one)).toBe(true);
    // Fifteen answered, then the 429: met at sixteen.
    for (const [i, one] of sixteen.entries()) {
      const observation = i < 15 ? { status: 200 } : { status: 429, cooldownMs: 300 };
      if ('lease' in one) await store.observe(BUCKET, one.lease, observation);
    }
    await sleep(350);
    for (let i = 0; i < 5; i++) sizes.push(await round());
    expect(sizes).toEqual([1, 1, 8, 9, 10, 11]);
  });

  it('teaches a Redis that lost a 429’s cooldown (restarted empty) the rest of it, within a renewal', async () => {
    const prefix = `t:${kind}:reteach:`;
    const { store: a } = await storeOf(kind, { prefix });
    const lease = leaseOf(await a.admit(BUCKET, { leaseMs: 10_000 }));
    await a.observe(BUCKET, lease, { status: 429, cooldownMs: 4_000 });
    await admin.flushAll();
    await sleep(1_300);
    // A process started now finds the cooldown, though it never saw the 429.
    const { store: late } = await storeOf(kind, { prefix });
    const held = await late.admit(BUCKET, { leaseMs: 10_000 });
    expect(held).toMatchObject({ reason: 'cooldown' });
    expect((held as { waitMs: number }).waitMs).toBeGreaterThan(2_000);
    expect((held as { waitMs: number }).waitMs).toBeLessThanOrEqual(4_000);
  });

  it('tells a Redis that lost a window (flushed) what it saw, to its last milliseconds: no probe into it', async () => {
    const prefix = `t:${kind}:flushed-end:`;
    const { store } = await storeOf(kind, { prefix });
    await saw(store, window(0, 200));
    await admin.flushAll();
    const held = await store.admit(BUCKET, { leaseMs: 10_000 });
    expect(held).toMatchObject({ reason: 'budget-exhausted' });
    expect((held as { waitMs: number }).waitMs).toBeLessThanOrEqual(200);
  });

  it('tells a Redis that lost a window said in seconds-until (flushed) what it saw: no probe into it', async () => {
    const prefix = `t:${kind}:flushed-approx:`;
    const { store } = await storeOf(kind, { prefix });
    await saw(store, { ...window(0, 3_000), approximate: true });
    await admin.flushAll();
    const held = await store.admit(BUCKET, { leaseMs: 10_000 });
    expect(held).toMatchObject({ reason: 'budget-exhausted' });
    expect((held as { waitMs: number }).waitMs).toBeGreaterThan(2_000);
  });

  it('takes a window said in seconds-until from what a process tells only when Redis lost the budget', async () => {
    const prefix = `t:${kind}:approx-told:`;
    const { store: knows } = await storeOf(kind, { prefix });
    await saw(knows, { ...window(5, 3_000), approximate: true });
    // Another process saw the same window spent; Redis, which lost nothing, knows it ended early.
    await admin.hDel(`${prefix}{${BUCKET}}:state`, 'w:60');
    expect(await knows.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      lease: expect.any(String),
    });
  });

  it('teaches a Redis that lost a window (flushed) the window, within a renewal', async () => {
    const prefix = `t:${kind}:flushed-renew:`;
    const { store: knows } = await storeOf(kind, { prefix });
    await saw(knows, window(1, 5_000));
    leaseOf(await knows.admit(BUCKET, { leaseMs: 10_000 }));
    await admin.flushAll();
    await sleep(1_300);
    const { store: fresh } = await storeOf(kind, { prefix });
    const held = await fresh.admit(BUCKET, { leaseMs: 10_000 });
    // The lease renewed is in flight in the window taught as spent.
    expect(held).toMatchObject({ reason: 'budget-in-flight' });
    expect((held as { waitMs: number }).waitMs).toBeGreaterThan(2_000);
  });

  it('asks the processes waiting on a budget Redis lost to tell it: one that never saw the window sends nothing into it', async () => {
    const prefix = `t:${kind}:flushed-ask:`;
    const { store: knows } = await storeOf(kind, { prefix });
    await saw(knows, window(0, 5_000));
    const unwatch = knows.watch(BUCKET, () => undefined);
    closers.push(unwatch);
    await sleep(200);
    await admin.flushAll();
    const { store: fresh } = await storeOf(kind, { prefix });
    expect(await fresh.admit(BUCKET, { leaseMs: 10_000 })).toEqual({
      reason: 'budget-unknown',
      waitMs: 250,
    });
    await sleep(250);
    const held = await fresh.admit(BUCKET, { leaseMs: 10_000 });
    expect(held).toMatchObject({ reason: 'budget-exhausted' });
    expect((held as { waitMs: number }).waitMs).toBeGreaterThan(4_000);
  });

  it('holds every request 250 ms for the answers when it asks, then lets the probe go if none came', async () => {
    const prefix = `t:${kind}:ask-unanswered:`;
    const { store } = await storeOf(kind, { prefix });
    // A subscriber that knows nothing, and so tells nothing.
    const listener = await connectNodeRedis(server.url);
    closers.push(() => listener.quit());
    await listener.subscribe(`${prefix}{${BUCKET}}:wake`, () => undefined);
    const first = await store.admit(BUCKET, { leaseMs: 10_000 });
    expect(first).toEqual({ reason: 'budget-unknown', waitMs: 250 });
    // Asked again at once (as a client does on its first hold): still waiting for the answers.
    const again = await store.admit(BUCKET, { leaseMs: 10_000 });
    expect(again).toMatchObject({ reason: 'budget-unknown' });
    expect((again as { waitMs: number }).waitMs).toBeGreaterThan(0);
    await sleep(260);
    expect(await store.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      lease: expect.any(String),
    });
  });

  it('takes a seconds-until reset that must end after the known window as a new window', async () => {
    const prefix = `t:${kind}:newer:`;
    const { store } = await storeOf(kind, { prefix });
    const approx = (remaining: number, tookMs = 0) => ({
      ...window(remaining, 3000, 10, 0),
      approximate: true,
      tookMs,
    });
    const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    await store.observe(BUCKET, probe, { status: 200, window: approx(9) });
    await sleep(2100);
    leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    // Said 2.1 s later, 2 s again, and spent: not the window known, which ends in 0.9 s.
    await store.observe(BUCKET, 'x', { status: 200, window: approx(0) });
    const held = await store.admit(BUCKET, { leaseMs: 10_000 });
    expect(held).toMatchObject({ reason: 'budget-in-flight' });
    expect((held as { waitMs: number }).waitMs).toBeGreaterThan(1_500);
  });

  it('lets the leases of a process that died lapse, counted as spent in their window', async () => {
    const prefix = `t:${kind}:lapse:`;
    const dead = (await storeOf(kind, { prefix })).store;
    const alive = (await storeOf(kind, { prefix })).store;
    const probe = leaseOf(await alive.admit(BUCKET, { leaseMs: 10_000 }));
    await alive.observe(BUCKET, probe, { status: 200, window: window(2) });
    leaseOf(await dead.admit(BUCKET, { leaseMs: 10_000 })); // never observed nor released
    await dead.close(); // renews no more, as if its process were killed
    leaseOf(await alive.admit(BUCKET, { leaseMs: 10_000 }));
    expect(await alive.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      reason: 'budget-in-flight',
    });
    // Leases live 2 s unless renewed.
    await sleep(1_500);
    expect(await alive.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      reason: 'budget-in-flight',
    });
    await sleep(600);
    // Its request may have reached the service: the window keeps it counted.
    expect(await alive.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      reason: 'budget-in-flight',
    });
    expect(await admin.zCard(`${prefix}{${BUCKET}}:leases`)).toBe(1);
    expect(await admin.hGet(`${prefix}{${BUCKET}}:state`, 'w:60')).toMatch(/^1:1000:/);
  });

  it('gives a lapsed lease’s charge back when its process releases it unsent', async () => {
    const prefix = `t:${kind}:give-back:`;
    const frozen = (await storeOf(kind, { prefix })).store;
    const alive = (await storeOf(kind, { prefix })).store;
    const probe = leaseOf(await alive.admit(BUCKET, { leaseMs: 10_000 }));
    await alive.observe(BUCKET, probe, { status: 200, window: window(1) });
    const lapsing = leaseOf(await frozen.admit(BUCKET, { leaseMs: 10_000 }));
    // Its renewals stop (as in a process frozen before sending); the lease lapses in 2 s.
    await (frozen as unknown as { close(): Promise<void> }).close();
    await sleep(2_100);
    expect(await alive.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      reason: 'budget-exhausted',
    });
    // Back, it finds the lease lapsed (holds() false) and releases it: never sent.
    const back = (await storeOf(kind, { prefix })).store;
    await back.release(BUCKET, lapsing);
    leaseOf(await alive.admit(BUCKET, { leaseMs: 10_000 }));
    // Given back once only.
    await back.release(BUCKET, lapsing);
    expect(await alive.admit(BUCKET, { leaseMs: 10_000 })).toMatchObject({
      reason: 'budget-in-flight',
    });
  });

  it('wakes the process first in line when a response frees budget', async () => {
    const prefix = `t:${kind}:wake:`;
    const a = (await storeOf(kind, { prefix })).store;
    const b = (await storeOf(kind, { prefix })).store;
    const probe = leaseOf(await a.admit(BUCKET, { leaseMs: 10_000 }));
    expect(await b.admit(BUCKET, { leaseMs: 10_000 })).toEqual({ reason: 'budget-unknown' });
    let woken = 0;
    const unwatch = b.watch(BUCKET, () => woken++);
    await sleep(100); // subscribed (and woken once, in case a message came before)
    const before = woken;
    await a.observe(BUCKET, probe, { status: 200, window: window(5) });
    await sleep(100);
    expect(woken).toBeGreaterThan(before);
    unwatch();
  });

  it('expires every key it writes, and never writes the API key', async () => {
    const prefix = `t:${kind}:ttl:`;
    const mock = await startMockServer({ limits: { perMinute: 100 } });
    closers.push(() => mock.close());
    const { store } = await storeOf(kind, { prefix });
    const apiKey = 'sk-live-never-in-redis-0123456789';
    const client = new PetsClient({
      apiKey,
      baseUrl: mock.url,
      quotaStore: store,
      logLevel: 'off',
    });
    await Promise.all([client.listPets(), client.listPets(), client.getPet(1).catch(() => 1)]);
    const keys = await admin.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).not.toContain(apiKey);
      expect(await admin.pTTL(key)).toBeGreaterThan(0);
      expect(JSON.stringify(await dump(key))).not.toContain(apiKey);
    }
  });
});

async function dump(key: string): Promise<unknown> {
  const type = await admin.type(key);
  if (type === 'hash') return admin.hGetAll(key);
  if (type === 'zset') return admin.zRange(key, 0, -1);
  return admin.get(key);
}

describe('a fleet of clients sharing a key through Redis', () => {
  it('gets no 429 where stores of their own get many', async () => {
    const mock = await startMockServer({
      plan: 'enterprise',
      limits: { perMinute: 10, perDay: 100_000, windowMs: 1_000 },
    });
    closers.push(() => mock.close());
    const prefix = `t:fleet:${Date.now()}:`;
    const statuses: number[] = [];
    const counting = async (url: string, init: RequestInit) => {
      const request = new Request(url, init);
      const response = await fetch(request);
      statuses.push(response.status);
      return response;
    };
    // Three "processes": each its own client and its own store on its own connection.
    const clients = await Promise.all(
      (['node-redis', 'ioredis', 'node-redis'] as const).map(async (kind) => {
        const { store } = await storeOf(kind, { prefix });
        return new PetsClient({
          apiKey: 'fleet-key',
          baseUrl: mock.url,
          quotaStore: store,
          fetch: counting,
          logLevel: 'off',
        });
      }),
    );
    const calls = clients.flatMap((client) =>
      Array.from({ length: 8 }, () => client.listPets({ limit: 1 })),
    );
    const results = await Promise.allSettled(calls);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    expect(statuses).toHaveLength(24);
  });
});

describe('when Redis is slow or gone', () => {
  let paused: RedisServer;
  beforeAll(async () => {
    paused = await startRedis();
  });
  afterAll(async () => {
    await paused?.stop();
  });

  it('holds every call within commandTimeoutMs while Redis does not answer, logs it once, and recovers', async () => {
    const prefix = 't:down:';
    const { store, lines } = await storeOf('node-redis', {
      prefix,
      url: paused.url,
      commandTimeoutMs: 100,
    });
    const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    await store.observe(BUCKET, probe, { status: 200, window: window(10, 60_000) });
    leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));

    paused.pause();
    try {
      const started = Date.now();
      // Nothing new is sent: what the other processes spend cannot be known.
      expect(await store.admit(BUCKET, { leaseMs: 10_000 })).toEqual({ reason: 'budget-unknown' });
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(lines.error).toHaveLength(1);
      expect(lines.error[0]).toMatch(/sends no new request until Redis answers again/);
      for (let i = 0; i < 3; i++) {
        expect(await store.admit(BUCKET, { leaseMs: 10_000 })).toEqual({
          reason: 'budget-unknown',
        });
      }
      expect(lines.error).toHaveLength(1);
    } finally {
      paused.resume();
    }
    // Redis is asked again 250 ms after it was lost.
    await sleep(300);
    leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    expect(lines.warn.join('\n')).toMatch(/Redis answers again/);
  });

  it('wakes the calls it held once Redis may be asked again, and as soon as it answers', async () => {
    const { store } = await storeOf('ioredis', {
      prefix: 't:wake-back:',
      url: paused.url,
      commandTimeoutMs: 100,
    });
    const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    await store.observe(BUCKET, probe, { status: 200, window: window(0, 60_000) });
    let woken = 0;
    const unwatch = store.watch(BUCKET, () => woken++);
    paused.pause();
    try {
      expect(await store.admit(BUCKET, { leaseMs: 10_000 })).toEqual({ reason: 'budget-unknown' });
      const before = woken;
      await sleep(400);
      // Woken to try Redis again, without any call asking.
      expect(woken).toBeGreaterThan(before);
    } finally {
      paused.resume();
    }
    await sleep(300);
    const before = woken;
    await store.admit(BUCKET, { leaseMs: 10_000 });
    // Woken by the answer itself, not by a timer.
    expect(woken).toBeGreaterThan(before);
    unwatch();
  });

  it('wakes a call it turned away before Redis may be asked again, though a timer runs ahead of the clock', async () => {
    const node = await connectNodeRedis(paused.url);
    closers.push(() => node.quit());
    let down = false;
    const scripts: RedisScripts = {
      eval: (script, keys, args) =>
        down
          ? Promise.reject(new Error('Socket closed unexpectedly'))
          : node.eval(script, { keys, arguments: args }),
    };
    const store = new RedisQuotaStore({
      client: scripts,
      prefix: 't:turned-away:',
      logger: { error: () => {}, warn: () => {} },
    });
    closers.push(() => store.close());
    await saw(store, window(5, 60_000));
    // As a held call does: asks again each time it is woken.
    let admitted: (() => void) | undefined;
    const unwatch = store.watch(BUCKET, () => {
      store
        .admit(BUCKET, { leaseMs: 10_000 })
        .then((answer) => {
          if ('lease' in answer) admitted?.();
        })
        .catch(() => {});
    });
    down = true;
    expect(await store.admit(BUCKET, { leaseMs: 10_000 })).toEqual({ reason: 'budget-unknown' });
    down = false;
    // The wall clock 20 ms behind the timers: the wake-up comes before Redis may be asked.
    const now = Date.now.bind(Date);
    const lag = vi.spyOn(Date, 'now').mockImplementation(() => now() - 20);
    try {
      const started = performance.now();
      const took = await Promise.race([
        new Promise<number>((resolve) => {
          admitted = () => resolve(performance.now() - started);
        }),
        sleep(3_000).then(() => Number.POSITIVE_INFINITY),
      ]);
      expect(took).toBeLessThan(1_000);
    } finally {
      unwatch();
      lag.mockRestore();
    }
  });

  it('teaches a Redis that restarted empty the leases still in flight', async () => {
    let redis = await startRedis();
    const proxy = await startRedisProxy(redis.port);
    closers.push(async () => {
      await proxy.close();
      await redis.stop();
    });
    const prefix = 't:restart:';
    const client = createClient({ url: proxy.url, socket: { reconnectStrategy: 100 } });
    client.on('error', () => undefined);
    await client.connect();
    const store = new RedisQuotaStore({ client, prefix, logger: { error() {}, warn() {} } });
    closers.push(async () => {
      await store.close();
      await client.quit().catch(() => undefined);
    });
    const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    await store.observe(BUCKET, probe, { status: 200, window: window(5, 60_000) });
    const inFlight = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    redis.process.kill('SIGKILL');
    redis = await startRedis();
    proxy.heal(redis.port);
    const fresh = await connectNodeRedis(redis.url);
    closers.push(() => fresh.quit());
    // Renewed within a second, into the new Redis: counted while its request is in flight.
    await sleep(1_600);
    expect(await fresh.zRange(`${prefix}{${BUCKET}}:leases`, 0, -1)).toEqual([inFlight]);
    expect(store.holds(BUCKET, inFlight)).toBe(true);
  });

  it('hands a lease Redis granted after the store stopped waiting to the next call that asks', async () => {
    const prefix = 't:spare:';
    const { store } = await storeOf('node-redis', {
      prefix,
      url: paused.url,
      commandTimeoutMs: 100,
    });
    const bucket = 'd'.repeat(64);
    let woken = 0;
    const unwatch = store.watch(bucket, () => woken++);
    paused.pause();
    try {
      expect(await store.admit(bucket, { leaseMs: 60_000 })).toEqual({ reason: 'budget-unknown' });
    } finally {
      paused.resume();
    }
    await sleep(100);
    expect(woken).toBeGreaterThan(0);
    const pausedAdmin = await connectNodeRedis(paused.url);
    closers.push(() => pausedAdmin.quit());
    const granted = await pausedAdmin.zRange(`${prefix}{${bucket}}:leases`, 0, -1);
    expect(granted).toHaveLength(1);
    // The next call takes that lease: no second one is asked of Redis.
    expect(await store.admit(bucket, { leaseMs: 60_000 })).toMatchObject({ lease: granted[0] });
    expect(await pausedAdmin.zCard(`${prefix}{${bucket}}:leases`)).toBe(1);
    unwatch();
  });

  it('takes a window this process saw, and a restarted Redis lost, as spent: no probe into it', async () => {
    let redis = await startRedis();
    const proxy = await startRedisProxy(redis.port);
    closers.push(async () => {
      await proxy.close();
      await redis.stop();
    });
    const client = createClient({ url: proxy.url, socket: { reconnectStrategy: 100 } });
    client.on('error', () => undefined);
    await client.connect();
    const store = new RedisQuotaStore({
      client,
      prefix: 't:lost-window:',
      logger: { error() {}, warn() {} },
    });
    closers.push(async () => {
      await store.close();
      await client.quit().catch(() => undefined);
    });
    const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    await store.observe(BUCKET, probe, { status: 200, window: window(0, 60_000) });
    redis.process.kill('SIGKILL');
    redis = await startRedis();
    proxy.heal(redis.port);
    let answer: Admission = { reason: 'budget-unknown' };
    for (let i = 0; i < 40 && !('waitMs' in answer); i++) {
      await sleep(100);
      answer = await store.admit(BUCKET, { leaseMs: 10_000 });
    }
    // Held until the window it saw ends, instead of a probe the service would refuse.
    expect(answer).toMatchObject({ reason: 'budget-exhausted' });
    expect((answer as { waitMs: number }).waitMs).toBeGreaterThan(50_000);
  });

  it('gives up a place in line nobody here waits for any more', async () => {
    const prefix = 't:abandoned:';
    const { store: first } = await storeOf('node-redis', { prefix });
    const { store: gaveUp } = await storeOf('ioredis', { prefix });
    const { store: waiting } = await storeOf('ioredis', { prefix });
    const probe = leaseOf(await first.admit(BUCKET, { leaseMs: 60_000 }));
    // Held at once: the call gave up at its first hold (or was aborted), no watch.
    expect(await gaveUp.admit(BUCKET, { leaseMs: 60_000 })).toEqual({ reason: 'budget-unknown' });
    const unwatch = waiting.watch(BUCKET, () => undefined);
    expect(await waiting.admit(BUCKET, { leaseMs: 60_000 })).toEqual({ reason: 'budget-unknown' });
    expect(await admin.zCard(`${prefix}{${BUCKET}}:queue`)).toBe(2);
    await sleep(2_500);
    // The probe is still in flight (renewed); only the one still waiting keeps its place.
    expect(await admin.zCard(`${prefix}{${BUCKET}}:queue`)).toBe(1);
    await first.observe(BUCKET, probe, { status: 200, window: window(5) });
    leaseOf(await waiting.admit(BUCKET, { leaseMs: 60_000 }));
    unwatch();
  });

  it('gives back a lease Redis granted after the store stopped waiting, when no call takes it', async () => {
    const prefix = 't:late:';
    const { store } = await storeOf('ioredis', { prefix, url: paused.url, commandTimeoutMs: 100 });
    paused.pause();
    try {
      expect(await store.admit('c'.repeat(64), { leaseMs: 60_000 })).toEqual({
        reason: 'budget-unknown',
      });
    } finally {
      paused.resume();
    }
    const pausedAdmin = await connectNodeRedis(paused.url);
    closers.push(() => pausedAdmin.quit());
    // Kept 250 ms for a call that asks again, then given back.
    await sleep(700);
    const leases = await pausedAdmin.zRange(`${prefix}{${'c'.repeat(64)}}:leases`, 0, -1);
    expect(leases).toEqual([]);
  });

  it('gives back a late lease quietly when the app closed its client meanwhile', async () => {
    const prefix = 't:late-closed:';
    const client = await connectNodeRedis(paused.url);
    const quiet = { error() {}, warn() {} };
    const store = new RedisQuotaStore({ client, prefix, commandTimeoutMs: 100, logger: quiet });
    closers.push(() => store.close());
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      paused.pause();
      try {
        expect(await store.admit('e'.repeat(64), { leaseMs: 60_000 })).toEqual({
          reason: 'budget-unknown',
        });
      } finally {
        paused.resume();
      }
      // The late grant comes back, then the app closes its client before it is given back.
      await sleep(50);
      await client.quit();
      await sleep(700);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });

  it('sends nothing when Redis cannot be reached at all, and fails each call after maxRetryDelayMs', async () => {
    const mock = await startMockServer({
      plan: 'enterprise',
      limits: { perMinute: 50, perDay: 100_000, windowMs: 1_000 },
    });
    closers.push(() => mock.close());
    const lines: string[] = [];
    // A Lua-capable client whose server is gone.
    const gone: RedisScripts = {
      eval: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1')),
    };
    const store = new RedisQuotaStore({
      client: gone,
      logger: { error: (l) => lines.push(l), warn: (l) => lines.push(l) },
    });
    let sent = 0;
    const client = new PetsClient({
      apiKey: 'k',
      baseUrl: mock.url,
      quotaStore: store,
      maxRetryDelayMs: 600,
      fetch: async (url: string, init: RequestInit) => {
        sent++;
        return fetch(new Request(url, init));
      },
      logLevel: 'off',
    });
    const started = Date.now();
    const calls = await Promise.allSettled([client.listPets(), client.listPets()]);
    for (const call of calls) {
      expect(call.status).toBe('rejected');
      expect((call as PromiseRejectedResult).reason).toBeInstanceOf(RateLimitError);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(sent).toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ECONNREFUSED.*sends no new request/);
  });

  it('works with any Lua-capable client given eval alone, polling instead of subscribing', async () => {
    const node = await connectNodeRedis(server.url);
    closers.push(() => node.quit());
    const scripts: RedisScripts = {
      eval: (script, keys, args) => node.eval(script, { keys, arguments: args }),
    };
    const prefix = 't:generic:';
    const a = new RedisQuotaStore({ client: scripts, prefix });
    const b = new RedisQuotaStore({ client: scripts, prefix });
    const probe = leaseOf(await a.admit(BUCKET, { leaseMs: 10_000 }));
    expect(await b.admit(BUCKET, { leaseMs: 10_000 })).toEqual({ reason: 'budget-unknown' });
    let woken = 0;
    const unwatch = b.watch(BUCKET, () => woken++);
    await a.observe(BUCKET, probe, { status: 200, window: window(3) });
    await sleep(450);
    expect(woken).toBeGreaterThan(0);
    unwatch();
    leaseOf(await b.admit(BUCKET, { leaseMs: 10_000 }));
  });
});

describe('RedisQuotaStore closed while calls wait', () => {
  it('wakes them, and fails them with a message that says it was closed', async () => {
    const { store } = await storeOf('node-redis');
    const probe = leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    await store.observe(BUCKET, probe, { status: 200, window: window(5, 60_000) });
    let woken = 0;
    const unwatch = store.watch(BUCKET, () => woken++);
    await store.close();
    expect(woken).toBeGreaterThan(0);
    await expect(store.admit(BUCKET, { leaseMs: 10_000 })).rejects.toThrow(
      expect.objectContaining({
        name: 'AnimalStoreError',
        message: expect.stringMatching(/closed/),
      }),
    );
    unwatch();
  });
});

describe('RedisQuotaStore against nonsense', () => {
  it('keeps a lease asked to live forever to a day, and every key expiring', async () => {
    const prefix = 't:forever:';
    const { store, lines } = await storeOf('node-redis', { prefix });
    for (const leaseMs of [Number.POSITIVE_INFINITY, 1e20, Number.NaN, -5]) {
      leaseOf(await store.admit(`${leaseMs}`.padEnd(64, 'f'), { leaseMs }));
    }
    expect(lines.error).toEqual([]);
    for (const key of await admin.keys(`${prefix}*`)) {
      const ttl = await admin.pTTL(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(2 * 86_400_000 + 60_000);
    }
  });

  it('drops leases and places in line that another writer left beyond a day', async () => {
    const prefix = 't:corrupt:';
    const leases = `${prefix}{${BUCKET}}:leases`;
    await admin.zAdd(leases, { score: Number.POSITIVE_INFINITY, value: 'stuck' });
    await admin.hSet(`${prefix}{${BUCKET}}:state`, { known: '1', 'w:60': '1:1000:99999999999999' });
    const { store } = await storeOf('ioredis', { prefix });
    // 1 left and no lease in flight once the stuck one is gone.
    leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
    expect(await admin.zScore(leases, 'stuck')).toBeNull();
  });

  it('survives an adapter whose subscribe answers something other than an unsubscribe', async () => {
    const node = await connectNodeRedis(server.url);
    closers.push(() => node.quit());
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const store = new RedisQuotaStore({
        client: {
          eval: (script, keys, args) => node.eval(script, { keys, arguments: args }),
          subscribe: async () => 'not a function' as unknown as () => Promise<void>,
        },
        prefix: 't:odd-subscribe:',
      });
      leaseOf(await store.admit(BUCKET, { leaseMs: 10_000 }));
      expect(await store.admit(BUCKET, { leaseMs: 10_000 })).toEqual({ reason: 'budget-unknown' });
      const unwatch = store.watch(BUCKET, () => undefined);
      await sleep(50);
      unwatch();
      await sleep(50);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(rejections).toEqual([]);
  });
});

describe('RedisQuotaStore options', () => {
  it('refuses what is not a Redis client, with a message that says what is', () => {
    const bad = [undefined, null, 'redis://localhost', {}] as unknown[];
    for (const client of bad) {
      const make = () => new RedisQuotaStore({ client: client as RedisClient });
      expect(make).toThrow(AnimalStoreError);
      expect(make).toThrow(/node-redis or ioredis client, or an object with eval/);
    }
    expect(
      () => new RedisQuotaStore({ client: { eval: async () => 1 }, commandTimeoutMs: 0 }),
    ).toThrow(/commandTimeoutMs/);
    expect(
      () => new RedisQuotaStore({ client: { eval: async () => 1 }, prefix: 'app:{x}:' }),
    ).toThrow(/without braces/);
  });

  it('fails a call at once, saying to connect it, on a node-redis client that never was; works once it is', async () => {
    const raw = createClient({ url: server.url });
    const store = new RedisQuotaStore({ client: raw, logger: { error: () => {}, warn: () => {} } });
    const { client, sent } = recordingClient(store);
    const started = Date.now();
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect(error).not.toBeInstanceOf(RateLimitError);
    expect((error as Error).message).toMatch(/not connected .*await client\.connect\(\)/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(sent).toEqual([]);
    await raw.connect();
    closers.push(() => raw.quit());
    await expect(client.listPets()).resolves.toEqual([]);
    expect(sent).toHaveLength(1);
  });

  it.each([
    'LOADING Redis is loading the dataset in memory',
    "READONLY You can't write against a read only replica.",
    "OOM command not allowed when used memory > 'maxmemory'.",
    'ERR max number of clients reached',
  ])('waits out a Redis answering %s as an outage, then admits the call', async (reply) => {
    const real = (await clientOf('ioredis')) as Redis;
    let failing = true;
    const flaky: RedisScripts = {
      async eval(script, keys, args) {
        if (failing) throw Object.assign(new Error(reply), { name: 'ReplyError' });
        return real.eval(script, keys.length, ...keys, ...args);
      },
    };
    const store = new RedisQuotaStore({
      client: flaky,
      logger: { error: () => {}, warn: () => {} },
    });
    const { client, sent } = recordingClient(store);
    const call = client.listPets();
    await sleep(600);
    expect(sent).toEqual([]);
    failing = false;
    await expect(call).resolves.toEqual([]);
    expect(sent).toHaveLength(1);
  });

  it("keeps a Redis password out of a call's error, however deep it is inspected (an ioredis client whose password was rotated)", async () => {
    const user = 'rotated-user';
    await admin.sendCommand(['ACL', 'SETUSER', user, 'on', '>current-pw', '~*', '&*', '+@all']);
    closers.push(() => admin.sendCommand(['ACL', 'DELUSER', user]));
    const secret = 'old-pw-7c1e9a04';
    const redis = new Redis(server.url.replace('redis://', `redis://${user}:${secret}@`), {
      maxRetriesPerRequest: 0,
    });
    redis.on('error', () => undefined);
    closers.push(() => redis.disconnect());
    const store = new RedisQuotaStore({
      client: redis,
      logger: { error: () => {}, warn: () => {} },
    });
    const { client, sent } = recordingClient(store);
    const signal = AbortSignal.timeout(5_000);
    const error = await client.listPets({}, { signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnimalStoreError);
    expect(inspect(error, { depth: 20, showHidden: true })).not.toContain(secret);
    expect(sent).toEqual([]);
  });

  it('is a QuotaStore a client takes, and admits its calls', async () => {
    const store: QuotaStore = new RedisQuotaStore({ client: await clientOf('ioredis') });
    const client = new PetsClient({
      apiKey: 'sk_redis_store_taken',
      baseUrl: 'http://127.0.0.1:9/v1',
      quotaStore: store,
      logLevel: 'off',
      fetch: async () => Response.json([], { headers: { 'x-ratelimit-limit': '5' } }),
    });
    await expect(client.listPets()).resolves.toEqual([]);
    await expect(client.listPets()).resolves.toEqual([]);
  });
});
