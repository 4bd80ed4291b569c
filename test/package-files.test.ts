import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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
      /^(dist\/[\w.-]+\.(js|cjs|d\.ts|d\.cts)|dist\/THIRD-PARTY-NOTICES\.md|docs\/[\w-]+\.md|spec\/openapi\.yaml|README\.md|CHANGELOG\.md|LICENSE|package\.json)$/;
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
      'dist/THIRD-PARTY-NOTICES.md',
    ]) {
      expect(paths).toContain(needed);
    }
  });

  it('ships no source maps, which would point stack traces at files it does not ship', () => {
    const dist = new URL('../dist/', import.meta.url);
    expect(readdirSync(dist).filter((name) => name.endsWith('.map'))).toEqual([]);
    for (const name of readdirSync(dist).filter((file) => /\.(c?js)$/.test(file))) {
      expect(readFileSync(new URL(name, dist), 'utf8'), name).not.toContain('sourceMappingURL');
    }
  });
});

describe('package.json', () => {
  const root = new URL('../', import.meta.url).pathname;
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
    version: string;
    repository?: { url?: string };
    homepage?: string;
    bugs?: { url?: string };
    exports: Record<string, unknown>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
    dependencies?: Record<string, string>;
  };

  it('says where the code, the docs and the tracker are', () => {
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\/github\.com\/.+\.git$/);
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.bugs?.url).toMatch(/^https:\/\/.+\/issues$/);
  });

  it('exports the spec, and installs nothing but the SDK', () => {
    expect(pkg.exports['./openapi.yaml']).toBe('./spec/openapi.yaml');
    expect(pkg.dependencies ?? {}).toEqual({});
    for (const peer of ['msw', 'redis', 'ioredis', '@opentelemetry/api']) {
      expect(pkg.peerDependenciesMeta[peer]?.optional, peer).toBe(true);
    }
  });

  it('tells tracers its own version', async () => {
    const { VERSION } = await import('../src/client.js');
    expect(VERSION).toBe(pkg.version);
  });

  it('has the version of the newest release in CHANGELOG.md', () => {
    const changelog = readFileSync(`${root}CHANGELOG.md`, 'utf8');
    const newest = /^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/m.exec(changelog)?.[1];
    expect(newest).toBe(pkg.version);
  });
});
