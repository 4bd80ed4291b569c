/**
 * `npx tsx bench/stub.ts [--alone] [DIST …]`: the client-side cost of one
 * getPet with a stub fetch (no network), for the built SDK (and other builds
 * given), the lightest peer on the same stack (openapi-fetch + zod/mini, no
 * retries) and raw fetch, interleaved over rounds; the median µs per call of
 * each. `--alone` runs each client instead in a process of its own, with no
 * other client's code loaded or warmed beside it.
 */
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import createClient from 'openapi-fetch';
import type { paths } from '../generated/schema.js';
import { PetSchema } from '../src/validation/schemas.js';
import { median, perCall, rotate, stubPetFetch } from './stats.js';

type Sdk = typeof import('../src/index.js');
const alone = process.argv.includes('--alone');
const only = process.env.STUB_ONLY;
const dists = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
// In place before the builds load: the fetch they find is the platform's.
const stub = stubPetFetch();
globalThis.fetch = stub as typeof fetch;
const builds: [string, Sdk][] = [
  ['this build', (await import(new URL('../dist/index.js', import.meta.url).href)) as Sdk],
];
for (const dir of dists) {
  builds.push([
    dir,
    (await import(pathToFileURL(`${dir.replace(/\/$/, '')}/index.js`).href)) as Sdk,
  ]);
}
const base = 'http://127.0.0.1:9/v1';
const api = createClient<paths>({ baseUrl: base, headers: { authorization: 'Bearer k' } });
const runs: Record<string, () => Promise<unknown>> = {
  raw: () => stub(`${base}/pets/1`).then((r) => r.json()),
  peer: () =>
    api
      .GET('/pets/{petId}', { params: { path: { petId: 1 } } })
      .then((r) => PetSchema.parse(r.data)),
};
for (const [name, sdk] of builds) {
  const client = new sdk.PetsClient({
    apiKey: 'bench-key',
    baseUrl: base,
    deprecationWarnings: false,
    quotaStore: new sdk.MemoryQuotaStore(),
  });
  runs[name] = () => client.getPet(1);
}
const names = Object.keys(runs).filter((name) => only === undefined || name === only);
if (alone && only === undefined) {
  for (const name of Object.keys(runs)) {
    const out = execFileSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      env: { ...process.env, STUB_ONLY: name },
      encoding: 'utf8',
    });
    console.log(`${out.trim()} (alone)`);
  }
  process.exit(0);
}
const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (const name of names) await perCall(runs[name]!, 2000);
for (let round = 0; round < 30; round++) {
  for (const name of rotate(names, round)) times[name]!.push(await perCall(runs[name]!, 500));
}
if (only !== undefined) {
  console.log(`${only.padEnd(24)} ${median(times[only]!).toFixed(2)} µs`);
  process.exit(0);
}
const raw = median(times.raw!);
for (const name of names) {
  const us = median(times[name]!);
  console.log(`${name.padEnd(24)} ${us.toFixed(2)} µs  +${(us - raw).toFixed(2)} µs over raw`);
}
