/**
 * `npx tsx test/package/shape.ts`: the shape of the client's code (src/
 * without mock/ and redis/): its lines (and how many hold code, not only a
 * comment or nothing), its largest file, and which files of
 * src/ one retried call runs code in (listPets: a 429 with Retry-After, then
 * 200, on a stub fetch), read from V8's precise coverage: a file counts when
 * any function of it ran during the call (module loading and the client's
 * construction are left out). Exits 1 when a file is over 500 lines or a
 * retried call runs code in more than 8 files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryQuotaStore, PetsClient } from '../../src/index.js';

const MOST_LINES_A_FILE = 500;
const MOST_FILES_A_CALL = 8;

const src = fileURLToPath(new URL('../../src/', import.meta.url));
/** Lines that are neither blank nor inside a comment (a line with code and a comment counts). */
function codeLines(text: string): number {
  let count = 0;
  let inComment = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const opens = !inComment && line.startsWith('/*');
    if (!inComment && !opens && line !== '' && !line.startsWith('//')) count++;
    if (opens || inComment) inComment = !line.includes('*/');
  }
  return count;
}
const client_ = readdirSync(src, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts') && !/^(mock|redis)\//.test(file))
  .map((file) => {
    const text = readFileSync(join(src, file), 'utf8');
    return { file, lines: text.split('\n').length - 1, code: codeLines(text) };
  })
  .sort((a, b) => b.lines - a.lines);
const total = client_.reduce((sum, { lines }) => sum + lines, 0);
const code = client_.reduce((sum, file) => sum + file.code, 0);
const largest = client_[0]!;
console.log(
  `src/ without mock/ and redis/: ${total} lines (${code} of code, the rest comments and blank lines) in ${client_.length} files; the largest, src/${largest.file}, ${largest.lines} lines (at most ${MOST_LINES_A_FILE})`,
);
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
console.log(
  `${files.size} files of src/ ran code in one retried call (${sent} attempts; at most ${MOST_FILES_A_CALL}): ${[...files].sort().join(', ')}`,
);
if (largest.lines > MOST_LINES_A_FILE || files.size > MOST_FILES_A_CALL) process.exit(1);
