// The examples README points to, run as a reader runs them (`npx tsx examples/…`), against the
// build: each must end normally and print what its comments promise.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = async (file: string) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
    cwd: root,
    env: { ...process.env, ANIMAL_STORE_API_KEY: '' },
    timeout: 40_000,
  });
  return stdout;
};

describe('the examples', { timeout: 45_000 }, () => {
  it('quickstart (npm start) tours the mock to the end', async () => {
    const out = await run('examples/quickstart.ts');
    expect(out).toContain('embedded mock service');
    expect(out.trim().endsWith('Done.')).toBe(true);
  });

  it('error-handling tells each failure apart, a refused connection included', async () => {
    const out = await run('examples/error-handling.ts');
    expect(out).toContain('limit 500: fix your input');
    expect(out).toContain('missing animal: no such animal (404)');
    expect(out).toContain('wrong key: check the API key');
    expect(out).toMatch(/nobody listening: network trouble: .*ECONNREFUSED/);
  });

  it('rate-limits-and-retries spends the window, then is held without sending', async () => {
    const out = await run('examples/rate-limits-and-retries.ts');
    expect(out).toContain('call 3: ok, 0 left');
    expect(out).toContain('call 4: listPets was not sent');
  });

  it('environments lists the service addresses', async () => {
    const out = await run('examples/environments.ts');
    expect(out).toContain('https://api.animal-store.example/v1');
  });
});
