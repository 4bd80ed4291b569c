/**
 * The fleet benchmark (`npm run bench:fleet`, about two minutes): many worker
 * processes sharing one API key, against the mock service in its own process
 * on a plan of LIMIT requests per WINDOW_MS. Each fleet size runs once with
 * the in-memory store (each process alone: the baseline) and once with the
 * Redis store; then one worker is killed with SIGKILL mid-run, and Redis is
 * paused with SIGSTOP for ten seconds. Writes the "Fleet" section of
 * bench/RESULTS.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { createClient } from 'redis';
import {
  type FleetService,
  killMidRequest,
  startFleet,
  startFleetService,
} from '../../test/helpers/fleet.js';
import { type RedisServer, startRedis } from '../../test/helpers/redis-server.js';
import { startCluster, startSentinels } from '../../test/helpers/redis-topologies.js';
import { sleep } from '../../test/helpers/sleep.js';

const LIMIT = 20;
const WINDOW_MS = 2_000;
const LATENCY_MS = 20;
const CONCURRENCY = 4;
const DURATION_MS = 8_000;
const TIMEOUT_MS = 2_000;
const BOOT_MS = 1_500;

interface WorkerReport {
  ok: number;
  failed: Record<string, number>;
  admissions: number[];
  longestMs: number;
  longestStoreMs: number;
  errorLines: number;
}

interface WindowStats {
  ok: number;
  limited: number;
  intoClosed: number;
}

interface Row {
  run: string;
  workers: number;
  store: string;
  calls: number;
  limited: number;
  intoClosed: number;
  goodput: number;
  fairness: number | undefined;
  p50: number;
  p99: number;
  roundTrips: number | undefined;
  longestStoreMs: number;
  failed: string;
  errorLines: number;
}

const here = (file: string) => new URL(file, import.meta.url).pathname;

function startMock(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [here('./mock.mjs'), String(LIMIT), String(WINDOW_MS), String(LATENCY_MS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve) =>
    child.stdout?.once('data', (d: Buffer) => resolve({ url: String(d).trim(), child })),
  );
}

function startWorker(config: object): { child: ChildProcess; report: Promise<WorkerReport> } {
  const child = spawn(
    process.execPath,
    [here('../../test/helpers/fleet-worker.mjs'), JSON.stringify(config)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let errorLines = 0;
  child.stdout?.on('data', (d: Buffer) => {
    out += String(d);
  });
  child.stderr?.on('data', (d: Buffer) => {
    errorLines += String(d)
      .split('\n')
      .filter((line) => line.includes('failed')).length;
  });
  const report = new Promise<WorkerReport>((resolve) =>
    child.once('exit', () => {
      try {
        resolve({ ...(JSON.parse(out) as Omit<WorkerReport, 'errorLines'>), errorLines });
      } catch {
        resolve({
          ok: 0,
          failed: { killed: 1 },
          admissions: [],
          longestMs: 0,
          longestStoreMs: 0,
          errorLines,
        });
      }
    }),
  );
  return { child, report };
}

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

type Admin = Awaited<ReturnType<typeof connectAdmin>>;
const connectAdmin = (url: string) => createClient({ url }).connect();

let keys = 0;

async function run(
  name: string,
  mockUrl: string,
  redis: RedisServer,
  admin: Admin,
  workers: number,
  store: 'memory' | 'redis',
  options: { durationMs?: number; during?: (fleet: ChildProcess[], start: number) => void } = {},
): Promise<Row> {
  const durationMs = options.durationMs ?? DURATION_MS;
  const origin = new URL(mockUrl).origin;
  await fetch(`${origin}/__reset`, { method: 'POST' });
  await admin.flushAll();
  await admin.configResetStat();
  const start = Date.now() + BOOT_MS;
  const end = start + durationMs;
  const apiKey = `fleet-bench-${process.pid}-${++keys}`;
  const fleet = Array.from({ length: workers }, () =>
    startWorker({
      url: mockUrl,
      apiKey,
      store,
      redisUrl: redis.url,
      concurrency: CONCURRENCY,
      start,
      end,
      timeoutMs: TIMEOUT_MS,
    }),
  );
  options.during?.(
    fleet.map((w) => w.child),
    start,
  );
  const reports = await Promise.all(fleet.map((w) => w.report));
  const stats = (await (await fetch(`${origin}/__stats`)).json()) as Record<string, WindowStats>;
  const info = await admin.info('commandstats');
  const commands = [...info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)]
    .filter(([, command]) => /^(evalsha|eval|subscribe|unsubscribe)$/.test(command!))
    .reduce((sum, [, , calls]) => sum + Number(calls), 0);

  let limited = 0;
  let intoClosed = 0;
  const shares: number[] = [];
  for (const [id, w] of Object.entries(stats)) {
    limited += w.limited;
    intoClosed += w.intoClosed;
    const [, reset] = id.split(':').map(Number);
    const closesAt = reset! * 1000;
    if (w.limited > 0) {
      console.error(
        `${name} ${store}: ${w.limited} × 429 in the window closing ${closesAt - start} ms after the start`,
      );
    }
    // Only windows the run covered whole, while every worker was calling.
    if (closesAt - WINDOW_MS >= start && closesAt <= end) shares.push(w.ok / LIMIT);
  }
  const oks = reports.map((r) => r.ok);
  const calls = oks.reduce((a, b) => a + b, 0);
  const failedBy: Record<string, number> = {};
  for (const r of reports)
    for (const [k, v] of Object.entries(r.failed)) failedBy[k] = (failedBy[k] ?? 0) + v;
  const alive = oks.filter((_, i) => !reports[i]!.failed.killed);
  const admissions = reports.flatMap((r) => r.admissions);
  return {
    run: name,
    workers,
    store,
    calls,
    limited,
    intoClosed,
    goodput: shares.length ? shares.reduce((a, b) => a + b, 0) / shares.length : Number.NaN,
    fairness: alive.length > 1 ? Math.max(...alive) / Math.max(1, Math.min(...alive)) : undefined,
    p50: percentile(admissions, 50),
    p99: percentile(admissions, 99),
    roundTrips: store === 'redis' ? commands / Math.max(1, calls) : undefined,
    longestStoreMs: Math.max(...reports.map((r) => r.longestStoreMs)),
    failed: Object.entries(failedBy)
      .map(([k, v]) => `${v} ${k}`)
      .join(', '),
    errorLines: reports.reduce((a, r) => a + r.errorLines, 0),
  };
}

/** Goodput over the windows that began at or after `from` and ended by `to`. */
function goodputOf(service: FleetService, from: number, to: number): number {
  const served = new Map<number, number>();
  for (const { window, status } of service.arrivals) {
    if (status === 429) continue;
    const closesAt = Number(window) * 1000;
    if (closesAt - WINDOW_MS >= from && closesAt <= to) {
      served.set(closesAt, (served.get(closesAt) ?? 0) + 1);
    }
  }
  const shares = [...served.values()].map((n) => n / LIMIT);
  return shares.length ? shares.reduce((a, b) => a + b, 0) / shares.length : Number.NaN;
}

interface HealRow {
  run: string;
  runs: number;
  limited: number;
  goodput: number;
  backWorstMs: number | undefined;
  backMedianMs: number | undefined;
  failed: number;
}

const KILL_RUNS = 9;
// Long enough for two whole windows after the kill and its 2.5 s.
const KILL_RUN_MS = 12_000;

/**
 * A worker killed 100 ms after one of its requests reached the service,
 * which never answers it: the first request of a window, one in the middle,
 * or the last, in turn, KILL_RUNS times. How long until the leases alive at
 * the kill are gone (the worst run counts), and the goodput of the rest over
 * the windows from 2.5 s after the kill.
 */
async function killRuns(redis: RedisServer, admin: Admin): Promise<HealRow> {
  const backs: number[] = [];
  const goodputs: number[] = [];
  let limited = 0;
  let failed = 0;
  for (let run = 0; run < KILL_RUNS; run++) {
    await admin.flushAll();
    const service = await startFleetService(LIMIT, WINDOW_MS);
    const start = Date.now() + BOOT_MS;
    const end = start + KILL_RUN_MS;
    const apiKey = `fleet-kill-${process.pid}-${run}`;
    const workers = startFleet(4, service, {
      apiKey,
      start,
      end,
      concurrency: CONCURRENCY,
      timeoutMs: 10_000,
      redis: () => ({ client: 'node-redis', url: redis.url }),
    });
    const nth = [1, LIMIT / 2, LIMIT][run % 3]!;
    const { kills, watched } = killMidRequest(
      service,
      workers,
      admin,
      [{ nth, after: start + 2_500 }],
      end,
    );
    const ended = await Promise.all(workers.map((w) => w.report));
    await watched;
    await service.close();
    const kill = kills[0];
    if (kill?.backMs !== undefined) backs.push(kill.backMs);
    else backs.push(Number.POSITIVE_INFINITY);
    const goodput = kill ? goodputOf(service, kill.at + 2_500, end) : Number.NaN;
    if (!Number.isNaN(goodput)) goodputs.push(goodput);
    limited += service.arrivals.filter((a) => a.status === 429).length;
    for (const report of ended) {
      for (const count of Object.values(report?.failed ?? {})) failed += count;
    }
    console.error(`kill run ${run + 1}: nth ${nth}, back after ${kill?.backMs} ms`);
  }
  const sorted = [...backs].sort((a, b) => a - b);
  return {
    run: 'worker SIGKILLed with a request in flight',
    runs: KILL_RUNS,
    limited,
    goodput: goodputs.length ? goodputs.reduce((a, b) => a + b, 0) / goodputs.length : Number.NaN,
    backWorstMs: sorted.at(-1),
    backMedianMs: sorted[Math.floor(sorted.length / 2)],
    failed,
  };
}

/** 4 workers (2 node-redis, 2 ioredis) for 12 s on a topology, failed over 3 s in. */
async function failoverRun(
  name: string,
  redis: (client: 'node-redis' | 'ioredis') => object,
  failover: () => Promise<void>,
): Promise<HealRow> {
  const service = await startFleetService(LIMIT, WINDOW_MS);
  const start = Date.now() + BOOT_MS;
  const end = start + 12_000;
  const apiKey = `fleet-failover-${process.pid}-${Date.now()}`;
  const workers = startFleet(4, service, {
    apiKey,
    start,
    end,
    concurrency: CONCURRENCY,
    timeoutMs: 5_000,
    maxRetryDelayMs: 10_000,
    redis,
  });
  await sleep(start - Date.now() + 3_000);
  await failover();
  const ended = await Promise.all(workers.map((w) => w.report));
  await service.close();
  let failed = 0;
  for (const report of ended) {
    for (const count of Object.values(report?.failed ?? {})) failed += count;
  }
  return {
    run: name,
    runs: 1,
    limited: service.arrivals.filter((a) => a.status === 429).length,
    goodput: goodputOf(service, start, end),
    backWorstMs: undefined,
    backMedianMs: undefined,
    failed,
  };
}

const redis = await startRedis();
const mock = await startMock();
const admin = await connectAdmin(redis.url);
const rows: Row[] = [];
const heals: HealRow[] = [];
try {
  // `--only outages`: just the two fault runs (to study them without the rest).
  const outagesOnly = process.argv.includes('--only') && process.argv.includes('outages');
  for (const workers of outagesOnly ? [] : [1, 2, 4, 8]) {
    for (const store of ['memory', 'redis'] as const) {
      const row = await run(`N=${workers}`, mock.url, redis, admin, workers, store);
      rows.push(row);
      console.error(JSON.stringify(row));
    }
  }
  // A worker killed mid-window, its requests in flight: their leases must lapse.
  rows.push(
    await run('SIGKILL one worker', mock.url, redis, admin, 4, 'redis', {
      during: (fleet, start) => {
        setTimeout(() => fleet[0]?.kill('SIGKILL'), start - Date.now() + 3_000 + WINDOW_MS / 2);
      },
    }),
  );
  console.error(JSON.stringify(rows.at(-1)));
  // Redis paused for ten seconds: every process holds its calls until it answers.
  rows.push(
    await run('SIGSTOP Redis 10 s', mock.url, redis, admin, 4, 'redis', {
      durationMs: 16_000,
      during: (_fleet, start) => {
        setTimeout(() => redis.pause(), start - Date.now() + 2_000);
        setTimeout(() => redis.resume(), start - Date.now() + 12_000);
      },
    }),
  );
  console.error(JSON.stringify(rows.at(-1)));
  if (!outagesOnly) {
    heals.push(await killRuns(redis, admin));
    const cluster = await startCluster();
    try {
      heals.push(
        await failoverRun(
          "Redis Cluster, CLUSTER FAILOVER of the key's master",
          (client) => ({ client, cluster: cluster.nodes }),
          () => cluster.failover('*:state'),
        ),
      );
    } finally {
      await cluster.stop();
    }
    const sentinels = await startSentinels();
    try {
      heals.push(
        await failoverRun(
          'Redis Sentinel, master SIGKILLed',
          (client) => ({
            client,
            sentinel: { name: sentinels.name, sentinels: sentinels.sentinels },
          }),
          () => sentinels.failover(),
        ),
      );
    } finally {
      await sentinels.stop();
    }
    for (const heal of heals) console.error(JSON.stringify(heal));
  }
} finally {
  await admin.quit().catch(() => undefined);
  mock.child.kill();
  await redis.stop();
}

const fmt = (n: number | undefined, digits = 2) =>
  n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits);
const table = [
  '| run | store | calls ok | 429s | sent into closed windows | goodput | fairness (max/min) | admission p50 | admission p99 | Redis round trips per call | longest store answer | failures |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.run} | ${r.store} | ${r.calls} | ${r.limited} | ${r.intoClosed} | ${fmt(r.goodput)} | ${fmt(r.fairness)} | ${fmt(r.p50, 1)} ms | ${fmt(r.p99, 1)} ms | ${fmt(r.roundTrips)} | ${fmt(r.longestStoreMs, 0)} ms | ${r.failed || 'none'}${r.errorLines ? ` (${r.errorLines} error log lines)` : ''} |`,
  ),
];
const healTable = [
  '| run | runs | 429s | goodput | budget back after the kill (worst / median) | failed calls |',
  '|---|---|---|---|---|---|',
  ...heals.map(
    (h) =>
      `| ${h.run} | ${h.runs} | ${h.limited} | ${fmt(h.goodput)} | ${h.backWorstMs === undefined ? '–' : `${fmt(h.backWorstMs, 0)} / ${fmt(h.backMedianMs, 0)} ms`} | ${h.failed} |`,
  ),
];
const redisRows = rows.filter((r) => r.store === 'redis' && r.run.startsWith('N='));
const met = redisRows.every(
  (r) =>
    r.limited === 0 &&
    r.intoClosed === 0 &&
    r.goodput >= 0.95 &&
    (r.fairness === undefined || r.fairness <= 1.25),
);
const section = `<!-- fleet:start -->
## Fleet: many processes, one key

Measured ${new Date().toISOString()} by \`npm run bench:fleet\` on ${cpus().length} × ${cpus()[0]?.model.split(' ')[0] ?? 'CPU'}, Node ${process.version}.
The mock service in its own process, on a plan of ${LIMIT} requests per ${WINDOW_MS / 1000} s window, answering after ${LATENCY_MS} ms; N worker processes share one fresh key, each with ${CONCURRENCY} calls in flight for ${DURATION_MS / 1000} s (\`listPets\`, timeoutMs ${TIMEOUT_MS}). "memory" is each process on its own (\`MemoryQuotaStore\`, the baseline); "redis" is \`RedisQuotaStore\` on node-redis against a local redis-server.
Goodput: successful responses per window ÷ limit, over the windows the run covered whole. Fairness: the largest worker's successful calls ÷ the smallest's. Admission latency: from calling to sending, holds included. Round trips: script calls and (un)subscriptions per successful call. Longest store answer: the longest any one \`admit\`, \`observe\` or \`release\` of the store took (bounded by \`commandTimeoutMs\`, 250 ms, when Redis stalls).

Goal with Redis, for every N: 0 × 429, 0 requests into closed windows, goodput ≥ 0.95, fairness within 1.25×: **${met ? 'met' : 'NOT met'}**.

${table.join('\n')}

Healing and topologies, each on a plan of ${LIMIT} requests per ${WINDOW_MS / 1000} s window with ${CONCURRENCY} calls in flight per worker. A killed worker: 4 workers on node-redis; one is SIGKILLed 100 ms after one of its requests reached the service, which never answers it (the first request of a window, one in the middle, the last, in turn); "budget back" is how long until every lease alive at the kill is gone from Redis, and goodput is that of the rest over the windows from 2.5 s after the kill. Cluster: 3 masters with a replica each, \`CLUSTER FAILOVER\` of the master holding the key 3 s in. Sentinel: a master, a replica and three Sentinels; the master SIGKILLed 3 s in. Both with 2 workers on node-redis and 2 on ioredis for 12 s; goodput over the whole run.

${healTable.join('\n')}
<!-- fleet:end -->`;

const path = here('../RESULTS.md');
let results = '';
try {
  results = readFileSync(path, 'utf8');
} catch {}
const marked = /<!-- fleet:start -->[\s\S]*<!-- fleet:end -->/;
results = marked.test(results)
  ? results.replace(marked, section)
  : `${results.trimEnd()}\n\n${section}\n`;
writeFileSync(path, results);
console.log(section);
