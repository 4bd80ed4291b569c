import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const dist = new URL('../dist/', import.meta.url);

/** What an ES module `script` prints, run in a process of its own. */
async function run(script: string): Promise<string> {
  const args = ['--input-type=module', '-e', script];
  return (await promisify(execFile)(process.execPath, args, { encoding: 'utf8' })).stdout;
}

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
    const mock = (await import(
      new URL('mock.js', dist).href
    )) as typeof import('../src/mock/index.js');
    const optionError = () => mock.createHandlers({ plan: 'gold' as 'free' });
    expect(optionError).toThrow(esm.AnimalStoreError);
    expect(optionError).toThrow(cjs.AnimalStoreError);
    expect(optionError).toThrow(RangeError);
  });

  it('warn of a deprecated call once between them', async () => {
    const script = `
      import { createRequire } from 'node:module';
      const esm = await import(${JSON.stringify(new URL('index.js', dist).href)});
      const cjs = createRequire(import.meta.url)(${JSON.stringify(new URL('index.cjs', dist).pathname)});
      let warnings = 0;
      process.on('warning', (w) => { if (w.code === 'ANIMAL_STORE_GET_PET_DEPRECATED') warnings++; });
      const fetch = async () => new Response('{"id":1,"name":"Rex","categoryId":1}', { headers: { 'content-type': 'application/json' } });
      for (const sdk of [esm, cjs]) {
        await new sdk.PetsClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1', fetch, logLevel: 'off' }).getPet(1);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
      console.log(warnings);
    `;
    const stdout = await run(script);
    expect(stdout.trim()).toBe('1');
  });

  it('count clients and the line apart between them: one build’s failing client fails no call of the other’s', async () => {
    // Each build numbered its clients and the line on its own: both first clients were the same
    // client, so the ESM one's failures failed the CommonJS one's call unsent.
    const script = `
      import { createRequire } from 'node:module';
      const esm = await import(${JSON.stringify(new URL('index.js', dist).href)});
      const cjs = createRequire(import.meta.url)(${JSON.stringify(new URL('index.cjs', dist).pathname)});
      const options = { apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1', logLevel: 'off', maxRetries: 0 };
      const down = () => Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }));
      const up = async () => new Response('[]', { headers: { 'content-type': 'application/json' } });
      const failing = new esm.PetsClient({ ...options, fetch: down });
      const served = new cjs.PetsClient({ ...options, fetch: up });
      const broken = [1, 2, 3].map(() => failing.listPets().catch(() => 'failed'));
      const result = await served.listPets().then(() => 'served', (e) => e.message);
      await Promise.all(broken);
      console.log(result);
    `;
    const stdout = await run(script);
    expect(stdout.trim()).toBe('served');
  });
});
