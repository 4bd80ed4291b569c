import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', mock: 'src/mock/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  splitting: false,
  treeshake: true,
});
