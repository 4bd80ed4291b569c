import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describePackage, NOTICES_FILE, packageDirOf } from '../build/notices.js';

const root = new URL('../', import.meta.url).pathname;
const dist = join(root, 'dist');

/** Every package the shipped build holds code of, read from the build's own source maps. */
function bundledPackages(): Map<string, string> {
  const packages = new Map<string, string>();
  for (const file of readdirSync(dist).filter((name) => name.endsWith('.map'))) {
    const { sources } = JSON.parse(readFileSync(join(dist, file), 'utf8')) as { sources: string[] };
    for (const source of sources) {
      const dir = packageDirOf(join(dist, source));
      if (dir) packages.set(dir, file);
    }
  }
  return packages;
}

describe('third-party notices', () => {
  it('cover every package whose code the build bundles, with its own licence text', () => {
    const notices = readFileSync(join(root, NOTICES_FILE), 'utf8');
    const packages = bundledPackages();
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
