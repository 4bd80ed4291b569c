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
    // p-retry is ESM-only: bundled, so that require() works on every Node 20.
    noExternal: ['p-retry', 'is-network-error'],
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
