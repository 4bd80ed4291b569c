import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: {
      '@animal-store/sdk/redis': fileURLToPath(new URL('./src/redis/index.ts', import.meta.url)),
      '@animal-store/sdk/mock': fileURLToPath(new URL('./src/mock/index.ts', import.meta.url)),
      '@animal-store/sdk': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    restoreMocks: true,
    unstubEnvs: true,
    testTimeout: 20_000,
    // The tests mostly wait (on servers, Redis, a browser, real windows): two files at once even
    // on two cores, where the default would run one (the whole suite: 338 s alone, 164 s so).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
