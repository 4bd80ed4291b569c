/**
 * `npm run bench:observe`: what seeing and extending calls costs, and what it
 * costs those who do not use it. Writes its section of bench/RESULTS.md.
 *
 * - Per call, network removed (a stub platform fetch): plain `getPet` against
 *   `withResponse.getPet`, per-call headers, four no-op hooks, tracing into an
 *   in-memory exporter, and tracing with HTTP spans; as µs over the raw stub.
 * - The browser bundle loaded up front, as built and with the tracing seam
 *   (the lookup of a provider and the lazy import) cut out, and the size of the
 *   tracing chunk that loads on the first traced call.
 * - Import time of the installed tarball, in a project without
 *   `@opentelemetry/api` and in one with it installed and a provider
 *   registered; and the first traced call, which loads the tracing chunk.
 *
 *   npm run bench:observe [-- --quick]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Plugin } from 'esbuild';
import { installInto, packTarball, root } from '../test/package/pack.js';
import { measureBundle } from '../test/package/size.js';
import { median, perCall, rotate } from './stats.js';

const QUICK = process.argv.includes('--quick');
const KEY = 'bench-key';
const BASE = 'http://127.0.0.1:9/v1';

type Sdk = typeof import('../src/index.js');
const { PetsClient, MemoryQuotaStore } = (await import(
  new URL('../dist/index.js', import.meta.url).href
)) as Sdk;

const kb = (n: number) => `${(n / 1024).toFixed(2)} kB`;

// --- per call, stub fetch ------------------------------------------------------------------
const petBody = JSON.stringify({ id: 1, name: 'Rex', categoryId: 3, status: 'available' });
const petHeaders = {
  'content-type': 'application/json',
  'x-ratelimit-limit': '1000000',
  'x-ratelimit-remaining': '999999',
  // An hour ahead of this run's clock: a reset the client believes.
  'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 3600),
};
const stub = async (_input: Request | string, _init?: RequestInit) =>
  new Response(petBody, { status: 200, headers: petHeaders });
const platformFetch = globalThis.fetch;
globalThis.fetch = stub as typeof fetch;

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
const client = (options: ConstructorParameters<typeof PetsClient>[0] = {}) =>
  new PetsClient({
    apiKey: KEY,
    baseUrl: BASE,
    deprecationWarnings: false,
    quotaStore: new MemoryQuotaStore(),
    ...options,
  });
const noop = () => undefined;
const plain = client();
const hooked = client({
  hooks: { beforeRequest: noop, afterResponse: noop, beforeRetry: noop, onError: noop },
});
const traced = client({ tracing: { tracerProvider } });
const tracedHttp = client({ tracing: { tracerProvider, httpSpans: true } });
const runs: Record<string, () => Promise<unknown>> = {
  raw: () => fetch(`${BASE}/pets/1`).then((r) => r.json()),
  plain: () => plain.getPet(1),
  withResponse: () => plain.withResponse.getPet(1),
  headers: () => plain.getPet(1, { headers: { 'x-request-id': 'r-1' } }),
  hooks: () => hooked.getPet(1),
  traced: () => traced.getPet(1),
  tracedHttp: () => tracedHttp.getPet(1),
};
const N = 300;
const times: Record<string, number[]> = Object.fromEntries(
  Object.keys(runs).map((key) => [key, [] as number[]]),
);
for (const run of Object.values(runs)) await perCall(run, 3000);
exporter.reset();
for (let round = 0; round < (QUICK ? 30 : 100); round++) {
  for (const key of rotate(Object.keys(runs), round)) {
    times[key]!.push(await perCall(runs[key]!, N));
    exporter.reset();
  }
}
globalThis.fetch = platformFetch;
const us = (key: string) => median(times[key]!);
const over = (key: string) => us(key) - us('raw');

// --- bundle up front, with and without the tracing seam ---------------------------------------
// The seam is CallContext.tracing(): the provider lookup and the lazy import.
// Cut out, a bundler drops the tracing chunk and everything only it reaches.
const withoutSeam: Plugin = {
  name: 'without-tracing-seam',
  setup(b) {
    b.onLoad({ filter: /src[\\/]call[\\/]context\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const cut = source.replace(
        /(\n {2}tracing\(\): Promise<Tracing> \| undefined \{)[\s\S]*?\n {2}\}\n/,
        '$1\n    return undefined;\n  }\n',
      );
      if (cut === source) throw new Error('the tracing seam was not found in context.ts');
      return { contents: cut, loader: 'ts' };
    });
  },
};
// From the source both times, so that only the cut differs.
const tracingChunk = (bundle: Awaited<ReturnType<typeof measureBundle>>) =>
  bundle.lazy.find((chunk) => chunk.inputs.some((i) => /tracing[\\/]otel/.test(i)))?.size.gzip ?? 0;
const source = `${root}src/index.ts`;
const asBuilt = await measureBundle(source);
const cutSeam = await measureBundle(source, [withoutSeam]);
const dist = await measureBundle();

// --- import time and the first traced call --------------------------------------------------
const tarball = packTarball();
const bare = installInto([tarball], 'animal-store-observe-bare-');
const withOtel = installInto(
  [tarball, '@opentelemetry/api@1', '@opentelemetry/sdk-trace-base@2'],
  'animal-store-observe-otel-',
);
// One fresh process per sample: the SDK's import is timed first (so that
// nothing imported before warms the module loader for it), then, in the
// project with OpenTelemetry, a provider is registered, and the first call
// is timed (stub fetch): with a provider it loads the tracing chunk.
const sample = (otel: boolean) => `const t0 = performance.now();
const { PetsClient } = await import('@animal-store/sdk');
const imported = performance.now() - t0;
${
  otel
    ? `const { trace } = await import('@opentelemetry/api');
const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
trace.setGlobalTracerProvider(new BasicTracerProvider());`
    : ''
}
const body = ${JSON.stringify(petBody)};
const headers = ${JSON.stringify(petHeaders)};
const client = new PetsClient({ apiKey: 'k', baseUrl: '${BASE}', deprecationWarnings: false,
  fetch: async () => new Response(body, { status: 200, headers }) });
const t1 = performance.now();
await client.getPet(1);
console.log(JSON.stringify([imported, performance.now() - t1]));`;
const cases: Record<string, [string, string]> = {
  bare: [bare, sample(false)],
  otel: [withOtel, sample(true)],
};
const processTimes: Record<string, { importMs: number[]; firstCallMs: number[] }> =
  Object.fromEntries(Object.keys(cases).map((key) => [key, { importMs: [], firstCallMs: [] }]));
for (let i = 0; i < (QUICK ? 8 : 30); i++) {
  for (const key of rotate(Object.keys(cases), i)) {
    const [cwd, code] = cases[key]!;
    const [importMs, firstCallMs] = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', code], {
        cwd,
        encoding: 'utf8',
      }),
    ) as [number, number];
    processTimes[key]!.importMs.push(importMs);
    processTimes[key]!.firstCallMs.push(firstCallMs);
  }
}
const pms = (key: string, what: 'importMs' | 'firstCallMs') =>
  `${median(processTimes[key]![what]).toFixed(2)} ms`;

// --- report ---------------------------------------------------------------------------------
const section = `<!-- observe:start -->
## Seeing and extending calls

Measured ${new Date().toISOString()} by \`npm run bench:observe${QUICK ? ' -- --quick' : ''}\` on ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; the SDK as built (\`dist/\`).

Per call, \`getPet\` with a stub platform fetch (no network), medians of ${times.raw!.length} interleaved batches of ${N}:

| call | µs per call | over the raw stub |
|---|---|---|
| raw: stub + res.json() | ${us('raw').toFixed(2)} | |
| \`getPet(1)\` | ${us('plain').toFixed(2)} | +${over('plain').toFixed(2)} |
| \`withResponse.getPet(1)\` | ${us('withResponse').toFixed(2)} | +${over('withResponse').toFixed(2)} |
| \`getPet(1, { headers })\` | ${us('headers').toFixed(2)} | +${over('headers').toFixed(2)} |
| four no-op hooks | ${us('hooks').toFixed(2)} | +${over('hooks').toFixed(2)} |
| traced (in-memory exporter) | ${us('traced').toFixed(2)} | +${over('traced').toFixed(2)} |
| traced, with HTTP spans | ${us('tracedHttp').toFixed(2)} | +${over('tracedHttp').toFixed(2)} |

Browser bundle of \`import { PetsClient }\` (esbuild, minified, splitting), min+gz:

| | loaded up front | tracing chunk (loads on the first traced call) |
|---|---|---|
| this build, from \`dist/\` (what \`npm test\` budgets) | ${kb(dist.initial.gzip)} | |
| this build, from \`src/\` | ${kb(asBuilt.initial.gzip)} | ${kb(tracingChunk(asBuilt))} |
| the same with the tracing seam cut out | ${kb(cutSeam.initial.gzip)} | ${tracingChunk(cutSeam) ? kb(tracingChunk(cutSeam)) : 'none'} |

The seam that finds a provider and loads tracing costs **${asBuilt.initial.gzip - cutSeam.initial.gzip} bytes** up front; the tracing code itself loads only when a provider is there.

Import and first call in a fresh process, the installed tarball, medians of ${processTimes.bare!.importMs.length} interleaved runs:

| project | \`await import('@animal-store/sdk')\` | first \`getPet\` (stub fetch) |
|---|---|---|
| without \`@opentelemetry/api\` | ${pms('bare', 'importMs')} | ${pms('bare', 'firstCallMs')} |
| with it installed, a provider registered after the import | ${pms('otel', 'importMs')} | ${pms('otel', 'firstCallMs')} (loads the tracing chunk) |
<!-- observe:end -->`;

const resultsFile = new URL('./RESULTS.md', import.meta.url);
const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
const marked = /<!-- observe:start -->[\s\S]*<!-- observe:end -->/;
writeFileSync(
  resultsFile,
  marked.test(previous)
    ? previous.replace(marked, section)
    : `${previous.trimEnd()}\n\n${section}\n`,
);
console.log(section);
process.exit(0);
