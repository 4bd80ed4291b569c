import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('npm pack', () => {
  it('ships only the build, the spec and the docs users need', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: new URL('../', import.meta.url).pathname,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [{ files }] = JSON.parse(out) as [{ files: { path: string }[] }];
    const paths = files.map((f) => f.path);
    const allowed =
      /^(dist\/[\w.-]+\.(js|cjs|d\.ts|d\.cts|map)|spec\/openapi\.yaml|README\.md|CHANGELOG\.md|LICENSE|package\.json)$/;
    expect(paths.filter((p) => !allowed.test(p))).toEqual([]);
    for (const needed of [
      'dist/index.js',
      'dist/index.cjs',
      'dist/index.d.ts',
      'dist/index.d.cts',
      'dist/mock.js',
      'dist/mock.cjs',
      'dist/mock.d.ts',
      'dist/mock.d.cts',
      'dist/mock-cli.js',
    ]) {
      expect(paths).toContain(needed);
    }
  });
});
