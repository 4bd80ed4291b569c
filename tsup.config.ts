import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { defineConfig, type Options } from 'tsup';
import { noticesPlugin } from './build/notices.js';

const root = fileURLToPath(new URL('.', import.meta.url));
const notices = noticesPlugin(root);

// CommonJS has no top-level await: its mock entry loads msw through
// `msw.cjs.ts`, which requires it synchronously, instead of `msw.ts`.
const mswForCommonJs: Plugin = {
  name: 'msw-for-commonjs',
  setup(build) {
    build.onResolve({ filter: /^\.\/msw\.js$/ }, (args) => ({
      path: `${args.resolveDir}/msw.cjs.ts`,
    }));
  },
};

// The rules (`src/rules.ts`) are a few constants that the main entry, the
// Zod chunk and the mock each need: each gets its own copy, so that they
// share no chunk and the main entry loads as one file (a second file costs
// an import 0.6 ms on Node 20).
const rulesCopied: Plugin = {
  name: 'rules-copied',
  setup(build) {
    build.onResolve({ filter: /\/rules\.js$/ }, ({ path, resolveDir }) => {
      const folder = basename(resolveDir);
      const file = resolve(resolveDir, path.replace(/\.js$/, '.ts'));
      return folder === 'src' ? undefined : { path: file, suffix: `?${folder}` };
    });
  },
};

const library: Options = {
  entry: { index: 'src/index.ts', mock: 'src/mock/index.ts' },
  dts: true,
  // No source maps: with the sources' text they were 70% of the installed
  // package, and without it they point stack traces at files that are not
  // there. Frames name the built files, which are.
  sourcemap: false,
  target: 'es2022',
  platform: 'neutral',
  removeNodeProtocol: false,
  external: [/^node:/],
  // Runtime dependencies are bundled: one file loads in a few milliseconds
  // where zod's many ESM files take ~50 ms, and p-retry (ESM-only) then works
  // with require() on every Node 20.
  noExternal: ['p-retry', 'is-network-error', 'zod', 'openapi-fetch'],
  treeshake: true,
  esbuildPlugins: [notices],
};

export default defineConfig([
  // ESM is split: Zod, needed only once a value is declined, sits in its own
  // chunk that loads on that first decline, so bundlers keep it out of a
  // page's initial load and importing the SDK does not parse it.
  // The mock's browser build (the `browser` condition of `./mock`) leaves out
  // the loopback server.
  {
    ...library,
    entry: { ...(library.entry as Record<string, string>), 'mock.browser': 'src/mock/browser.ts' },
    format: ['esm'],
    splitting: true,
    esbuildPlugins: [notices, rulesCopied],
  },
  // CJS stays one file per entry; Zod's module there runs only on first use.
  {
    ...library,
    format: ['cjs'],
    splitting: false,
    esbuildPlugins: [notices, mswForCommonJs],
  },
  // The Redis store is built on its own, so that the main entry shares no
  // chunk with it and still loads as one file.
  { ...library, entry: { redis: 'src/redis/index.ts' }, format: ['esm', 'cjs'], splitting: false },
  {
    entry: { 'mock-cli': 'src/mock/cli.ts' },
    format: ['esm'],
    sourcemap: false,
    target: 'es2022',
    platform: 'node',
    splitting: false,
    removeNodeProtocol: false,
    esbuildPlugins: [notices],
  },
]);
