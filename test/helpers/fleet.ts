import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMockService } from '../../src/mock/index.js';
import { send, toRequest } from '../../src/mock/server.js';
import { sleep } from './sleep.js';

/** One request as the service saw it. */
export interface Arrival {
  readonly at: number;
  readonly worker: string;
  readonly status: number;
  /** The window it was counted in (its `X-RateLimit-Reset`). */
  readonly window: string;
  /** Its place in that window, from 1. */
  readonly nth: number;
}

/** Which request to leave unanswered, as when a process dies mid-request. */
export interface Hang {
  /** Its place in its window: 1 is the request that learns of a new window. */
  readonly nth: number;
  /** Not before this (epoch ms). */
  readonly after: number;
  /** Called once, with the worker that sent it, when it arrived and was left hanging. */
  readonly onHang: (worker: string) => void;
}

export interface FleetService {
  readonly url: string;
  readonly arrivals: Arrival[];
  /** Leaves the first request matching each rule unanswered (the socket stays open). */
  hang(rule: Hang): void;
  close(): Promise<void>;
}

/** The mock service on loopback, on a plan of `limit` requests per `windowMs`, recording every request. */
export async function startFleetService(limit: number, windowMs: number): Promise<FleetService> {
  const service = createMockService({
    plan: 'enterprise',
    limits: { perMinute: limit, perDay: 100_000_000, windowMs },
    seed: [{ name: 'Rex', categoryId: 1, status: 'available' }],
    baseUrl: 'http://127.0.0.1/v1',
  });
  const arrivals: Arrival[] = [];
  const rules: Hang[] = [];
  const hung: ServerResponse[] = [];
  const counts = new Map<string, number>();
  const server = createServer(async (incoming, outgoing) => {
    const request = await toRequest(incoming, 'http://127.0.0.1');
    const response = await service.handle(request);
    const window = response.headers.get('x-ratelimit-reset') ?? '';
    const nth = (counts.get(window) ?? 0) + 1;
    counts.set(window, nth);
    const worker = request.headers.get('x-worker') ?? '';
    arrivals.push({ at: Date.now(), worker, status: response.status, window, nth });
    const rule = rules.find((r) => r.nth === nth && Date.now() >= r.after);
    if (rule) {
      rules.splice(rules.indexOf(rule), 1);
      hung.push(outgoing);
      rule.onHang(worker);
      return;
    }
    await send(response, outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    arrivals,
    hang: (rule) => rules.push(rule),
    close: () =>
      new Promise((resolve) => {
        for (const outgoing of hung) outgoing.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a worker printed when it ended. */
export interface WorkerReport {
  readonly ok: number;
  readonly failed: Record<string, number>;
  /** The first message of each kind of failure. */
  readonly reasons?: Record<string, string>;
  readonly longestMs: number;
  /** When it began calling (epoch ms): after `start` when its process was slow to boot. */
  readonly begunAt?: number;
}

export interface FleetWorker {
  readonly child: ChildProcess;
  readonly report: Promise<WorkerReport | undefined>;
  /** Resolves when the worker stopped itself with SIGSTOP. */
  readonly stopped: Promise<void>;
  /** What it wrote on stderr (the store's error and warn lines). */
  readonly log: string[];
}

/** Starts `test/helpers/fleet-worker.mjs` (on the built SDK) with `config`. */
export function startFleetWorker(config: object): FleetWorker {
  const child = spawn(
    process.execPath,
    [new URL('./fleet-worker.mjs', import.meta.url).pathname, JSON.stringify(config)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += String(chunk);
  });
  const log: string[] = [];
  const stopped = new Promise<void>((resolve) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      log.push(String(chunk));
      if (String(chunk).includes('SIGSTOP')) resolve();
    });
  });
  const report = new Promise<WorkerReport | undefined>((resolve) =>
    child.once('exit', () => {
      try {
        resolve(JSON.parse(out) as WorkerReport);
      } catch {
        resolve(undefined);
      }
    }),
  );
  return { child, report, stopped, log };
}

/** What of a node-redis client the lease watch uses. */
export interface RedisAdmin {
  sendCommand(args: string[]): Promise<unknown>;
  scanIterator(options: { MATCH: string }): AsyncIterable<string | string[]>;
  zRangeWithScores(
    key: string,
    from: number,
    to: number,
  ): Promise<Array<{ value: string; score: number }>>;
}

export interface FleetOptions {
  readonly apiKey: string;
  /** When the workers start and stop calling (epoch ms). */
  readonly start: number;
  readonly end: number;
  /** Calls in flight per worker. */
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly maxRetryDelayMs?: number;
  /** How worker i connects to Redis, given the client it uses: node-redis for even i, ioredis for odd. */
  readonly redis: (client: 'node-redis' | 'ioredis') => object;
  /** More configuration of worker i. */
  readonly each?: (i: number) => object;
}

/** `count` workers sharing one key through Redis, against `service`; worker i sends `x-worker: i`. */
export function startFleet(count: number, service: { url: string }, options: FleetOptions) {
  const { redis, each, ...shared } = options;
  return Array.from({ length: count }, (_, i) =>
    startFleetWorker({
      ...shared,
      url: service.url,
      store: 'redis',
      redis: redis(i % 2 ? 'ioredis' : 'node-redis'),
      worker: String(i),
      ...each?.(i),
    }),
  );
}

/** Leases in a Redis that have not lapsed by its clock, now. */
export async function liveLeases(admin: RedisAdmin): Promise<string[]> {
  const [seconds, micros] = (await admin.sendCommand(['TIME'])) as [string, string];
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const live: string[] = [];
  for await (const batch of admin.scanIterator({ MATCH: '*:leases' })) {
    for (const key of Array.isArray(batch) ? batch : [batch]) {
      const entries = await admin.zRangeWithScores(key, 0, -1);
      for (const { value, score } of entries) if (score > now) live.push(value);
    }
  }
  return live;
}

/** One worker kill with a request the service never answered. */
export interface Kill {
  readonly nth: number;
  readonly worker: number;
  readonly at: number;
  /** Leases alive at the kill, and how long until they were all gone. */
  readonly leases: string[];
  backMs?: number;
}

/**
 * Kills the worker that sends the `nth` request of a window after `after`,
 * 100 ms after it arrived (the service never answers it); records the kill
 * and, until `until` and then until its leases are gone (5 s at most), when they are gone.
 */
export function killMidRequest(
  service: FleetService,
  workers: FleetWorker[],
  admin: RedisAdmin,
  plan: Array<{ nth: number; after: number }>,
  until: number,
): { kills: Kill[]; watched: Promise<void> } {
  const kills: Kill[] = [];
  for (const { nth, after } of plan) {
    service.hang({
      nth,
      after,
      onHang: (worker) =>
        setTimeout(async () => {
          workers[Number(worker)]!.child.kill('SIGKILL');
          const at = Date.now();
          kills.push({ nth, worker: Number(worker), at, leases: await liveLeases(admin) });
        }, 100),
    });
  }
  // Watched until `until`, and past it until every kill's leases are gone
  // (at most 5 s after the kill).
  const pending = () => kills.some((k) => k.backMs === undefined && Date.now() - k.at < 5_000);
  const watched = (async () => {
    while (Date.now() < until || pending()) {
      const live = new Set(await liveLeases(admin));
      for (const kill of kills) {
        if (kill.backMs === undefined && !kill.leases.some((lease) => live.has(lease))) {
          kill.backMs = Date.now() - kill.at;
        }
      }
      await sleep(50);
    }
  })();
  return { kills, watched };
}
