import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  AnimalStoreError,
  NotFoundError,
  PetsClient,
  RateLimitError,
  type RetryInfo,
} from '../src/index.js';
import {
  createHandlers,
  MockServerOptionError,
  SAMPLE_PETS,
  startMockServer,
} from '../src/mock/index.js';

const cli = new URL('../dist/mock-cli.js', import.meta.url).pathname;
const runCli = (args: string[]) =>
  promisify(execFile)(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 20_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );

describe('loopback mock server', () => {
  it('holds concurrent calls within the budget, so none meets a 429 (real clock)', async () => {
    // Put the mock's clock one second before the end of its minute window,
    // ahead of the local clock: the client reads the reset on the mock's clock.
    let offset = 59_000 - (Date.now() % 60_000);
    if (offset < 2_000) offset += 60_000;
    const mock = await startMockServer({
      plan: 'enterprise',
      limits: { perMinute: 1 },
      seed: SAMPLE_PETS,
      now: () => Date.now() + offset,
    });
    try {
      const retries: RetryInfo[] = [];
      const statuses: number[] = [];
      const sdk = new PetsClient({
        apiKey: 'k',
        baseUrl: mock.url,
        onRetry: (i) => retries.push(i),
        logLevel: 'off',
        fetch: async (url, init) => {
          const response = await fetch(url, init);
          statuses.push(response.status);
          return response;
        },
      });
      const started = Date.now();
      const results = await Promise.all([sdk.listPets(), sdk.listPets()]);
      expect(results).toEqual([SAMPLE_PETS, SAMPLE_PETS]);
      expect(statuses).toEqual([200, 200]);
      // The second waits for the first's headers, which say none remain until the reset.
      expect(retries.map((r) => r.reason)).toEqual(['budget-unknown', 'budget-exhausted']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      await mock.close();
    }
  });

  it('meets no 429 when the local clock is a second ahead of the service’s (real clock)', async () => {
    const mock = await startMockServer({
      limits: { perMinute: 3, windowMs: 2000 },
      now: () => Date.now() - 1000,
    });
    try {
      const statuses: number[] = [];
      const sdk = new PetsClient({
        apiKey: 'k',
        baseUrl: mock.url,
        logLevel: 'off',
        fetch: async (url, init) => {
          const response = await fetch(url, init);
          statuses.push(response.status);
          return response;
        },
      });
      const results = await Promise.allSettled(Array.from({ length: 9 }, () => sdk.listPets()));
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(statuses).toEqual(Array(9).fill(200));
    } finally {
      await mock.close();
    }
  }, 20_000);

  it('turns an exhausted daily limit into a fast RateLimitError without another request', async () => {
    const mock = await startMockServer({ limits: { perMinute: 5, perDay: 1 } });
    try {
      const sdk = new PetsClient({ apiKey: 'k', baseUrl: mock.url, logLevel: 'off' });
      await sdk.listPets();
      const started = Date.now();
      const error = await sdk.listPets().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitError);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(sdk.rateLimit?.remaining).toBe(0);
    } finally {
      await mock.close();
    }
  });

  it('answers CORS preflights and exposes the rate-limit headers', async () => {
    const mock = await startMockServer();
    try {
      const preflight = await fetch(`${mock.url}/pets`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://localhost:5173',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      const response = await fetch(`${mock.url}/pets`, { headers: { authorization: 'Bearer k' } });
      expect(response.headers.get('access-control-expose-headers')).toMatch(
        /x-ratelimit-remaining/,
      );
      expect(mock.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    } finally {
      await mock.close();
    }
  });

  it('listens on the port it is given', async () => {
    const first = await startMockServer({ port: 0 });
    const port = Number(new URL(first.url).port);
    await first.close();
    const second = await startMockServer({ port });
    try {
      expect(second.url).toBe(`http://127.0.0.1:${port}/v1`);
    } finally {
      await second.close();
    }
  });

  it('answers only under its base path, as the service does', async () => {
    const server = await startMockServer({ seed: SAMPLE_PETS });
    try {
      const origin = new URL(server.url).origin;
      for (const path of ['/pets', '/v1x/pets', '/', '/pets/1']) {
        const response = await fetch(`${origin}${path}`, {
          headers: { authorization: 'Bearer k' },
        });
        expect(response.status, path).toBe(404);
        const body = (await response.json()) as { code: string; message: string };
        expect(body.code).toBe('not_found');
        expect(body.message).toContain(`pass baseUrl ${server.url}`);
      }
      const trace = await fetch(`${server.url}/pets`, { method: 'PUT', body: '{}' });
      expect(trace.status).toBe(405);
      // A client whose baseUrl lacks /v1 fails in tests as it would in production.
      const wrong = new PetsClient({ apiKey: 'k', baseUrl: origin });
      await expect(wrong.listPets()).rejects.toBeInstanceOf(NotFoundError);
      const right = new PetsClient({ apiKey: 'k', baseUrl: server.url });
      expect(await right.listPets()).toHaveLength(SAMPLE_PETS.length);
    } finally {
      await server.close();
    }
  });

  it('refuses a host that is not loopback and a port that is not one', async () => {
    for (const host of [
      '0.0.0.0',
      '::',
      '192.168.1.10',
      'example.com',
      '',
      '127.0.0.256',
      '127.1',
    ]) {
      await expect(startMockServer({ host })).rejects.toThrow(MockServerOptionError);
    }
    await expect(startMockServer({ host: '0.0.0.0' })).rejects.toThrow(/loopback address/);
    for (const port of [-1, 65536, 1.5, Number.NaN, '4010' as unknown as number]) {
      await expect(startMockServer({ port })).rejects.toThrow(/port must be an integer/);
    }
    await expect(startMockServer({ port: '4010' as unknown as number })).rejects.toThrow(
      'the string "4010"',
    );
  });
});

describe('animal-store-mock on the command line', () => {
  it('explains a bad --port, --host, plan or option without a stack trace', async () => {
    for (const [args, message] of [
      [
        ['--port', 'abc'],
        '--port must be an integer from 0 to 65535 (0 picks a free one); got "abc"',
      ],
      [
        ['--port', '1.5'],
        '--port must be an integer from 0 to 65535 (0 picks a free one); got "1.5"',
      ],
      [
        ['--port', '70000'],
        '--port must be an integer from 0 to 65535 (0 picks a free one); got "70000"',
      ],
      [
        ['--port', '-1'],
        '--port must be an integer from 0 to 65535 (0 picks a free one); got a value starting with "-"',
      ],
      [
        ['--api-key', ''],
        '--api-key must hold non-empty keys of visible ASCII, without spaces; got ""',
      ],
      [['--port'], "Option '--port <value>' argument missing"],
      [['--host', '0.0.0.0'], '--host must be a loopback address'],
      [['--plan', 'gold'], 'unknown plan "gold"'],
      [['--colour'], "Unknown option '--colour'"],
    ] as const) {
      // On port 0 wherever the port is not what is tested: a busy 4010 must not matter.
      const given: readonly string[] = args;
      const result = await runCli(
        given.includes('--port') ? [...given] : ['--port', '0', ...given],
      );
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).toContain('Usage: animal-store-mock');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('refuses options it cannot serve as the service would, typed, before listening', async () => {
    for (const [options, message] of [
      [{ plan: 'gold' }, 'plan must be one of free, pro, business, enterprise; got "gold"'],
      [{ apiKeys: 'test-key' }, "apiKeys must be an array of keys, e.g. ['test-key']"],
      [{ apiKeys: [''] }, 'apiKeys must hold non-empty keys of visible ASCII, without spaces'],
      [{ apiKeys: [] }, 'apiKeys is empty, so every request would get 401'],
      [{ apikeys: ['k'] }, 'apikeys is no option of the mock; the options are apiKeys,'],
      [{ limits: { perMinte: 5 } }, 'limits.perMinte is no option of the mock'],
      [{ limits: { perMinute: 0 } }, 'limits.perMinute must be a positive integer; got 0'],
      [{ limits: 'fast' }, 'limits must be an object such as { perMinute: 10 }; got "fast"'],
      [{ limits: { windowMs: 2 * 86_400_000 } }, 'limits.windowMs must be at most a day'],
      [
        { seed: [{ name: 'Rex' }] },
        'seed[0] is not an animal the service could answer: categoryId',
      ],
      [
        { seed: [{ id: 'zz', name: 'Rex', categoryId: 1 }] },
        'seed[0] is not an animal the service could answer: id must be a positive integer',
      ],
      [
        { seed: [{ name: 'Rex', categoryId: 1, status: 'lost' }] },
        "seed[0] is not an animal the service could answer: status must be one of 'available', 'pending', 'sold'",
      ],
      [
        {
          seed: [
            { id: 1, name: 'a', categoryId: 1 },
            { id: 1, name: 'b', categoryId: 1 },
          ],
        },
        'seed[1] is not an animal the service could answer: id 1 is used twice',
      ],
    ] as const) {
      const error = await startMockServer(options as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MockServerOptionError);
      expect((error as Error).message).toContain(message);
      expect(() => createHandlers(options as never)).toThrow(message);
    }
  });

  it('refuses a body over 1 MiB and a target that is no path with 400 JSON, keeping nothing', async () => {
    const server = await startMockServer({ apiKeys: ['k'] });
    try {
      const big = await fetch(`${server.url}/pets`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), categoryId: 1 }),
      });
      expect(big.status).toBe(400);
      expect(await big.json()).toMatchObject({ code: 'bad_request', status: 400 });
      expect(server.service.pets).toEqual([]);
      const { port } = new URL(server.url);
      const { request } = await import('node:http');
      const answer = await new Promise<{ status: number | undefined; body: string }>(
        (resolve, reject) => {
          const sent = request({ host: '127.0.0.1', port, path: '//[', method: 'GET' }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => {
              body += chunk.toString();
            });
            res.on('end', () => resolve({ status: res.statusCode, body }));
          });
          sent.on('error', reject);
          sent.end();
        },
      );
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'bad_request', status: 400 });
    } finally {
      await server.close();
    }
  });

  it('takes the bearer scheme in any case, as HTTP does', async () => {
    const server = await startMockServer({ apiKeys: ['k'] });
    try {
      const answer = await fetch(`${server.url}/pets`, { headers: { authorization: 'bearer k' } });
      expect(answer.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('says when the port is taken', async () => {
    const taken = await startMockServer();
    try {
      const port = Number(new URL(taken.url).port);
      const error = await startMockServer({ port }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MockServerOptionError);
      expect(error).toBeInstanceOf(AnimalStoreError);
      expect(error).toBeInstanceOf(RangeError);
      expect((error as Error).message).toBe(
        `port ${port} of 127.0.0.1 is in use: pick another, or 0 for a free one.`,
      );
      expect(JSON.parse(JSON.stringify(error))).toEqual({
        name: 'MockServerOptionError',
        message: (error as Error).message,
        cause: expect.stringContaining('EADDRINUSE'),
      });
      const result = await runCli(['--port', new URL(taken.url).port]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('is in use');
    } finally {
      await taken.close();
    }
  });
});
