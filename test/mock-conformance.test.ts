import { fileURLToPath } from 'node:url';
import { OpenAPIBackend } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, SAMPLE_PETS, startMockServer } from '../src/mock/index.js';

// Validates what the mock answers against spec/openapi.yaml itself (not the
// SDK's Zod schemas), so the mock cannot drift from the spec silently.

const KEY = 'conformance-key';
let spec: OpenAPIBackend;
let server: MockServer;
let limited: MockServer;

beforeAll(async () => {
  spec = new OpenAPIBackend({
    definition: fileURLToPath(new URL('../spec/openapi.yaml', import.meta.url)),
    strict: true,
  });
  await spec.init();
  server = await startMockServer({ apiKeys: [KEY], seed: SAMPLE_PETS });
  limited = await startMockServer({
    apiKeys: [KEY],
    plan: 'enterprise',
    limits: { perMinute: 1, perDay: 1000 },
    seed: SAMPLE_PETS,
  });
});

afterAll(async () => {
  await server?.close();
  await limited?.close();
});

type Exchange = {
  operation: 'listPets' | 'createPet' | 'getPet';
  method: string;
  path: string;
  body?: string;
  key?: string | null;
};

const auth = (key: string | null | undefined): Record<string, string> =>
  key === null ? {} : { authorization: `Bearer ${key ?? KEY}` };

async function exchange(base: string, e: Exchange): Promise<Response> {
  const init: RequestInit = {
    method: e.method,
    headers: {
      ...auth(e.key),
      ...(e.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
  };
  if (e.body !== undefined) init.body = e.body;
  return fetch(`${base}${e.path}`, init);
}

const seen = new Map<string, Set<number>>();

async function expectConformant(base: string, e: Exchange, expectedStatus: number): Promise<void> {
  const response = await exchange(base, e);
  const text = await response.text();
  expect(response.status, `${e.method} ${e.path}: ${text}`).toBe(expectedStatus);
  const operation = spec.getOperation(e.operation);
  if (!operation) throw new Error(`no operation ${e.operation} in the spec`);
  expect(Object.keys(operation.responses ?? {}), 'status declared for the operation').toContain(
    String(response.status),
  );
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = spec.validateResponse(JSON.parse(text), operation, response.status);
  expect(body.errors, `body of ${response.status}`).toBeNull();
  const headers = Object.fromEntries(response.headers);
  const headerResult = spec.validateResponseHeaders(headers, operation, {
    statusCode: response.status,
    setMatchType: 'superset' as never,
  });
  expect(headerResult.errors, `headers of ${response.status}`).toBeNull();
  if (response.status >= 400) expect(JSON.parse(text).status).toBe(response.status);
  const statuses = seen.get(e.operation) ?? new Set<number>();
  statuses.add(response.status);
  seen.set(e.operation, statuses);
}

describe('the mock conforms to spec/openapi.yaml', () => {
  it.each<[string, Exchange, number]>([
    ['a plain list', { operation: 'listPets', method: 'GET', path: '/pets' }, 200],
    [
      'a filtered, limited list',
      { operation: 'listPets', method: 'GET', path: '/pets?status=sold&limit=1' },
      200,
    ],
    [
      'a list with a limit out of range',
      { operation: 'listPets', method: 'GET', path: '/pets?limit=1000' },
      200,
    ],
    [
      'a list with an unknown status',
      { operation: 'listPets', method: 'GET', path: '/pets?status=adopted' },
      200,
    ],
    [
      'a list without a key',
      { operation: 'listPets', method: 'GET', path: '/pets', key: null },
      401,
    ],
    [
      'a list with a wrong key',
      { operation: 'listPets', method: 'GET', path: '/pets', key: 'wrong' },
      401,
    ],
    [
      'a creation',
      {
        operation: 'createPet',
        method: 'POST',
        path: '/pets',
        body: '{"name":"Rex","categoryId":1,"status":"available"}',
      },
      201,
    ],
    [
      'a creation without status',
      {
        operation: 'createPet',
        method: 'POST',
        path: '/pets',
        body: '{"name":"Rex","categoryId":1}',
      },
      201,
    ],
    [
      'a creation without name',
      { operation: 'createPet', method: 'POST', path: '/pets', body: '{"categoryId":1}' },
      400,
    ],
    [
      'a creation with a bad status',
      {
        operation: 'createPet',
        method: 'POST',
        path: '/pets',
        body: '{"name":"R","categoryId":1,"status":"x"}',
      },
      400,
    ],
    [
      'a creation with malformed JSON',
      { operation: 'createPet', method: 'POST', path: '/pets', body: '{"name":' },
      400,
    ],
    [
      'a creation with a wrong key',
      {
        operation: 'createPet',
        method: 'POST',
        path: '/pets',
        body: '{"name":"R","categoryId":1}',
        key: 'wrong',
      },
      401,
    ],
    ['a get', { operation: 'getPet', method: 'GET', path: '/pets/1' }, 200],
    [
      'a get of a missing animal',
      { operation: 'getPet', method: 'GET', path: '/pets/999999' },
      404,
    ],
    ['a get of a non-numeric id', { operation: 'getPet', method: 'GET', path: '/pets/abc' }, 404],
    [
      'a get without a key',
      { operation: 'getPet', method: 'GET', path: '/pets/1', key: null },
      401,
    ],
  ])('answers %s as the spec says', async (_, e, status) => {
    await expectConformant(server.url, e, status);
  });

  it.each<Exchange>([
    { operation: 'listPets', method: 'GET', path: '/pets' },
    { operation: 'createPet', method: 'POST', path: '/pets', body: '{"name":"R","categoryId":1}' },
    { operation: 'getPet', method: 'GET', path: '/pets/1' },
  ])('answers 429 with Retry-After to $operation over the limit', async (e) => {
    limited.service.reset();
    await exchange(limited.url, e);
    await expectConformant(limited.url, e, 429);
  });

  it('covered every operation and every status the spec declares', () => {
    for (const operation of ['listPets', 'createPet', 'getPet'] as const) {
      const declared = Object.keys(spec.getOperation(operation)?.responses ?? {})
        .map(Number)
        .sort();
      expect([...(seen.get(operation) ?? [])].sort(), operation).toEqual(declared);
    }
  });
});
