import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { describePackage, NOTICES_FILE, packageDirOf } from '../build/notices.js';

const root = new URL('../', import.meta.url).pathname;

/**
 * Every package the build holds code of, found apart from the build: the
 * entries bundled again here with esbuild, everything bundled but what the
 * package leaves to its users (its peer dependencies) and Node's own modules.
 */
async function bundledPackages(): Promise<Map<string, string>> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    peerDependencies: Record<string, string>;
  };
  const peers = Object.keys(manifest.peerDependencies).flatMap((name) => [name, `${name}/*`]);
  const entries = ['src/index.ts', 'src/mock/index.ts', 'src/redis/index.ts', 'src/mock/cli.ts'];
  const packages = new Map<string, string>();
  for (const entry of entries) {
    const { metafile } = await build({
      entryPoints: [join(root, entry)],
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'node',
      external: ['node:*', ...peers],
      logLevel: 'silent',
    });
    for (const input of Object.keys(metafile.inputs)) {
      const dir = packageDirOf(join(root, input));
      if (dir) packages.set(dir, entry);
    }
  }
  return packages;
}

describe('third-party notices', () => {
  it('cover every package whose code the build bundles, with its own licence text', async () => {
    const notices = readFileSync(join(root, NOTICES_FILE), 'utf8');
    const packages = await bundledPackages();
    // The build bundles at least these; the list grows with whatever it takes.
    const names = [...packages.keys()].map((dir) => describePackage(dir).name);
    expect(names).toEqual(
      expect.arrayContaining(['zod', 'openapi-fetch', 'p-retry', 'is-network-error']),
    );
    for (const dir of packages.keys()) {
      const { name, version, licenseText } = describePackage(dir);
      expect(notices, `${name} has no notice`).toContain(`## ${name} ${version}\n`);
      expect(notices, `${name}'s licence text is missing`).toContain(licenseText);
      expect(licenseText, `${name}'s licence names no copyright holder`).toMatch(/copyright/i);
    }
    // Nothing listed that the build does not hold.
    const listed = [...notices.matchAll(/^## (\S+) /gm)].map((match) => match[1]);
    expect(listed.sort()).toEqual([...new Set(names)].sort());
  });

  it('fail the build for a bundled package without a licence file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'notices-'));
    try {
      const pkg = join(dir, 'node_modules', 'unlicensed');
      mkdirSync(pkg, { recursive: true });
      writeFileSync(join(pkg, 'package.json'), '{"name":"unlicensed","version":"1.0.0"}');
      expect(() => describePackage(pkg)).toThrow(
        /unlicensed is bundled into the build but ships no licence file/,
      );
      writeFileSync(join(pkg, 'LICENSE.md'), 'Copyright (c) someone');
      expect(describePackage(pkg).licenseText).toBe('Copyright (c) someone');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('find the package of scoped and nested inputs', () => {
    expect(packageDirOf('/a/node_modules/@scope/pkg/dist/x.js')).toBe('/a/node_modules/@scope/pkg');
    expect(packageDirOf('/a/node_modules/p/node_modules/q/index.js')).toBe(
      '/a/node_modules/p/node_modules/q',
    );
    expect(packageDirOf('/a/src/index.ts')).toBeUndefined();
  });
});
