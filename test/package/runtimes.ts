/**
 * Runtime matrix from the packed tarball: installs it into a temporary project
 * and runs an ESM and a CommonJS consumer under Node 20 (this machine's), Node
 * 22 and 24 (npm packages node-<os>-<arch>@22/24), Bun and Deno (npm packages
 * bun, deno), each doing list/create/get against the loopback mock, and one
 * call with a bad input, whose issues come from the lazily loaded Zod chunk.
 * Prints one line per runtime × module system; exits 1 if any fails.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SAMPLE_PETS, startMockServer } from '../../src/mock/index.js';
import { installInto, packTarball, root } from './pack.js';

// The consumer must exit on its own: a leaked timer or socket would hang it.
const consumer = (load: string) => `${load}
const client = new sdk.PetsClient({ apiKey: 'matrix-key', baseUrl: process.env.MOCK_URL, deprecationWarnings: false });
const listed = await client.listPets({ limit: 2 });
const created = await client.createPet({ name: 'Matrix', categoryId: 7, status: 'pending' });
const fetched = await client.getPet(created.id);
let typed = false;
try { await client.getPet(987654321); } catch (error) { typed = error instanceof sdk.NotFoundError && error instanceof sdk.AnimalStoreError; }
// A declined value loads Zod (a separate chunk in the ESM build) for the issues.
let issues = [];
try { await client.listPets({ limit: 0 }); } catch (error) { if (error instanceof sdk.RequestValidationError) issues = error.issues; }
if (listed.length !== 2 || fetched.name !== 'Matrix' || !typed || issues[0]?.path[0] !== 'limit') throw new Error('unexpected results');
console.log('ok');
`;

// The mock entry loads msw, which keeps Deno's event loop alive: this check exits explicitly.
const mockCheck = (load: string) => `${load}
if (typeof mock.createHandlers !== 'function' || typeof mock.startMockServer !== 'function') throw new Error('mock entry incomplete');
if (mock.createHandlers({ apiKeys: ['k'] }).length !== 3) throw new Error('unexpected handlers');
console.log('ok');
process.exit(0);
`;

// The Redis entry loads no Redis client (none is installed here): it adapts
// any Lua-capable one, and falls back to a local share when Redis fails.
const redisCheck = (load: string) => `${load}
const errors = [];
const store = new RedisQuotaStore({
  client: { eval: async () => { throw new Error('no redis here'); } },
  logger: { error: (line) => errors.push(line), warn: () => {} },
});
store.admit('b'.repeat(64), { leaseMs: 1000 }).then((admission) => {
  if (!admission.lease?.startsWith('~') || errors.length !== 1) throw new Error('unexpected admission');
  console.log('ok');
});
`;

const FILES: Record<string, string> = {
  'esm.mjs': consumer("import * as sdk from '@animal-store/sdk';"),
  // CommonJS has no top-level await: the same steps in an async function.
  'cjs.cjs': `const sdk = require('@animal-store/sdk');
(async () => {${consumer('')}})().catch((error) => { console.error(error); process.exit(1); });
`,
  'mock-esm.mjs': mockCheck("import * as mock from '@animal-store/sdk/mock';"),
  'mock-cjs.cjs': mockCheck("const mock = require('@animal-store/sdk/mock');"),
  'redis-esm.mjs': redisCheck("import { RedisQuotaStore } from '@animal-store/sdk/redis';"),
  'redis-cjs.cjs': redisCheck("const { RedisQuotaStore } = require('@animal-store/sdk/redis');"),
};

const run = promisify(execFile);
const cache = join(root, 'node_modules', '.cache', 'animal-store-runtimes');

function runtimeBin(pkg: string, bin: string): string | undefined {
  const dir = join(cache, pkg.replace(/[@/]/g, '_'));
  const path = join(dir, 'node_modules', ...bin.split('/'));
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    const result = spawnSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--silent', '--prefix', dir, pkg],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        encoding: 'utf8',
      },
    );
    if (result.status !== 0) return undefined;
  }
  return existsSync(path) ? path : undefined;
}

const platform = `${process.platform}-${process.arch}`;
const runtimes: {
  name: string;
  command: () => string | undefined;
  args: (file: string) => string[];
}[] = [
  { name: `node ${process.versions.node}`, command: () => process.execPath, args: (f) => [f] },
  {
    name: 'node 22',
    command: () => runtimeBin(`node-${platform}@22`, `node-${platform}/bin/node`),
    args: (f) => [f],
  },
  {
    name: 'node 24',
    command: () => runtimeBin(`node-${platform}@24`, `node-${platform}/bin/node`),
    args: (f) => [f],
  },
  { name: 'bun', command: () => runtimeBin('bun@1', '.bin/bun'), args: (f) => [f] },
  { name: 'deno', command: () => runtimeBin('deno@2', '.bin/deno'), args: (f) => ['run', '-A', f] },
];

const tarball = packTarball();
const project = installInto([tarball], 'animal-store-matrix-');
for (const [name, text] of Object.entries(FILES)) writeFileSync(join(project, name), text);

const mock = await startMockServer({ seed: SAMPLE_PETS });
let failed = 0;
let ran = 0;
try {
  for (const runtime of runtimes) {
    const command = runtime.command();
    for (const [system, file] of [
      ['ESM', 'esm.mjs'],
      ['CJS', 'cjs.cjs'],
      ['ESM ./mock', 'mock-esm.mjs'],
      ['CJS ./mock', 'mock-cjs.cjs'],
      ['ESM ./redis', 'redis-esm.mjs'],
      ['CJS ./redis', 'redis-cjs.cjs'],
    ] as const) {
      const label = `${runtime.name.padEnd(14)} ${system.padEnd(11)}`;
      if (!command) {
        console.log(`${label}  SKIP (its npm package does not install here)`);
        continue;
      }
      ran++;
      // Asynchronous: the mock server answers from this very process.
      const result = await run(command, runtime.args(file), {
        cwd: project,
        env: { ...process.env, MOCK_URL: mock.url, NO_COLOR: '1' },
        encoding: 'utf8',
        timeout: 60_000,
      }).then(
        ({ stdout, stderr }) => ({ ok: true, stdout, stderr }),
        (error: { stdout?: string; stderr?: string; message: string }) => ({
          ok: false,
          stdout: error.stdout ?? '',
          stderr: `${error.stderr ?? ''}\n${error.message.split('\n')[0]}`,
        }),
      );
      const ok = result.ok && result.stdout.trim().endsWith('ok');
      if (!ok) failed++;
      const version = runtime.name.startsWith('node')
        ? ''
        : ` ${execFileSync(command, ['--version'], { encoding: 'utf8' }).trim().split('\n')[0]}`;
      console.log(`${label}  ${ok ? 'PASS' : 'FAIL'}${version}`);
      if (!ok) console.log(`${result.stdout}${result.stderr}`.trim().replace(/^/gm, '    '));
    }
  }
} finally {
  await mock.close();
}
console.log(`runtimes: ${ran - failed} passed, ${failed} failed`);
if (failed > 0 || ran === 0) process.exit(1);
