import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root. */
export const root = new URL('../../', import.meta.url).pathname;

// Every temporary directory made here goes when the process exits.
const made: string[] = [];
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function temporaryDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Packs the package as users receive it (building first, via prepack); returns the tarball path, removed at exit. */
export function packTarball(): string {
  const dir = temporaryDirectory('animal-store-pack-');
  execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const file = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  if (!file) throw new Error(`npm pack wrote no tarball into ${dir}`);
  return join(dir, file);
}

/** Installs `packages` into a fresh temporary project; returns its directory, removed at exit. */
export function installInto(
  packages: string[],
  prefix: string,
  type: 'module' | 'commonjs' = 'module',
): string {
  const dir = temporaryDirectory(prefix);
  execFileSync('npm', ['init', '-y'], { cwd: dir, stdio: 'ignore' });
  execFileSync('npm', ['pkg', 'set', `type=${type}`], { cwd: dir, stdio: 'ignore' });
  // --prefer-offline: what the repository's own install put in npm's cache
  // (msw, for one) is taken from there rather than the registry.
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--silent', '--prefer-offline', ...packages],
    {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  return dir;
}
