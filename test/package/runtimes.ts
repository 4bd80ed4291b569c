/**
 * Consumer installs and runtime matrix from the packed tarball.
 *
 * First a bare install (the SDK alone, as `npm install @animal-store/sdk`
 * does): it must add exactly one package, the main and Redis entries must
 * work, and importing `@animal-store/sdk/mock` must fail, in ESM and CJS, with
 * the message that says to install msw. Then the SDK with msw installs into
 * another project, and the runtime matrix an ESM and a CommonJS consumer under Node 20 (this machine's), Node
 * 22 and 24 (npm packages node-<os>-<arch>@22/24), Bun and Deno (npm packages
 * bun, deno), each doing list/create/get against the loopback mock, and one
 * call with a bad input, whose issues come from the lazily loaded Zod chunk;
 * and a Cloudflare Worker (the SDK bundled by esbuild, run by workerd, the npm
 * package, with and without `nodejs_compat`).
 * Prints one line per runtime × module system; exits 1 if any fails.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { SAMPLE_PETS, startMockServer } from '../../src/mock/index.js';
import { MSW_MISSING } from '../../src/mock/msw-missing.js';
import { platform, runtimeBin } from '../helpers/runtimes.js';
import { sleep } from '../helpers/sleep.js';
import { installInto, packTarball } from './pack.js';

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
// any Lua-capable one, and holds its calls while Redis fails.
const redisCheck = (load: string) => `${load}
const errors = [];
const store = new RedisQuotaStore({
  client: { eval: async () => { throw new Error('no redis here'); } },
  logger: { error: (line) => errors.push(line), warn: () => {} },
});
store.admit('b'.repeat(64), { leaseMs: 1000 }).then((admission) => {
  if (admission.reason !== 'budget-unknown' || errors.length !== 1) throw new Error('unexpected admission');
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

// A Cloudflare Worker: the SDK bundled by esbuild from `project` as a worker
// bundler does, served by workerd on loopback; its `fetch` reaches the mock
// through a `network` service that allows local addresses only.
const WORKER = `import { PetsClient, NotFoundError } from '@animal-store/sdk';
export default {
  async fetch(request) {
    const baseUrl = new URL(request.url).searchParams.get('mock');
    const client = new PetsClient({ apiKey: 'worker-key', baseUrl, deprecationWarnings: false, logLevel: 'off' });
    const created = await client.createPet({ name: 'Worker', categoryId: 5 });
    const fetched = await client.getPet(created.id);
    const listed = await client.listPets({ limit: 100 });
    const missing = await client.getPet(987654321).then(() => false, (error) => error instanceof NotFoundError);
    const ok = fetched.name === 'Worker' && listed.some((pet) => pet.id === created.id) && missing && client.rateLimit?.limit > 0;
    return new Response(ok ? 'ok' : JSON.stringify({ created, fetched, listed, missing, rateLimit: client.rateLimit }));
  },
};
`;

// The Worker of docs/workers.md, as a user copies it: its key and base address from `env`.
const README_WORKER = (() => {
  const readme = readFileSync(new URL('../../docs/workers.md', import.meta.url), 'utf8');
  const at = readme.indexOf('which npm test runs in workerd');
  const start = readme.indexOf('```ts\n', at) + '```ts\n'.length;
  return readme.slice(start, readme.indexOf('\n```', start));
})();
const DOC_CONFIG = (() => {
  const guide = readFileSync(new URL('../../docs/workers.md', import.meta.url), 'utf8');
  const start = guide.indexOf('```text\n') + '```text\n'.length;
  return guide.slice(start, guide.indexOf('\n```', start));
})();

/** Whether README's Worker answered the available animals of the mock, Rex among them. */
function listsAvailable(answer: string): boolean {
  try {
    const pets = JSON.parse(answer) as { name?: unknown; status?: unknown }[];
    return (
      pets.some((pet) => pet.name === 'Rex') && pets.every((pet) => pet.status === 'available')
    );
  } catch {
    return false;
  }
}

const run = promisify(execFile);
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

/** Packages under a project's node_modules, and their bytes on disk. */
function installed(project: string): { packages: string[]; bytes: number } {
  const packages: string[] = [];
  let bytes = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else bytes += statSync(path).size;
    }
  };
  const modules = join(project, 'node_modules');
  const collect = (dir: string, scope = '') => {
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      if (name.startsWith('@') && !scope) collect(join(dir, name), `${name}/`);
      else {
        packages.push(`${scope}${name}`);
        const nested = join(dir, name, 'node_modules');
        if (existsSync(nested)) collect(nested);
      }
    }
  };
  collect(modules);
  walk(modules);
  return { packages, bytes };
}

const size = (bytes: number) => `${(bytes / 1024).toFixed(0)} kB`;
const tarball = packTarball();
let failed = 0;

// The bare install: nothing but the SDK; /mock explains what to install.
{
  const bare = installInto([tarball], 'animal-store-bare-');
  const { packages, bytes } = installed(bare);
  const alone = packages.length === 1 && packages[0] === '@animal-store/sdk';
  console.log(
    `bare install                 ${alone ? 'PASS' : 'FAIL'} ${packages.length} package(s), ${size(bytes)} (tarball ${size(statSync(tarball).size)})`,
  );
  if (!alone) {
    failed++;
    console.log(`    installed: ${packages.join(', ')}`);
  }
  const checks: Record<string, string> = {
    'main.mjs': consumer("import * as sdk from '@animal-store/sdk';"),
    'mock.mjs': `try { await import('@animal-store/sdk/mock'); console.log('loaded'); } catch (error) { console.log(error.message === ${JSON.stringify(MSW_MISSING)} && error.code === 'ERR_ANIMAL_STORE_MSW_MISSING' ? 'ok' : error.message); }`,
    'mock.cjs': `try { require('@animal-store/sdk/mock'); console.log('loaded'); } catch (error) { console.log(error.message === ${JSON.stringify(MSW_MISSING)} && error.code === 'ERR_ANIMAL_STORE_MSW_MISSING' ? 'ok' : error.message); }`,
    'redis.cjs': redisCheck("const { RedisQuotaStore } = require('@animal-store/sdk/redis');"),
    // The spec ships, and resolves through exports, for spec-driven tools.
    'spec.mjs': `import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const path = createRequire(import.meta.url).resolve('@animal-store/sdk/openapi.yaml');
console.log(/^openapi: 3/m.test(readFileSync(path, 'utf8')) ? 'ok' : 'not the spec');`,
  };
  for (const [name, text] of Object.entries(checks)) writeFileSync(join(bare, name), text);
  const mock = await startMockServer({ seed: SAMPLE_PETS });
  try {
    for (const file of Object.keys(checks)) {
      const result = await run(process.execPath, [file], {
        cwd: bare,
        env: { ...process.env, MOCK_URL: mock.url },
        encoding: 'utf8',
        timeout: 60_000,
      }).then(
        ({ stdout }) => stdout.trim(),
        (error: { stdout?: string; stderr?: string }) =>
          `${error.stdout ?? ''}${error.stderr ?? ''}`,
      );
      const ok = result.endsWith('ok');
      if (!ok) failed++;
      console.log(
        `bare install ${file.padEnd(15)} ${ok ? 'PASS' : `FAIL\n    ${result.replace(/\n/g, '\n    ')}`}`,
      );
    }
    // The loopback mock on the command line needs no msw either.
    const help = await run(join(bare, 'node_modules', '.bin', 'animal-store-mock'), ['--help'], {
      encoding: 'utf8',
    }).then(
      ({ stdout }) => stdout,
      () => '',
    );
    const cli = help.startsWith('Usage: animal-store-mock');
    if (!cli) failed++;
    console.log(`bare install animal-store-mock ${cli ? 'PASS' : 'FAIL'}`);
  } finally {
    await mock.close();
  }
}

// The SDK with msw, as a project that uses the mock installs it.
const project = installInto([tarball, 'msw@^2.7.0'], 'animal-store-matrix-');
{
  const { packages, bytes } = installed(project);
  console.log(`with msw: ${packages.length} packages, ${size(bytes)}`);
}
for (const [name, text] of Object.entries(FILES)) writeFileSync(join(project, name), text);

const mock = await startMockServer({ seed: SAMPLE_PETS });
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
  for (const nodejsCompat of [false, true]) {
    const label = `${'workerd'.padEnd(14)} ${(nodejsCompat ? 'nodejs_compat' : 'ESM').padEnd(11)}`;
    const command = runtimeBin('workerd@1', 'workerd/bin/workerd');
    if (!command) {
      console.log(`${label}  SKIP (its npm package does not install here)`);
      continue;
    }
    ran++;
    for (const [worker, what] of [
      [WORKER, ''],
      [README_WORKER, ' (docs/workers.md)'],
    ] as const) {
      const result = await inWorkerd(command, project, mock.url, nodejsCompat, worker).catch(
        (error: Error) => `FAIL ${error.message}`,
      );
      const ok = result === 'ok';
      if (!ok) failed++;
      console.log(`${label}${what}  ${ok ? 'PASS' : result}`);
    }
  }
} finally {
  await mock.close();
}
console.log(`runtimes: ${ran - failed} passed, ${failed} failed`);
if (failed > 0 || ran === 0) process.exit(1);

async function inWorkerd(
  command: string,
  project: string,
  mockUrl: string,
  nodejsCompat: boolean,
  worker: string,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-workerd-'));
  const child = { process: undefined as ReturnType<typeof spawn> | undefined };
  try {
    await build({
      stdin: { contents: worker, resolveDir: project, loader: 'ts' },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['workerd', 'worker', 'browser'],
      outfile: join(dir, 'worker.js'),
      logLevel: 'silent',
    });
    const port = await new Promise<number>((resolve) => {
      const probe = createNetServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const flags = nodejsCompat ? '"nodejs_compat"' : '';
    // The guide's Worker runs under the guide's own config, on this run's port and mock.
    const fromGuide = DOC_CONFIG.replace('127.0.0.1:8787', `127.0.0.1:${port}`)
      .replace('http://127.0.0.1:4010/v1', mockUrl)
      .replace('compatibilityFlags = []', `compatibilityFlags = [${flags}]`);
    writeFileSync(
      join(dir, 'config.capnp'),
      worker !== WORKER
        ? fromGuide
        : `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "worker.js")],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = [${flags}],
  bindings = [
    (name = "ANIMAL_STORE_API_KEY", text = "worker-key"),
    (name = "ANIMAL_STORE_BASE_URL", text = "${mockUrl}"),
  ],
);
`,
    );
    let output = '';
    child.process = spawn(command, ['serve', join(dir, 'config.capnp')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.process.stdout?.on('data', (chunk: Buffer) => {
      output += String(chunk);
    });
    child.process.stderr?.on('data', (chunk: Buffer) => {
      output += String(chunk);
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await fetch(
        `http://127.0.0.1:${port}/?mock=${encodeURIComponent(mockUrl)}`,
      ).then(
        (response) => response.text(),
        () => undefined,
      );
      const served = worker === WORKER ? answer === 'ok' : listsAvailable(answer ?? '');
      if (answer !== undefined) return served ? 'ok' : `FAIL ${answer}\n${output}`;
      if (Date.now() > deadline || child.process.exitCode !== null) {
        return `FAIL workerd did not serve: ${output.slice(0, 2000)}`;
      }
      await sleep(200);
    }
  } finally {
    child.process?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
