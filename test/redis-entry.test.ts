import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dist = new URL('../dist/', import.meta.url);

describe('the Redis clients, optional peers', () => {
  it('are never loaded by any entry: the store takes the client the application made', () => {
    expect(existsSync(new URL('redis.js', dist)), 'run `npm run build` first (npm test does)').toBe(
      true,
    );
    const files = readdirSync(dist).filter((f) => /\.(c?js)$/.test(f));
    expect(files).toEqual(
      expect.arrayContaining(['index.js', 'index.cjs', 'redis.js', 'redis.cjs']),
    );
    for (const file of files) {
      const code = readFileSync(new URL(file, dist), 'utf8');
      expect(code, file).not.toMatch(
        /(from|import|require)\s*\(?\s*["'](redis|ioredis|@redis\/[^"']+)["']/,
      );
    }
  });

  it('are optional peer dependencies', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    for (const name of ['redis', 'ioredis']) {
      expect(pkg.peerDependencies[name]).toBeTypeOf('string');
      expect(pkg.peerDependenciesMeta[name]).toEqual({ optional: true });
      expect(pkg.dependencies?.[name]).toBeUndefined();
    }
  });
});
