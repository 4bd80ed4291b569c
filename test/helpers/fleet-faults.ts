import {
  type FleetService,
  startFleet,
  startFleetService,
  startFleetWorker,
  type WorkerReport,
} from './fleet.js';
import { type RedisProxy, startRedisProxy } from './redis-proxy.js';
import { type RedisServer, startRedis } from './redis-server.js';
import { sleep } from './sleep.js';

/** What a fault may do: each worker reaches Redis through its own proxy. */
export interface FaultContext {
  readonly proxies: RedisProxy[];
  /** SIGKILLs Redis, and starts an empty one `afterMs` later behind every proxy. */
  restartRedis(afterMs: number): Promise<void>;
  /** Resolves `ms` after the workers started calling. */
  at(ms: number): Promise<void>;
}

export interface FaultRunOptions {
  readonly workers: number;
  /** Requests per window of the service's plan. */
  readonly limit: number;
  readonly windowMs: number;
  /** Calls in flight per worker. */
  readonly concurrency: number;
  readonly durationMs: number;
  readonly maxRetryDelayMs?: number;
  /** The fault, started with the run; it resolves once Redis is whole again. */
  readonly fault?: (context: FaultContext) => Promise<void>;
  /** More configuration of worker i. */
  readonly each?: (i: number) => object;
}

export interface FaultRun {
  /** Responses that were 429s. */
  readonly limited: number;
  /** The most requests the service counted in one window. */
  readonly mostInAWindow: number;
  /** Requests counted per window ÷ limit, over the windows the run covered whole. */
  readonly goodput: number;
  /**
   * The busiest worker's requests ÷ the least busy one's, counted by the
   * service over the whole windows after every worker had begun calling (a
   * process the machine booted late is not held against the SDK).
   */
  readonly fairness: number;
  /** Those requests, per worker. */
  readonly shares: number[];
  readonly completed: number[];
  /** Failed calls, by error name, over every worker. */
  readonly failed: Record<string, number>;
  /**
   * The longest the service heard nothing, from when Redis was whole again
   * (or the first request) to the last request.
   */
  readonly silenceAfterMs: number;
  /** How long from then (or from when a worker booted late began calling) until every worker had sent again (Infinity: one never did). */
  readonly backAfterMs: number;
  /** That time for each worker. */
  readonly backs: number[];
  /** Each worker's first requests from a window before then, in ms from then (`!`: a 429). */
  readonly around: string[];
  /** What the workers logged. */
  readonly log: string;
  readonly arrivals: FleetService['arrivals'];
}

let runs = 0;

/** `workers` processes sharing one fresh key, each through its own proxy to one real Redis. */
export async function runFaultFleet(options: FaultRunOptions): Promise<FaultRun> {
  const { workers: count, limit, windowMs, concurrency, durationMs } = options;
  let redis: RedisServer = await startRedis();
  const proxies = await Promise.all(
    Array.from({ length: count }, () => startRedisProxy(redis.port)),
  );
  const service = await startFleetService(limit, windowMs);
  // Calls start on a window boundary, 2.5 s on at least (the workers boot
  // meanwhile), so that whole windows are measured.
  const start = Math.ceil((Date.now() + 2_500) / windowMs) * windowMs;
  const end = start + durationMs;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
  let proxyIndex = 0;
  const fleet = startFleet(count, service, {
    apiKey: `faults-${process.pid}-${++runs}`,
    start,
    end,
    concurrency,
    timeoutMs: 5_000,
    maxRetryDelayMs,
    redis: (client) => ({ client, url: proxies[proxyIndex++]!.url }),
    ...(options.each && { each: options.each }),
  });
  let whole = start;
  const context: FaultContext = {
    proxies,
    at: (ms) => sleep(Math.max(0, start + ms - Date.now())),
    async restartRedis(afterMs) {
      redis.process.kill('SIGKILL');
      await sleep(afterMs);
      redis = await startRedis();
      for (const proxy of proxies) proxy.heal(redis.port);
    },
  };
  try {
    if (options.fault) {
      await options.fault(context);
      whole = Date.now();
    }
    const reports = await Promise.all(fleet.map((w) => w.report));
    return measure(
      service,
      reports,
      fleet.map((w) => w.log.join('')),
      {
        limit,
        windowMs,
        start,
        end,
        whole,
      },
    );
  } finally {
    for (const worker of fleet) worker.child.kill('SIGKILL');
    await service.close();
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await redis.stop();
  }
}

/**
 * Serverless churn: `total` short-lived workers (`lifeMs` of calls each, 4 in
 * flight), `atOnce` at a time, every third SIGKILLed at a random moment of its
 * life, all on one key through one real Redis.
 */
export async function runChurn({
  total = 24,
  atOnce = 4,
  lifeMs = 3_000,
  limit = 10,
  windowMs = 2_000,
} = {}): Promise<FaultRun & { killed: number }> {
  const redis = await startRedis();
  const service = await startFleetService(limit, windowMs);
  const apiKey = `churn-${process.pid}-${++runs}`;
  const reports: Array<WorkerReport | undefined> = [];
  const logs: string[] = [];
  let next = 0;
  let killed = 0;
  const begin = Date.now() + 1_000;
  const lane = async () => {
    while (next < total) {
      const i = next++;
      const start = Date.now() + 1_000;
      const worker = startFleetWorker({
        url: service.url,
        apiKey,
        store: 'redis',
        redis: { client: i % 2 ? 'ioredis' : 'node-redis', url: redis.url },
        worker: String(i),
        concurrency: 4,
        start,
        end: start + lifeMs,
        timeoutMs: 5_000,
        maxRetryDelayMs: 30_000,
      });
      if (i % 3 === 2) {
        killed++;
        setTimeout(() => worker.child.kill('SIGKILL'), 1_000 + Math.random() * lifeMs);
        await worker.report;
        continue;
      }
      reports.push(await worker.report);
      logs.push(worker.log.join(''));
    }
  };
  try {
    await Promise.all(Array.from({ length: atOnce }, lane));
    const end = Date.now();
    const whole = Math.ceil(begin / windowMs) * windowMs;
    const last = Math.floor(end / windowMs) * windowMs;
    return {
      ...measure(service, reports, logs, { limit, windowMs, start: whole, end: last, whole }),
      killed,
    };
  } finally {
    await service.close();
    await redis.stop();
  }
}

function measure(
  service: FleetService,
  reports: Array<WorkerReport | undefined>,
  logs: string[],
  { limit, windowMs, start, end, whole }: Record<string, number>,
): FaultRun {
  const perWindow = new Map<string, number>();
  let limited = 0;
  for (const { window, status } of service.arrivals) {
    if (status === 429) limited++;
    else perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
  }
  const covered: number[] = [];
  for (let from = start!; from + windowMs! <= end!; from += windowMs!) {
    // The mock names a window by its reset, in whole seconds.
    const name = String(Math.ceil((from + windowMs!) / 1000));
    covered.push((perWindow.get(name) ?? 0) / limit!);
  }
  const completed = reports.map((r) => r?.ok ?? 0);
  const allBegun = Math.max(start!, ...reports.map((r) => r?.begunAt ?? start!));
  const shares = reports.map(() => 0);
  for (const { at, worker, status } of service.arrivals)
    if (status !== 429 && at >= allBegun && at < end! && shares[Number(worker)] !== undefined)
      shares[Number(worker)]!++;
  const failed: Record<string, number> = {};
  for (const report of reports) {
    if (!report) failed.crashed = (failed.crashed ?? 0) + 1;
    for (const [name, n] of Object.entries(report?.failed ?? {}))
      failed[name] = (failed[name] ?? 0) + n;
  }
  const from = Math.max(whole!, service.arrivals[0]?.at ?? end!);
  const times = [from, ...service.arrivals.map((a) => a.at).filter((at) => at > from)];
  const silenceAfterMs = Math.max(0, ...times.slice(1).map((at, i) => at - times[i]!));
  // From when the worker could send: a process the machine booted late is not held against the SDK.
  const backs = reports.map((report, i) => {
    const since = Math.max(from, report?.begunAt ?? from);
    const first = service.arrivals.find((a) => a.worker === String(i) && a.at >= since);
    return first ? first.at - since : Number.POSITIVE_INFINITY;
  });
  // When one is late: each worker's requests from a window before that moment, in ms from it.
  const around = backs.map((_, i) =>
    service.arrivals
      .filter((a) => a.worker === String(i) && a.at >= from - windowMs!)
      .slice(0, 12)
      .map((a) => `${a.at - from}${a.status === 429 ? '!' : ''}`)
      .join(' '),
  );
  return {
    limited,
    mostInAWindow: Math.max(0, ...perWindow.values()),
    goodput: covered.reduce((a, b) => a + b, 0) / Math.max(1, covered.length),
    fairness: Math.max(...shares) / Math.max(1, Math.min(...shares)),
    shares,
    completed,
    failed,
    silenceAfterMs,
    backAfterMs: Math.max(...backs),
    backs,
    around,
    log: logs.map((log, i) => `${i}: ${log}`).join('\n'),
    arrivals: service.arrivals,
  };
}

/** The store's default `commandTimeoutMs`. */
const COMMAND_TIMEOUT_MS = 250;

/** The faults of the fleet's tests and benchmark, each starting 2 s into the calls. */
export const FAULTS = {
  'every Redis reply delayed 0–100 ms': async ({ proxies }: FaultContext) => {
    for (const proxy of proxies) proxy.delay(0, 100);
  },
  [`every Redis reply delayed up to ${COMMAND_TIMEOUT_MS / 2} ms (half of commandTimeoutMs)`]:
    async ({ proxies }: FaultContext) => {
      for (const proxy of proxies) proxy.delay(0, COMMAND_TIMEOUT_MS / 2);
    },
  // Past commandTimeoutMs: from 2 s on, like the others, so that what is measured is a fleet
  // that knows its budget meeting a slow Redis, not its first probe through one.
  'every Redis reply delayed 0–400 ms': async ({ proxies, at }: FaultContext) => {
    await at(2_000);
    for (const proxy of proxies) proxy.delay(0, 400);
  },
  'one worker partitioned from Redis for 6 s (packets dropped)': async ({
    proxies,
    at,
  }: FaultContext) => {
    await at(2_000);
    proxies[0]!.blackhole();
    await sleep(6_000);
    proxies[0]!.heal();
  },
  'one worker partitioned for 6 s (connections reset and refused)': async ({
    proxies,
    at,
  }: FaultContext) => {
    await at(2_000);
    proxies[0]!.reset();
    await sleep(6_000);
    proxies[0]!.heal();
  },
  'every worker partitioned for 6 s (packets dropped)': async ({ proxies, at }: FaultContext) => {
    await at(2_000);
    for (const proxy of proxies) proxy.blackhole();
    await sleep(6_000);
    for (const proxy of proxies) proxy.heal();
  },
  "every worker's connections to Redis dropped silently by the network for 6 s": async ({
    proxies,
    at,
  }: FaultContext) => {
    await at(2_000);
    for (const proxy of proxies) proxy.sever();
    await sleep(6_000);
    for (const proxy of proxies) proxy.heal();
  },
  'Redis SIGKILLed, restarted empty 1 s later': async ({ restartRedis, at }: FaultContext) => {
    await at(2_000);
    await restartRedis(1_000);
  },
} as const satisfies Record<string, (context: FaultContext) => Promise<void>>;
