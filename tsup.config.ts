import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts', mock: 'src/mock/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    splitting: false,
    removeNodeProtocol: false,
    external: [/^node:/],
    // Runtime dependencies are bundled: one file loads in a few milliseconds
    // where zod's many ESM files take ~50 ms, and p-retry (ESM-only) then works
    // with require() on every Node 20.
    noExternal: ['p-retry', 'is-network-error', 'zod', 'openapi-fetch'],
    treeshake: true,
  },
  {
    entry: { 'mock-cli': 'src/mock/cli.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'es2022',
    platform: 'node',
    splitting: false,
    removeNodeProtocol: false,
  },
]);
