/**
 * `npx tsx bench/path.ts`: which files of src/ one retried call runs code in
 * (listPets: a 429 with Retry-After, then 200, on a stub fetch), read from
 * V8's precise coverage: a file counts when any function of it ran during
 * the call (module loading and the client's construction are left out).
 */
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { MemoryQuotaStore, PetsClient } from '../src/index.js';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

const pet = { id: 1, name: 'Rex', categoryId: 3, status: 'available' };
let sent = 0;
const client = new PetsClient({
  apiKey: 'sk_path_0123456789',
  baseUrl: 'http://127.0.0.1:9/v1',
  quotaStore: new MemoryQuotaStore(),
  logLevel: 'off',
  fetch: async () =>
    ++sent === 1
      ? new Response(JSON.stringify({ code: 'rate_limited', message: 'slow', status: 429 }), {
          status: 429,
          headers: { 'content-type': 'application/json', 'retry-after': '0.2' },
        })
      : new Response(JSON.stringify([pet]), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        }),
});
// Warm once, so that what is counted is the call, not the first load of a module.
await client.listPets();
sent = 0;
await session.post('Profiler.takePreciseCoverage');
await client.listPets();
const { result } = await session.post('Profiler.takePreciseCoverage');
const files = new Set<string>();
for (const script of result) {
  if (!script.url.startsWith('file://')) continue;
  const path = fileURLToPath(script.url);
  if (!path.startsWith(src)) continue;
  if (script.functions.some((f) => f.ranges[0]!.count > 0)) files.add(path.slice(src.length));
}
console.log(`${files.size} files of src/ ran code in one retried call (${sent} attempts):`);
for (const file of [...files].sort()) console.log(`  src/${file}`);
