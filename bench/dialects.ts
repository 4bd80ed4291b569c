/**
 * Header dialects: 3 rounds of 50 concurrent `listPets` against a loopback
 * service that answers after 20 ms with a budget far larger than the calls,
 * written in each dialect a gateway may send. Headers the client cannot use
 * must leave it as it is with none (all 50 in flight), never one at a time.
 * The server runs in this process; each build gets a store of its own.
 *
 *   npx tsx bench/dialects.ts [--baseline DIR]   (run.ts includes it)
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DIALECTS, type DialectName, startDialectServer } from '../test/helpers/dialect-server.js';
import { rotate } from './stats.js';

type Sdk = typeof import('../src/index.js');

const ROUNDS = 3;
const CALLS = 50;

async function measure(sdk: Sdk, dialect: DialectName) {
  const server = await startDialectServer({
    dialect: DIALECTS[dialect],
    limit: 1_000_000,
    windowMs: 60_000,
    delayMs: 20,
  });
  try {
    const client = new sdk.PetsClient({
      apiKey: 'bench-dialects',
      baseUrl: server.url,
      quotaStore: new sdk.MemoryQuotaStore(),
      logLevel: 'off',
    });
    const started = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(Array.from({ length: CALLS }, () => client.listPets()));
    }
    return { inFlight: server.stats.mostInFlight, ms: performance.now() - started };
  } finally {
    await server.close();
  }
}

/** The dialects table, one pair of columns per build. */
export async function dialectRows(builds: Record<string, Sdk>): Promise<string[]> {
  const names = Object.keys(builds);
  const rows = [
    `| headers on every answer | ${names.map((n) => `${n}: most in flight | ${n}: time for ${ROUNDS * CALLS} calls`).join(' | ')} |`,
    `|---|${names.map(() => '---|---').join('|')}|`,
  ];
  // A round of each build first, so that no row pays for warming up.
  for (const name of names) await measure(builds[name]!, 'interface');
  for (const [row, dialect] of (Object.keys(DIALECTS) as DialectName[]).entries()) {
    const cells = new Map<string, string>();
    // Each row starts with another build.
    for (const name of rotate(names, row)) {
      const { inFlight, ms } = await measure(builds[name]!, dialect);
      cells.set(name, `${inFlight} | ${Math.round(ms)} ms`);
    }
    rows.push(`| ${dialect} | ${names.map((name) => cells.get(name)).join(' | ')} |`);
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--baseline');
  const builds: Record<string, Sdk> = {
    'this build': (await import(new URL('../dist/index.js', import.meta.url).href)) as Sdk,
  };
  if (at > 0) {
    const dir = process.argv[at + 1]!.replace(/\/$/, '');
    builds.baseline = (await import(pathToFileURL(`${dir}/index.js`).href)) as Sdk;
  }
  console.log((await dialectRows(builds)).join('\n'));
}
