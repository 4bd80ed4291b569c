/**
 * `npm run bench`: every figure as a ratio against raw fetch measured in the
 * same run, interleaved and warmed up; then the quota under load. Writes
 * bench/RESULTS.md.
 *
 *   npm run bench [-- --quick] [-- --baseline DIR]
 *
 * `--baseline DIR` also measures another build of the SDK (a `dist/` built
 * from an earlier commit) in the same rotation, for before/after figures.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import createClient from 'openapi-fetch';
import type { paths } from '../generated/schema.js';
import { checkNewPet, checkPet, checkPets } from '../src/operations.js';
import { PetSchema, PetsSchema } from '../src/validation/schemas.js';
import { installInto, packTarball } from '../test/package/pack.js';
import { BUDGET, measureBundle, measurePlain } from '../test/package/size.js';
import { dialectRows } from './dialects.js';
import { quotaBench, quotaReport } from './quota.js';
import { median, p99, perCall, rotate, stubPetFetch } from './stats.js';

const QUICK = process.argv.includes('--quick');
const baselineAt = process.argv.indexOf('--baseline');
const BASELINE = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;
const ROUNDS = QUICK ? 2 : 5;
const SEQUENTIAL = QUICK ? 100 : 300;
// Throughput is measured in short batches, rotating the clients, so that a slow
// moment of the machine falls on every client alike; the median batch counts.
const BATCH = 250;
const BATCHES = QUICK ? 8 : 24;
const IN_FLIGHT = 50;
const KEY = 'bench-key';

type Sdk = typeof import('../src/index.js');
const sdkModule = (await import(new URL('../dist/index.js', import.meta.url).href)) as Sdk;
const { PetsClient } = sdkModule;
const baselineModule = BASELINE
  ? ((await import(
      new URL(`${BASELINE.replace(/\/$/, '')}/index.js`, `file://${process.cwd()}/`).href
    )) as Sdk)
  : undefined;

// --- the server, in its own process -------------------------------------------
const server = spawn(process.execPath, [new URL('./server.mjs', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise<number>((resolve) =>
  server.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
);
const base = `http://127.0.0.1:${port}/v1`;
process.on('exit', () => server.kill());

type Op = 'listPets(100)' | 'getPet' | 'createPet';
type Runner = Record<Op, () => Promise<unknown>>;
const auth = { authorization: `Bearer ${KEY}` };
// What the bench server answers to a POST (its first pet), so that the answer agrees with the request.
const newPet = { name: 'Rex', categoryId: 1, status: 'available' as const };

const raw: Runner = {
  'listPets(100)': () => fetch(`${base}/pets?limit=100`, { headers: auth }).then((r) => r.json()),
  getPet: () => fetch(`${base}/pets/1`, { headers: auth }).then((r) => r.json()),
  createPet: () =>
    fetch(`${base}/pets`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(newPet),
    }).then((r) => r.json()),
};
// The floor of any client that behaves like this SDK: raw fetch plus what the
// contract needs on every call (a per-attempt timeout that aborts the request,
// and the response checked against the spec), with nothing else.
const withTimeout = <T>(send: (signal: AbortSignal) => Promise<T>): Promise<T> => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  return send(controller.signal).finally(() => clearTimeout(timer));
};
const floor: Runner = {
  'listPets(100)': () =>
    withTimeout((signal) =>
      fetch(`${base}/pets?limit=100`, { headers: auth, signal }).then((r) => r.json()),
    ).then(checkPets),
  getPet: () =>
    withTimeout((signal) =>
      fetch(`${base}/pets/1`, { headers: auth, signal }).then((r) => r.json()),
    ).then(checkPet),
  createPet: () =>
    withTimeout((signal) =>
      fetch(`${base}/pets`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(checkNewPet(newPet)),
        signal,
      }).then((r) => r.json()),
    ).then(checkPet),
};
const api = createClient<paths>({ baseUrl: base, headers: auth });
const bare: Runner = {
  'listPets(100)': () => api.GET('/pets', { params: { query: { limit: 100 } } }),
  getPet: () => api.GET('/pets/{petId}', { params: { path: { petId: 1 } } }),
  createPet: () => api.POST('/pets', { body: newPet }),
};
// The lightest peer on the same stack: openapi-fetch and zod/mini, no retries.
const peer: Runner = {
  'listPets(100)': () =>
    api.GET('/pets', { params: { query: { limit: 100 } } }).then((r) => PetsSchema.parse(r.data)),
  getPet: () =>
    api
      .GET('/pets/{petId}', { params: { path: { petId: 1 } } })
      .then((r) => PetSchema.parse(r.data)),
  createPet: () => api.POST('/pets', { body: newPet }).then((r) => PetSchema.parse(r.data)),
};
// Each client gets a store of its own build: both builds in one process would
// otherwise share the process-wide one, which only one of them made.
const own = (module: Sdk) => ({
  apiKey: KEY,
  baseUrl: base,
  deprecationWarnings: false,
  quotaStore: new module.MemoryQuotaStore(),
});
const sdkRunner = (module: Sdk): Runner => {
  const sdk = new module.PetsClient(own(module));
  return {
    'listPets(100)': () => sdk.listPets({ limit: 100 }),
    getPet: () => sdk.getPet(1),
    createPet: () => sdk.createPet(newPet),
  };
};
const SDK = '@animal-store/sdk';
const PEER = 'openapi-fetch + zod/mini';
const BASE = '@animal-store/sdk (baseline)';
const clients: Record<string, Runner> = {
  'raw fetch': raw,
  'fetch + timeout + checks (floor)': floor,
  'openapi-fetch': bare,
  [PEER]: peer,
  [SDK]: sdkRunner(sdkModule),
  ...(baselineModule ? { [BASE]: sdkRunner(baselineModule) } : {}),
};
type Name = string;
const names = Object.keys(clients);
const runner = (name: string) => clients[name] as Runner;

// --- warm-up -----------------------------------------------------------------
for (const name of names)
  for (const op of Object.values(runner(name))) for (let i = 0; i < 200; i++) await op();

// --- sequential latency --------------------------------------------------------
// Interleaved call by call (in a rotating order), so that a slow moment of the
// machine falls on every client alike.
const latency = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const op of ['listPets(100)', 'getPet', 'createPet'] as Op[]) {
    for (let i = 0; i < SEQUENTIAL; i++) {
      for (const name of rotate(names, i + round)) {
        const t = performance.now();
        await runner(name)[op]();
        const elapsed = performance.now() - t;
        const key = `${name}|${op}`;
        const samples = latency.get(key) ?? [];
        samples.push(elapsed);
        latency.set(key, samples);
      }
    }
  }
}

// --- throughput, 50 in flight ------------------------------------------------------
async function throughput(run: () => Promise<unknown>): Promise<number> {
  let started = 0;
  const t = performance.now();
  const worker = async () => {
    while (started < BATCH) {
      started++;
      await run();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return BATCH / ((performance.now() - t) / 1000);
}
const rates = new Map<Name, number[]>(names.map((name) => [name, []]));
for (let batch = 0; batch < BATCHES; batch++) {
  for (const name of rotate(names, batch)) {
    rates.get(name)!.push(await throughput(runner(name)['listPets(100)']));
  }
}
server.kill();

// --- client-side cost per call, network removed (stub fetch) ------------------------
// The stub stands in for the platform fetch (what a client without the fetch
// option calls) and, separately, is passed as the fetch option, which the SDK
// calls as the platform's would be, with the URL and a plain init.
const stub = stubPetFetch();
const platformFetch = globalThis.fetch;
globalThis.fetch = stub as typeof fetch;
// Loaded again with the stub in place, so that the fetch it finds is the platform's.
const stubModule = (await import(new URL('../dist/index.js?stub', import.meta.url).href)) as Sdk;
const stubPlatform = new stubModule.PetsClient(own(stubModule));
const stubOption = new PetsClient({ ...own(sdkModule), fetch: stub });
const stubApi = createClient<paths>({ baseUrl: base, headers: auth });
const stubBaseline = baselineModule
  ? new baselineModule.PetsClient(own(baselineModule))
  : undefined;
const stubRuns: Record<string, () => Promise<unknown>> = {
  raw: () => fetch(`${base}/pets/1`, { headers: auth }).then((r) => r.json()),
  floor: () =>
    withTimeout((signal) =>
      fetch(`${base}/pets/1`, { headers: auth, signal }).then((r) => r.json()),
    ).then(checkPet),
  bare: () => stubApi.GET('/pets/{petId}', { params: { path: { petId: 1 } } }),
  peer: () =>
    stubApi
      .GET('/pets/{petId}', { params: { path: { petId: 1 } } })
      .then((r) => PetSchema.parse(r.data)),
  platform: () => stubPlatform.getPet(1),
  option: () => stubOption.getPet(1),
  ...(stubBaseline ? { baseline: () => stubBaseline.getPet(1) } : {}),
};
const STUB_N = 300;
const stubTimes: Record<string, number[]> = Object.fromEntries(
  Object.keys(stubRuns).map((key) => [key, [] as number[]]),
);
for (const run of Object.values(stubRuns)) await perCall(run, 5000);
for (let round = 0; round < (QUICK ? 40 : 120); round++) {
  for (const key of rotate(Object.keys(stubRuns), round)) {
    stubTimes[key]!.push(await perCall(stubRuns[key]!, STUB_N));
  }
}
globalThis.fetch = platformFetch;
// The same, each client alone in a process of its own (no other client's code loaded beside it).
const aloneUs = Object.fromEntries(
  execFileSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(new URL('stub.ts', import.meta.url)), '--alone'],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/))
    .map(([name, us]) => [name, Number.parseFloat(us ?? '')]),
) as Record<string, number>;

// --- validation alone ------------------------------------------------------------------
const hundred = JSON.parse(
  JSON.stringify(
    Array.from({ length: 100 }, (_, i) => ({
      id: i + 1,
      name: `p${i}`,
      categoryId: 1,
      status: 'sold',
    })),
  ),
);
const validate = async () => PetsSchema.safeParse(hundred);
const fastCheck = async () => checkPets(hundred);
const validationUs: number[] = [];
const fastUs: number[] = [];
await perCall(validate, 20000);
await perCall(fastCheck, 20000);
for (let round = 0; round < ROUNDS; round++) {
  validationUs.push(await perCall(validate, 20000));
  fastUs.push(await perCall(fastCheck, 20000));
}

// --- bundle size ---------------------------------------------------------------------------
const bundle = await measureBundle();
const plain = await measurePlain();

// --- cold import of the installed package ------------------------------------------------
const project = installInto([packTarball()], 'animal-store-bench-');
const time = (code: string) => {
  const t = performance.now();
  execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: project });
  return performance.now() - t;
};
// An empty ESM package installed alongside: the floor any package pays.
const emptyPackage = join(project, 'node_modules', 'bench-empty-package');
mkdirSync(emptyPackage, { recursive: true });
writeFileSync(
  join(emptyPackage, 'package.json'),
  JSON.stringify({ name: 'bench-empty-package', type: 'module', exports: './index.js' }),
);
writeFileSync(join(emptyPackage, 'index.js'), 'export {};\n');
// Each sample runs `node -e ""`, the SDK's import and the empty package's back
// to back, in rotating order, so that the machine's slow and fast moments
// cancel; the median difference counts.
const coldCases = {
  base: '',
  sdk: "import '@animal-store/sdk';",
  empty: "import 'bench-empty-package';",
};
const coldTimes = { base: [] as number[], sdk: [] as number[], empty: [] as number[] };
const coldDiff: number[] = [];
const emptyDiff: number[] = [];
for (let i = 0; i < (QUICK ? 12 : 40); i++) {
  const sample = { base: 0, sdk: 0, empty: 0 };
  for (const key of rotate(Object.keys(coldCases) as (keyof typeof coldCases)[], i)) {
    sample[key] = time(coldCases[key]);
    coldTimes[key].push(sample[key]);
  }
  coldDiff.push(sample.sdk - sample.base);
  emptyDiff.push(sample.empty - sample.base);
}
// The same imports timed inside the process, free of process start-up noise.
const importTime = (specifier: string) =>
  Number(
    execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const t = performance.now(); await import('${specifier}'); console.log(performance.now() - t);`,
      ],
      { cwd: project, encoding: 'utf8' },
    ),
  );
const importMs: number[] = [];
const emptyImportMs: number[] = [];
for (let i = 0; i < (QUICK ? 8 : 20); i++) {
  importMs.push(importTime('@animal-store/sdk'));
  emptyImportMs.push(importTime('bench-empty-package'));
}

// --- the quota under load ---------------------------------------------------------------------------
const quota = quotaReport(await quotaBench(PetsClient, QUICK ? 1 : 2));

// --- header dialects ---------------------------------------------------------------------------
const dialects = await dialectRows({
  'this build': sdkModule,
  ...(baselineModule ? { baseline: baselineModule } : {}),
});

// --- report ---------------------------------------------------------------------------------------
const ms = (x: number) => `${x.toFixed(3)} ms`;
const rows: string[] = [];
const verdicts: string[] = [];
const target = (label: string, value: string, ok: boolean, goal: string) =>
  verdicts.push(`| ${label} | ${value} | ${goal} | ${ok ? 'met' : 'NOT met'} |`);
const lat = (name: string, op: Op) => median(latency.get(`${name}|${op}`)!);
const rate = (name: string) => median(rates.get(name)!);
const stubUs = (key: string) => median(stubTimes[key]!);

rows.push(
  '| operation | client | median | p99 | median ratio vs raw fetch |',
  '|---|---|---|---|---|',
);
for (const op of ['listPets(100)', 'getPet', 'createPet'] as Op[]) {
  for (const name of names) {
    const xs = latency.get(`${name}|${op}`)!;
    rows.push(
      `| ${op} | ${name} | ${ms(median(xs))} | ${ms(p99(xs))} | ${(median(xs) / lat('raw fetch', op)).toFixed(2)}× |`,
    );
  }
}
const ratio = (name: string) => lat(name, 'listPets(100)') / lat('raw fetch', 'listPets(100)');
target(
  'listPets(100) median latency',
  `${ratio(SDK).toFixed(2)}× raw fetch (${PEER}: ${ratio(PEER).toFixed(2)}×)`,
  ratio(SDK) <= ratio(PEER),
  `≤ ${PEER}`,
);

rows.push(
  '',
  `| throughput, listPets(100), ${IN_FLIGHT} in flight | requests/s (median of ${BATCHES} batches of ${BATCH}) | ratio vs raw fetch |`,
  '|---|---|---|',
);
for (const name of names) {
  rows.push(
    `| ${name} | ${rate(name).toFixed(0)} | ${(rate(name) / rate('raw fetch')).toFixed(2)}× |`,
  );
}
const rateOf = (name: string) => rate(name) / rate('raw fetch');
target(
  '50-in-flight throughput',
  `${rateOf(SDK).toFixed(2)}× raw fetch (${PEER}: ${rateOf(PEER).toFixed(2)}×)`,
  rateOf(SDK) >= rateOf(PEER),
  `≥ ${PEER}`,
);

const over = (key: string) => stubUs(key) - stubUs('raw');
rows.push(
  '',
  '| getPet with a stub fetch (no network) | µs per call | overhead |',
  '|---|---|---|',
  `| raw: stub + res.json() | ${stubUs('raw').toFixed(2)} | |`,
  `| fetch + timeout + checks (floor) | ${stubUs('floor').toFixed(2)} | +${over('floor').toFixed(2)} |`,
  `| openapi-fetch alone, no validation | ${stubUs('bare').toFixed(2)} | +${over('bare').toFixed(2)} |`,
  `| ${PEER} | ${stubUs('peer').toFixed(2)} | +${over('peer').toFixed(2)} |`,
  `| ${SDK}, platform fetch (the default) | ${stubUs('platform').toFixed(2)} | +${over('platform').toFixed(2)} |`,
  `| ${SDK}, fetch option (called with url and init) | ${stubUs('option').toFixed(2)} | +${over('option').toFixed(2)} |`,
  ...(stubTimes.baseline
    ? [
        `| ${BASE}, platform fetch | ${stubUs('baseline').toFixed(2)} | +${over('baseline').toFixed(2)} |`,
      ]
    : []),
);
const alone = (key: string) => aloneUs[key]! - aloneUs.raw!;
rows.push(
  '',
  `Each alone in a process of its own (\`bench/stub.ts --alone\`): raw ${aloneUs.raw?.toFixed(2)} µs, ${PEER} +${alone('peer').toFixed(2)} µs, ${SDK} +${alone('this build').toFixed(2)} µs.`,
);
target(
  'getPet client-side overhead (stub fetch), interleaved',
  `+${over('platform').toFixed(2)} µs (${PEER}: +${over('peer').toFixed(2)} µs)`,
  over('platform') <= over('peer'),
  `≤ ${PEER}`,
);
target(
  'getPet client-side overhead (stub fetch), alone',
  `+${alone('this build').toFixed(2)} µs (${PEER}: +${alone('peer').toFixed(2)} µs)`,
  alone('this build') <= alone('peer'),
  `≤ ${PEER}`,
);

rows.push(
  '',
  `Validation alone, 100 pets: Zod (zod/mini) safeParse ${median(validationUs).toFixed(2)} µs; the fast check the client runs (Zod only judges what it declines) ${median(fastUs).toFixed(2)} µs.`,
);

const kb = (n: number) => `${(n / 1024).toFixed(2)} KiB`;
rows.push(
  '',
  `Browser bundle of \`import { PetsClient }\` with every dependency (esbuild, minified, code splitting on): loaded up front ${kb(bundle.initial.minified)} min, **${kb(bundle.initial.gzip)} min+gz**, ${kb(bundle.initial.brotli)} min+br; with the Zod chunk that loads on the first declined value ${kb(bundle.total.minified)} min, **${kb(bundle.total.gzip)} min+gz**, ${kb(bundle.total.brotli)} min+br.`,
);
rows.push(
  '',
  `One \`listPets\` call bundled plainly (\`esbuild --bundle --minify\`, no splitting: Zod inlined): ${kb(plain.minified)} min, **${kb(plain.gzip)} min+gz**, ${kb(plain.brotli)} min+br.`,
);
target(
  'browser bundle, all-in (plain --bundle --minify, min+gz)',
  kb(plain.gzip),
  plain.gzip <= 20 * 1024,
  '≤ 20 KiB',
);

const cold = median(coldDiff);
rows.push(
  '',
  `Cold import of the installed tarball: \`node -e "import '@animal-store/sdk'"\` ${ms(median(coldTimes.sdk))} vs \`node -e ""\` ${ms(median(coldTimes.base))}; median of ${coldDiff.length} paired differences **+${cold.toFixed(1)} ms** (an empty ESM package: +${median(emptyDiff).toFixed(1)} ms). Timed inside the process (medians of ${importMs.length}), \`await import('@animal-store/sdk')\` takes ${ms(median(importMs))}, and the same import of an empty ESM package installed alongside ${ms(median(emptyImportMs))}: the SDK itself costs **+${(median(importMs) - median(emptyImportMs)).toFixed(1)} ms** over that floor.`,
);
target('cold import over node -e ""', `+${cold.toFixed(1)} ms`, cold <= 8, '≤ +8 ms');
target(
  'quota: 429s, and wall time over the floor',
  'see "The quota under load"',
  quota.met,
  '0 × 429, ≤ one window over',
);

const versions = JSON.parse(
  execFileSync('npm', ['ls', '--depth=0', '--json', 'zod', 'openapi-fetch', 'p-retry'], {
    encoding: 'utf8',
  }),
) as { dependencies: Record<string, { version: string }> };
const ROUNDS_NOTE =
  '3 rounds of 50 concurrent `listPets` against a loopback service that answers after 20 ms, with a budget far larger than the calls written in each dialect (bench/dialects.ts).';
const report = `# Benchmark results

Measured ${new Date().toISOString()} by \`npm run bench${QUICK ? ' -- --quick' : ''}${BASELINE ? ' -- --baseline …' : ''}\` on ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}-${process.arch}.
Versions: ${Object.entries(versions.dependencies)
  .map(([n, { version }]) => `${n} ${version}`)
  .join(
    ', ',
  )}. The SDK is measured as built (\`dist/\`)${BASELINE ? `; "${BASE}" is another build, measured in the same rotation` : ''}.
Server: node:http in a separate process on 127.0.0.1; ${ROUNDS} rounds after a warm-up; ${SEQUENTIAL} sequential calls per client, operation and round, interleaved call by call.

## Targets

| target | measured | goal | verdict |
|---|---|---|---|
${verdicts.join('\n')}

Budgets in \`npm test\` (test/package/size.ts): ${kb(BUDGET.initial)} min+gz up front, ${kb(BUDGET.total)} min+gz with the Zod chunk, ${kb(BUDGET.plain)} min+gz for one call bundled plainly.

## Details

${rows.join('\n')}

## The quota under load

${quota.rows.join('\n')}

## Header dialects

${ROUNDS_NOTE}

${dialects.join('\n')}
`;
// The fleet and observe benchmarks (`npm run bench:fleet`, `bench:observe`)
// keep their own sections of the file.
const resultsFile = new URL('./RESULTS.md', import.meta.url);
const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
const kept = ['fleet', 'observe'].flatMap(
  (name) =>
    new RegExp(`<!-- ${name}:start -->[\\s\\S]*<!-- ${name}:end -->`).exec(previous)?.[0] ?? [],
);
writeFileSync(resultsFile, [report, ...kept].join('\n') + (kept.length ? '\n' : ''));
console.log(report);
process.exit(0);
