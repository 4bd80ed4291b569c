import { describe, expect, it } from 'vitest';
import { type NewPet, RequestValidationError, ResponseValidationError } from '../src/index.js';
import { clientWith, json, rex, scriptedFetch } from './helpers/scripted-fetch.js';

function stubbed(...responses: Response[]) {
  const stub = scriptedFetch(...responses);
  return { stub, client: clientWith(stub.fetch, { maxRetries: 0 }) };
}

describe('input validation', () => {
  it.each([0, 101, 2.5, -1, Number.NaN, '10', null])(
    'rejects limit %s without sending',
    async (limit) => {
      const { stub, client } = stubbed();
      const error = await client.listPets({ limit } as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestValidationError);
      expect((error as RequestValidationError).issues[0]?.path).toEqual(['limit']);
      expect((error as Error).message).toMatch(/\. limit must be an integer from 1 to 100\.$/);
      expect(stub.received).toHaveLength(0);
    },
  );

  it.each(['adopted', 'AVAILABLE', '', 1])('rejects status %s without sending', async (status) => {
    const { stub, client } = stubbed();
    const error = await client.listPets({ status } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as Error).message).toMatch(/'available', 'pending', 'sold'/);
    expect(stub.received).toHaveLength(0);
  });

  it('rejects unknown listPets parameters, such as a misspelt status', async () => {
    const { stub, client } = stubbed();
    const error = await client.listPets({ stauts: 'sold' } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as Error).message).toMatch(/stauts/);
    expect(stub.received).toHaveLength(0);
    // A call's option given as a parameter: the message says where it goes.
    const misplaced = await client.listPets({ timeoutMs: 5 } as never).catch((e: unknown) => e);
    expect((misplaced as Error).message).toMatch(/call options go in the second argument/);
  });

  it('rejects input whose reading throws (a getter, a Proxy trap) without sending', async () => {
    const { stub, client } = stubbed();
    const boom = () => {
      throw new Error('cannot read this');
    };
    const attempts = [
      () => client.listPets(Object.defineProperty({}, 'limit', { get: boom, enumerable: true })),
      () => client.createPet(new Proxy({ name: 'Rex', categoryId: 3 }, { ownKeys: boom })),
      () => client.getPet(new Proxy({}, { ownKeys: boom }) as never),
    ];
    for (const attempt of attempts) {
      const error = (await attempt().catch((e: unknown) => e)) as RequestValidationError;
      expect(error).toBeInstanceOf(RequestValidationError);
      expect(error.issues).toEqual([
        { path: [], code: 'unreadable', message: 'reading it threw Error: cannot read this' },
      ]);
      expect(error.message).toMatch(
        /; nothing was sent\. reading it threw Error: cannot read this\.$/,
      );
    }
    expect(stub.received).toHaveLength(0);
  });

  it('sends limit and status as query parameters', async () => {
    const { stub, client } = stubbed(json([]), json([]));
    await client.listPets({ limit: 100, status: 'sold' });
    await client.listPets();
    expect(new URL(stub.received[0]!.request.url).search).toBe('?limit=100&status=sold');
    expect(new URL(stub.received[1]!.request.url).search).toBe('');
  });

  it('treats an explicit undefined as not given', async () => {
    const { stub, client } = stubbed(json([]));
    await client.listPets({ status: undefined } as never);
    expect(new URL(stub.received[0]!.request.url).search).toBe('');
  });

  it('treats an explicit undefined as not given when Zod names the issues too', async () => {
    const { stub, client } = stubbed();
    const error = await client
      .listPets({ limit: 0, status: undefined } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((i) => i.path)).toEqual([['limit']]);
    expect(stub.received).toHaveLength(0);
  });

  it.each([
    [{ categoryId: 1 }, 'name'],
    [{ name: 'Rex' }, 'categoryId'],
    [{ name: 5, categoryId: 1 }, 'name'],
    [{ name: 'Rex', categoryId: '1' }, 'categoryId'],
    [{ name: 'Rex', categoryId: 1.5 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 2 ** 53 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 1, status: 'gone' }, 'status'],
  ])('rejects the NewPet %o, naming %s, without sending', async (body, field) => {
    const { stub, client } = stubbed();
    const error = await client.createPet(body as NewPet).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((i) => i.path[0])).toContain(field);
    expect(stub.received).toHaveLength(0);
  });

  it('rejects an id in NewPet, since the service assigns it', async () => {
    const { stub, client } = stubbed();
    const error = await client
      .createPet({ name: 'Rex', categoryId: 1, id: 9 } as NewPet)
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/assigns id.*id/);
    expect(stub.received).toHaveLength(0);
  });

  it.each([
    ['createPet', undefined, 'expected an object { name, categoryId, status? }, got nothing'],
    ['createPet', 'Rex', 'expected an object { name, categoryId, status? }, got a string'],
    ['listPets', 'available', "expected an object such as { limit: 10, status: 'available' }"],
    ['listPets', [5], 'got an array'],
  ] as const)('says what %s expected when given %o, not an object', async (name, input, said) => {
    const { stub, client } = stubbed();
    const call = client[name] as (input: unknown) => Promise<unknown>;
    const error = await call.call(client, input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as Error).message).toContain(said);
    expect(stub.received).toHaveLength(0);
  });

  it('sends a valid NewPet as JSON', async () => {
    const { stub, client } = stubbed(json(rex, 201));
    await client.createPet({ name: 'Rex', categoryId: 3, status: 'available' });
    const [sent] = stub.received;
    expect(sent?.request.method).toBe('POST');
    expect(sent?.request.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(sent?.body ?? '')).toEqual({
      name: 'Rex',
      categoryId: 3,
      status: 'available',
    });
  });

  it.each([
    1.5,
    -0.5,
    2 ** 53,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '1',
    '1/../../admin',
    '1?x=1',
  ])('rejects petId %s, so it can never change the path', async (petId) => {
    const { stub, client } = stubbed();
    const error = await client.getPet(petId as number).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as Error).message).toMatch(/petId must be a safe integer/);
    // A value of another type is named by its type, never quoted.
    expect((error as Error).message.endsWith(', got a string.')).toBe(typeof petId === 'string');
    expect(stub.received).toHaveLength(0);
  });

  it('puts a valid petId in the path', async () => {
    const { stub, client } = stubbed(json({ ...rex, id: 42 }));
    await client.getPet(42);
    expect(new URL(stub.received[0]!.request.url).pathname).toBe('/v1/pets/42');
  });
});

describe('response validation', () => {
  it('tolerates and drops unknown fields', async () => {
    const { client } = stubbed(json([{ ...rex, color: 'brown' }]));
    expect(await client.listPets()).toEqual([rex]);
  });

  it('accepts a pet without status', async () => {
    const { client } = stubbed(json({ id: 2, name: 'Tom', categoryId: 1 }));
    expect(await client.getPet(2)).toEqual({ id: 2, name: 'Tom', categoryId: 1 });
  });

  it('rejects an id above 2^53 instead of returning a rounded one', async () => {
    const body = '[{"id":9007199254740993,"name":"Rex","categoryId":3}]';
    const { client } = stubbed(new Response(body, { status: 200 }));
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).issues[0]?.path).toEqual([0, 'id']);
    expect((error as ResponseValidationError).status).toBe(200);
    // The field named once, after its path: not "0.id: id must…".
    expect((error as Error).message).toMatch(/: 0\.id must be a safe integer\.$/);
  });

  it.each([
    ['an id as a string', { ...rex, id: '1' }],
    ['a missing name', { id: 1, categoryId: 3 }],
    ['an unknown status', { ...rex, status: 'adopted' }],
    ['a fractional categoryId', { ...rex, categoryId: 1.5 }],
    ['an array instead of a pet', [rex]],
  ])('rejects a pet with %s', async (_, body) => {
    const { client } = stubbed(json(body));
    await expect(client.getPet(1)).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it('rejects a list that is not an array', async () => {
    const { client } = stubbed(json({ items: [rex] }));
    await expect(client.listPets()).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it('keeps the first 100 issues of a list of 100,000 bad pets, and names 10 of them', async () => {
    const { client } = stubbed(json([rex, ...Array.from({ length: 100_000 }, () => ({}))]));
    const error = (await client.listPets().catch((e: unknown) => e)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues).toHaveLength(100);
    expect(error.issues[0]).toMatchObject({ path: [1, 'id'], message: 'id is required' });
    expect(error.issues.at(-1)?.path).toEqual([34, 'id']);
    expect(error.message).toMatch(
      /: 1\.id is required; 1\.name is required; .*; 4\.id is required; and more \(error\.issues holds the first 100\)\.$/,
    );
    expect(error.message.length).toBeLessThan(600);
  });

  it('counts every issue of a list with fewer than 100', async () => {
    const { client } = stubbed(json(Array.from({ length: 12 }, (_, id) => ({ id }))));
    const error = (await client.listPets().catch((e: unknown) => e)) as ResponseValidationError;
    expect(error.issues).toHaveLength(24);
    expect(error.message).toMatch(
      /; 4\.categoryId is required; and 14 more \(in error\.issues\)\.$/,
    );
  });

  it.each([
    ['malformed JSON', '[{"id":1,'],
    ['an empty body', ''],
  ])('rejects a 2xx with %s, keeping the parse error as cause', async (_, body) => {
    const { client } = stubbed(new Response(body, { status: 200 }));
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toMatch(/not JSON/);
  });

  it('gives no object a prototype taken from a __proto__ key', async () => {
    const body = '[{"id":1,"name":"Rex","categoryId":3,"__proto__":{"polluted":true}}]';
    const { client } = stubbed(new Response(body, { status: 200 }));
    const [pet] = await client.listPets();
    expect(Object.getPrototypeOf(pet)).toBe(Object.prototype);
    expect((pet as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
