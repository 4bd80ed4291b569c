/**
 * The fleet under Redis faults (`npm run bench:fleet`, after the fleet runs;
 * `tsx bench/fleet/faults.ts [RUNS]` alone, about ten minutes at 3 runs):
 * 4 worker processes, 4 calls in flight each, one key on a plan of 10
 * requests per 2 s, each worker reaching a real Redis through its own TCP
 * proxy on loopback, which delays replies, cuts the worker off (packets held,
 * or connections reset and refused), or outlives a Redis SIGKILLed and
 * restarted empty. Then turns with equal demand: 4 and 8 processes at 10 and
 * 20 requests per 2 s; and serverless churn. Each row runs RUNS times; the
 * worst run is quoted.
 * Writes the "Fleet under Redis faults" section of bench/RESULTS.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { FAULTS, type FaultRun, runChurn, runFaultFleet } from '../../test/helpers/fleet-faults.js';

const RUNS = Number(process.argv[2] ?? 3);
const DURATION_MS = 14_000;

interface Row {
  name: string;
  runs: FaultRun[];
  /** Whether fairness and the times after the fault mean anything (not with churn). */
  steady?: boolean;
}

const rows: Row[] = [];
const plans: Array<
  [string, { workers: number; limit: number; fault?: (typeof FAULTS)[keyof typeof FAULTS] }]
> = [
  ...Object.entries(FAULTS).map(
    ([name, fault]) =>
      [name, { workers: 4, limit: 10, fault }] as [
        string,
        { workers: number; limit: number; fault: typeof fault },
      ],
  ),
  ['no fault, 4 processes at 10 per 2 s', { workers: 4, limit: 10 }],
  ['no fault, 8 processes at 10 per 2 s', { workers: 8, limit: 10 }],
  ['no fault, 4 processes at 20 per 2 s', { workers: 4, limit: 20 }],
  ['no fault, 8 processes at 20 per 2 s', { workers: 8, limit: 20 }],
];
for (const [name, { workers, limit, fault }] of plans) {
  const runs: FaultRun[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await runFaultFleet({
      workers,
      limit,
      windowMs: 2_000,
      concurrency: 4,
      durationMs: DURATION_MS,
      ...(fault && { fault }),
    });
    runs.push(run);
    console.error(
      `${name} #${i + 1}: ${run.limited} × 429, most ${run.mostInAWindow}/${limit}, goodput ${run.goodput.toFixed(2)}, fairness ${run.fairness.toFixed(2)} ${JSON.stringify(run.completed)}, failed ${JSON.stringify(run.failed)}, silence ${run.silenceAfterMs} ms, back ${run.backAfterMs} ms`,
    );
  }
  rows.push({ name, runs });
}
const churn: FaultRun[] = [];
for (let i = 0; i < RUNS; i++) {
  const run = await runChurn();
  churn.push(run);
  console.error(
    `churn #${i + 1}: ${run.limited} × 429, most ${run.mostInAWindow}/10, goodput ${run.goodput.toFixed(2)}, failed ${JSON.stringify(run.failed)}, ${run.killed} killed`,
  );
}
rows.push({
  name: 'serverless churn: 24 workers living 3 s, 4 at a time, every third SIGKILLed',
  runs: churn,
  steady: false,
});

const worst = (runs: FaultRun[], pick: (r: FaultRun) => number, most = true) =>
  runs.map(pick).reduce((a, b) => (most ? Math.max(a, b) : Math.min(a, b)));
const range = (runs: FaultRun[], pick: (r: FaultRun) => number) => {
  const values = runs.map(pick);
  return `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
};
const failed = (runs: FaultRun[]) =>
  runs.reduce((n, r) => n + Object.values(r.failed).reduce((a, b) => a + b, 0), 0);
const table = [
  '| run | 429s (each run) | most in a window | goodput (worst; range) | fairness, busiest ÷ least (worst) | failed calls | longest silence once Redis is whole (worst) | every worker sending again after (worst) |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map(
    ({ name, runs, steady = true }) =>
      `| ${name} | ${runs.map((r) => r.limited).join(', ')} | ${worst(runs, (r) => r.mostInAWindow)} | ${worst(runs, (r) => r.goodput, false).toFixed(2)} (${range(runs, (r) => r.goodput)}) | ${steady ? worst(runs, (r) => r.fairness).toFixed(2) : '–'} | ${failed(runs)} | ${steady ? `${(worst(runs, (r) => r.silenceAfterMs) / 1000).toFixed(1)} s` : '–'} | ${steady ? `${(worst(runs, (r) => r.backAfterMs) / 1000).toFixed(1)} s` : '–'} |`,
  ),
];
const section = `<!-- fleet-faults:start -->
## Fleet under Redis faults

Measured ${new Date().toISOString()} by \`npm run bench:fleet\` on ${cpus().length} × ${cpus()[0]?.model.split(' ')[0] ?? 'CPU'}, Node ${process.version}, ${RUNS} runs a row.
The mock service in the benchmark's process on a plan of the row's limit per 2 s window (10 unless said); worker processes (half on node-redis, half on ioredis) share one fresh key with 4 calls in flight each for ${DURATION_MS / 1000} s, each through its own TCP proxy to one real redis-server. Faults start 2 s in; cuts last 6 s. The store's defaults (\`commandTimeoutMs\` 250). Goodput: requests the service counted per window ÷ its limit, over the windows of the run (a fault's windows included). Fairness: the most calls a worker completed ÷ the fewest (a worker cut off for 6 s completes fewer: fairness is a goal only without a fault). Silence: the longest the service heard nothing from when Redis was whole again (or the first request) on.

${table.join('\n')}
<!-- fleet-faults:end -->`;
const path = new URL('../RESULTS.md', import.meta.url).pathname;
let results = '';
try {
  results = readFileSync(path, 'utf8');
} catch {}
const marked = /<!-- fleet-faults:start -->[\s\S]*<!-- fleet-faults:end -->/;
results = marked.test(results)
  ? results.replace(marked, section)
  : `${results.trimEnd()}\n\n${section}\n`;
writeFileSync(path, results);
console.log(section);
