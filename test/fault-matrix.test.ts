import { inspect } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type AnimalStoreError,
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  NotFoundError,
  PetsClient,
  RateLimitError,
  ResponseValidationError,
  ServerError,
  TimeoutError,
} from '../src/index.js';
import {
  type Arrival,
  errorBody,
  type Fault,
  jsonFault,
  PET,
  refusedUrl,
  startFaultServer,
} from './helpers/fault-server.js';

// Each fault × each operation against a real loopback server: the exact outcome,
// the number of attempts, and for 429 that no retry arrives before the service allowed.

type Op = 'listPets' | 'createPet' | 'getPet';
const OPS: Op[] = ['listPets', 'createPet', 'getPet'];
type Outcome = { ok: true } | { error: abstract new (...args: never[]) => AnimalStoreError };
interface Case {
  name: string;
  fault: (op: Op) => Fault;
  /** Outcome and attempts for GET and for POST, and for listPets when it differs. */
  get: [Outcome, number];
  post?: [Outcome, number];
  list?: [Outcome, number];
  /** Least milliseconds between the 429's answer and the retry. */
  minGapMs?: number;
}

const ok: Outcome = { ok: true };
const fails = (
  error: Case['get'][0] extends infer _ ? Extract<Outcome, { error: unknown }>['error'] : never,
): Outcome => ({ error });
const pet = (op: Op, value: unknown) => (op === 'listPets' ? [value] : value);
const raw = (status: number, body: string, type = 'application/json'): Fault => ({
  status,
  headers: [['content-type', type]],
  body,
});
const html = (status: number) =>
  raw(status, `<html><body><h1>${status}</h1></body></html>`, 'text/html');
const rateHeaders = (reset: string, remaining = '0'): [string, string][] => [
  ['x-ratelimit-limit', '60'],
  ['x-ratelimit-remaining', remaining],
  ['x-ratelimit-reset', reset],
];
const limited = (...retryAfter: string[]) =>
  errorBody(
    429,
    retryAfter.map((v) => ['retry-after', v] as [string, string]),
  );

const KEY = 'sk_fault_matrix';
// Compression bombs, made once: 64 MiB of JSON white space, 64 times the cap.
const INFLATED = 64 * 2 ** 20;
let bombs: { gzip: Buffer; br: Buffer } | undefined;
const bomb = (encoding: 'gzip' | 'br', status = 200): Fault => {
  bombs ??= {
    gzip: gzipSync(Buffer.alloc(INFLATED, 0x20)),
    br: brotliCompressSync(Buffer.alloc(INFLATED, 0x20), {
      params: { [constants.BROTLI_PARAM_QUALITY]: 4 },
    }),
  };
  return {
    status,
    headers: [
      ['content-type', 'application/json'],
      ['content-encoding', encoding],
    ],
    bytes: bombs[encoding],
  };
};
const redirect = (status: number, location: string): Fault => ({
  status,
  headers: [['location', location]],
  body: '',
});

const cases: Case[] = [
  {
    name: '429 Retry-After 1 (seconds)',
    fault: () => limited('1'),
    get: [ok, 2],
    post: [ok, 2],
    minGapMs: 1000,
  },
  {
    name: '429 Retry-After 0.3 (fractional)',
    fault: () => limited('0.3'),
    get: [ok, 2],
    post: [ok, 2],
    minGapMs: 300,
  },
  { name: '429 Retry-After 0', fault: () => limited('0'), get: [ok, 2], post: [ok, 2] },
  { name: '429 Retry-After negative', fault: () => limited('-5'), get: [ok, 2], post: [ok, 2] },
  {
    name: '429 Retry-After garbage',
    fault: () => limited('soon-ish'),
    get: [ok, 2],
    post: [ok, 2],
  },
  {
    name: '429 Retry-After duplicated',
    fault: () => limited('1', '1'),
    get: [ok, 2],
    post: [ok, 2],
    minGapMs: 1000,
  },
  { name: '429 Retry-After huge', fault: () => limited('86400'), get: [fails(RateLimitError), 1] },
  {
    name: '429 Retry-After HTTP-date',
    fault: () => limited(new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000).toUTCString()),
    get: [ok, 2],
    post: [ok, 2],
    minGapMs: 1,
  },
  {
    name: '429 with only X-RateLimit-Reset',
    fault: () => errorBody(429, [['x-ratelimit-reset', String(Math.ceil(Date.now() / 1000) + 1)]]),
    get: [ok, 2],
    post: [ok, 2],
  },
  {
    name: 'HTML 502 from a proxy',
    fault: () => html(502),
    get: [ok, 2],
    post: [fails(ServerError), 1],
  },
  {
    name: 'HTML 504 from a proxy',
    fault: () => html(504),
    get: [ok, 2],
    post: [fails(ServerError), 1],
  },
  {
    name: '503 with an empty body',
    fault: () => raw(503, ''),
    get: [ok, 2],
    post: [fails(ServerError), 1],
  },
  {
    name: '500 with malformed JSON',
    fault: () => raw(500, '{"code":'),
    get: [ok, 2],
    post: [fails(ServerError), 1],
  },
  { name: '400', fault: () => errorBody(400), get: [fails(BadRequestError), 1] },
  { name: '401', fault: () => errorBody(401), get: [fails(AuthenticationError), 1] },
  { name: '404', fault: () => errorBody(404), get: [fails(NotFoundError), 1] },
  {
    name: '2xx with an empty body',
    fault: () => raw(200, ''),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: '2xx with a truncated body',
    fault: () => raw(200, '[{"id":1,"na'),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: '2xx with malformed JSON',
    fault: () => raw(200, '{id: 1}'),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: '2xx with a wrong content type',
    fault: (op) => raw(200, JSON.stringify(pet(op, PET)), 'text/plain'),
    get: [ok, 1],
  },
  {
    name: '2xx with id as a string',
    fault: (op) => jsonFault(200, pet(op, { ...PET, id: '7' })),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: '2xx with id above 2^53',
    fault: (op) =>
      raw(200, JSON.stringify(pet(op, PET)).replace('"id":7', '"id":9007199254740993')),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: '2xx missing fields',
    fault: (op) => jsonFault(200, pet(op, { id: 7 })),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: '2xx with an unknown status',
    fault: (op) => jsonFault(200, pet(op, { ...PET, status: 'adopted' })),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: '2xx with __proto__ keys',
    fault: (op) =>
      raw(200, JSON.stringify(pet(op, PET)).replace('{', '{"__proto__":{"polluted":1},')),
    get: [ok, 1],
  },
  {
    name: 'a slow drip within the timeout',
    fault: (op) => ({ ...jsonFault(200, pet(op, PET)), drip: { pieces: 4, dripMs: 40 } }),
    get: [ok, 1],
  },
  {
    name: 'a slow drip past the timeout',
    fault: (op) => ({ ...jsonFault(200, pet(op, PET)), drip: { pieces: 16, dripMs: 300 } }),
    get: [ok, 2],
    post: [fails(TimeoutError), 1],
  },
  {
    name: 'a hang before headers',
    fault: () => ({ hang: 'before-headers' }),
    get: [ok, 2],
    post: [fails(TimeoutError), 1],
  },
  {
    name: 'a hang mid-body',
    fault: (op) => ({ ...jsonFault(200, pet(op, PET)), hang: 'mid-body' }),
    get: [ok, 2],
    post: [fails(TimeoutError), 1],
  },
  {
    name: 'a socket reset',
    fault: () => ({ reset: true }),
    get: [ok, 2],
    post: [fails(ConnectionError), 1],
  },
  {
    name: 'a 503 whose reason phrase echoes the key',
    fault: () => ({ ...errorBody(503), reason: `Upstream rejected Bearer ${KEY}` }),
    get: [ok, 2],
    post: [fails(ServerError), 1],
  },
  {
    name: 'a 2xx that is not JSON and quotes the key',
    fault: () => raw(200, `oops: Bearer ${KEY}`, 'text/plain'),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: 'a 401 echoing the key in its headers, body and reason phrase',
    fault: () => ({
      ...raw(401, JSON.stringify({ code: KEY, message: `bad key ${KEY}`, status: 401 })),
      headers: [
        ['content-type', 'application/json'],
        ['x-echo', `Bearer ${KEY}`],
        [`x-${KEY}`, '1'],
      ],
      reason: KEY,
    }),
    get: [fails(AuthenticationError), 1],
  },
  {
    name: 'a gzip bomb (64 MiB inflated)',
    fault: () => bomb('gzip'),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: 'a brotli bomb (64 MiB inflated)',
    fault: () => bomb('br'),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: 'a 503 gzip bomb',
    fault: () => bomb('gzip', 503),
    get: [ok, 2],
    post: [fails(ServerError), 1],
  },
  {
    name: 'an endless chunked body',
    fault: () => ({ ...raw(200, '['), endless: Buffer.alloc(64 * 1024, 0x20) }),
    get: [fails(ResponseValidationError), 1],
  },
  {
    name: 'a 307 to another origin',
    fault: () => redirect(307, 'http://127.0.0.1:9/v1/pets'),
    get: [fails(ApiError), 1],
  },
  {
    name: 'a 307 loop to itself',
    fault: (op) => redirect(307, op === 'getPet' ? '/v1/pets/7' : '/v1/pets'),
    get: [fails(ApiError), 1],
  },
  {
    name: 'a 302 loop',
    fault: (op) => redirect(302, op === 'getPet' ? '/v1/pets/7' : '/v1/pets'),
    get: [fails(ApiError), 1],
  },
  {
    name: 'a 401 body nested 10,000 deep',
    fault: () => raw(401, `${'['.repeat(10_000)}${']'.repeat(10_000)}`),
    get: [fails(AuthenticationError), 1],
  },
  {
    name: 'a list longer than the limit asked for',
    fault: (op) =>
      jsonFault(
        200,
        op === 'listPets' ? Array.from({ length: 21 }, (_, i) => ({ ...PET, id: i + 1 })) : PET,
      ),
    get: [ok, 1],
    post: [ok, 1],
    list: [fails(ResponseValidationError), 1],
  },
  {
    name: 'a 2xx with an X-RateLimit-Reset out of range',
    fault: (op) => jsonFault(200, pet(op, PET), rateHeaders('99999999999999')),
    get: [ok, 1],
  },
];

const servers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

const success = (arrival: Arrival): Fault =>
  arrival.method === 'POST'
    ? jsonFault(201, PET)
    : jsonFault(200, arrival.url.includes('/pets/') ? PET : [PET]);

/** One retry, attempts limited to 3 s (a loaded machine answers a fault within it), waits up to 5 s. */
const matrixClient = (baseUrl: string) =>
  new PetsClient({
    apiKey: KEY,
    baseUrl,
    maxRetries: 1,
    maxRetryDelayMs: 5000,
    timeoutMs: 3000,
    logLevel: 'off',
    deprecationWarnings: false,
  });

function call(client: PetsClient, op: Op) {
  if (op === 'listPets') return client.listPets();
  if (op === 'createPet') return client.createPet({ name: 'Rex', categoryId: 1 });
  return client.getPet(7);
}

describe.concurrent('fault matrix', () => {
  for (const c of cases) {
    for (const op of OPS) {
      it(`${c.name} × ${op}`, async () => {
        const server = await startFaultServer([c.fault(op)], success);
        servers.push(server);
        const client = matrixClient(server.url);
        const [outcome, attempts] =
          op === 'createPet' ? (c.post ?? c.get) : op === 'listPets' ? (c.list ?? c.get) : c.get;
        const started = Date.now();
        const result = await call(client, op).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        if ('ok' in outcome) {
          expect(result, JSON.stringify(result)).toHaveProperty('value');
          const value = (result as { value: unknown }).value;
          expect(op === 'listPets' ? value : [value]).toEqual([PET]);
          expect(Object.getPrototypeOf(op === 'listPets' ? (value as object[])[0] : value)).toBe(
            Object.prototype,
          );
        } else {
          const { error } = result as { error: ApiError };
          expect(error).toBeInstanceOf(outcome.error);
          // An ApiError itself is a status the interface does not list: never a "server error".
          if (outcome.error === ApiError) expect(error).not.toBeInstanceOf(ServerError);
          const shown = [
            error.message,
            error.stack,
            inspect(error, { depth: 10 }),
            JSON.stringify(error.body),
            error.headers ? [...error.headers].join(' ') : '',
          ].join('\n');
          expect(shown).not.toContain(KEY);
          if (outcome.error === RateLimitError) expect(Date.now() - started).toBeLessThan(1000);
        }
        expect(server.arrivals).toHaveLength(attempts);
        if (c.minGapMs !== undefined) {
          const [first, second] = server.arrivals as [Arrival, Arrival];
          const allowed = c.name.includes('HTTP-date')
            ? Date.parse(first.fault.headers!.find(([n]) => n === 'retry-after')![1])
            : first.answeredAt! + c.minGapMs;
          expect(second.at).toBeGreaterThanOrEqual(allowed);
        }
      });
    }
  }

  for (const op of OPS) {
    it(`a 401 to a one-character key, echoing it × ${op}`, async () => {
      const server = await startFaultServer([
        {
          status: 401,
          headers: [
            ['content-type', 'application/json'],
            ['x-echo', 'Bearer a'],
          ],
          body: JSON.stringify({ code: 'bad_key', message: 'rejected bearer a', status: 401 }),
        },
      ]);
      servers.push(server);
      const client = new PetsClient({
        apiKey: 'a',
        baseUrl: server.url,
        logLevel: 'off',
        deprecationWarnings: false,
      });
      const error = (await call(client, op).catch((e: unknown) => e)) as ApiError;
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error.headers.get('content-type')).toBe('application/json');
      expect(error.headers.get('x-echo')).toBe('Bearer [redacted]');
      expect(error.body).toEqual({
        code: 'bad_key',
        message: 'rejected bearer [redacted]',
        status: 401,
      });
      expect(server.arrivals).toHaveLength(1);
    });

    it(`a refused connection × ${op}`, async () => {
      const client = matrixClient(await refusedUrl());
      const error = await call(client, op).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).not.toBeInstanceOf(TimeoutError);
    });
  }
});
