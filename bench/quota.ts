/**
 * The quota under load: the mock service in its own process, on a plan of
 * LIMIT requests per WINDOW_MS, with clients that start cold. Counts the 429s
 * the service answered and compares each run's wall time with the floor of
 * ceil(calls / LIMIT) windows.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { PetsClient as Client } from '../src/index.js';

export const LIMIT = 10;
export const WINDOW_MS = 2000;

export interface QuotaRun {
  scenario: string;
  calls: number;
  sent: number;
  limited: number;
  failed: number;
  wallMs: number;
  floorMs: number;
}

type ClientClass = typeof Client;

/** Starts the mock in a child process; resolves to its base URL and a stop function. */
async function startMock(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [new URL('./mock-server.mjs', import.meta.url).pathname, String(LIMIT), String(WINDOW_MS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve) =>
    child.stdout.once('data', (d: Buffer) => resolve(String(d).trim())),
  );
  return { url, stop: () => child.kill() };
}

let keys = 0;

async function run(
  PetsClient: ClientClass,
  url: string,
  scenario: string,
  clients: number,
  callsEach: number,
): Promise<QuotaRun> {
  const statuses: number[] = [];
  const counting = async (url: string, init: RequestInit) => {
    const request = new Request(url, init);
    const response = await fetch(request);
    statuses.push(response.status);
    return response;
  };
  // A fresh key: a budget nobody has spent, and a cold client.
  const apiKey = `bench-quota-${process.pid}-${++keys}`;
  const sdks = Array.from(
    { length: clients },
    () => new PetsClient({ apiKey, baseUrl: url, fetch: counting, logLevel: 'off' }),
  );
  const started = performance.now();
  const results = await Promise.allSettled(
    sdks.flatMap((sdk) => Array.from({ length: callsEach }, () => sdk.listPets({ limit: 1 }))),
  );
  const wallMs = performance.now() - started;
  const calls = clients * callsEach;
  return {
    scenario,
    calls,
    sent: statuses.length,
    limited: statuses.filter((s) => s === 429).length,
    failed: results.filter((r) => r.status === 'rejected').length,
    wallMs,
    floorMs: Math.ceil(calls / LIMIT) * WINDOW_MS,
  };
}

/** Runs every scenario `rounds` times, alternating between them. */
export async function quotaBench(PetsClient: ClientClass, rounds: number): Promise<QuotaRun[]> {
  const mock = await startMock();
  try {
    const runs: QuotaRun[] = [];
    for (let round = 0; round < rounds; round++) {
      runs.push(await run(PetsClient, mock.url, 'one client, 50 concurrent calls', 1, 50));
      runs.push(await run(PetsClient, mock.url, 'one client, 200 concurrent calls', 1, 200));
      runs.push(
        await run(PetsClient, mock.url, 'two clients of one key, 20 concurrent calls each', 2, 20),
      );
    }
    return runs;
  } finally {
    mock.stop();
  }
}

/** The section of bench/RESULTS.md, and whether each goal was met. */
export function quotaReport(runs: QuotaRun[]): { rows: string[]; met: boolean } {
  const rows = [
    `Plan: ${LIMIT} requests per ${WINDOW_MS / 1000} s window; each run a fresh key and cold clients; goal: 0 × 429 and at most one window over the floor of ceil(calls / ${LIMIT}) windows.`,
    '',
    '| scenario | calls | requests sent | 429s | failed calls | wall time | floor | over the floor |',
    '|---|---|---|---|---|---|---|---|',
  ];
  let met = true;
  for (const r of runs) {
    const over = r.wallMs - r.floorMs;
    met &&= r.limited === 0 && r.failed === 0 && over <= WINDOW_MS;
    rows.push(
      `| ${r.scenario} | ${r.calls} | ${r.sent} | ${r.limited} | ${r.failed} | ${(r.wallMs / 1000).toFixed(2)} s | ${(r.floorMs / 1000).toFixed(0)} s | ${(over / WINDOW_MS).toFixed(2)} windows |`,
    );
  }
  return { rows, met };
}
