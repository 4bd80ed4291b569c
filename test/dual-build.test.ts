import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const dist = new URL('../dist/', import.meta.url);

describe('the ESM and CommonJS builds loaded together', () => {
  it('answer instanceof for each other’s errors', async () => {
    expect(
      existsSync(new URL('index.cjs', dist)),
      'run `npm run build` first (npm test does)',
    ).toBe(true);
    const esm = (await import(new URL('index.js', dist).href)) as typeof import('../src/index.js');
    const cjs = createRequire(import.meta.url)(
      new URL('index.cjs', dist).pathname,
    ) as typeof import('../src/index.js');
    expect(cjs.NotFoundError).not.toBe(esm.NotFoundError);
    const fromCjs = new cjs.NotFoundError('gone', {
      status: 404,
      code: 'not_found',
      headers: new Headers(),
    });
    expect(fromCjs).toBeInstanceOf(esm.NotFoundError);
    expect(fromCjs).toBeInstanceOf(esm.ApiError);
    expect(fromCjs).toBeInstanceOf(esm.AnimalStoreError);
    expect(fromCjs).not.toBeInstanceOf(esm.RateLimitError);
    expect(new esm.TimeoutError('t')).toBeInstanceOf(cjs.ConnectionError);
    expect(fromCjs.name).toBe('NotFoundError');
  });
});
