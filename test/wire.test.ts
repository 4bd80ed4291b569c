import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionError, PetsClient } from '../src/index.js';
import { jsonFault, PET, startFaultServer } from './helpers/fault-server.js';

// What actually goes over the wire with the platform fetch (the default path,
// which builds plain header objects and no Request of its own).

let server: Awaited<ReturnType<typeof startFaultServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('requests through the platform fetch', () => {
  it('carry the bearer key, the extra headers, the query, the path and a JSON body', async () => {
    server = await startFaultServer([
      jsonFault(200, [{ ...PET, status: 'sold' }]),
      jsonFault(201, PET),
      jsonFault(200, PET),
    ]);
    const client = new PetsClient({
      apiKey: 'sk_wire_test',
      baseUrl: server.url,
      headers: { 'X-Trace': 'abc', 'Content-Type': 'text/plain' },
      logLevel: 'off',
      deprecationWarnings: false,
    });
    await client.listPets({ status: 'sold', limit: 5 });
    await client.createPet({ name: 'Rex & Co', categoryId: 1 });
    await client.getPet(7);
    const [list, create, get] = server.arrivals;
    expect(list).toMatchObject({ method: 'GET', url: '/v1/pets?status=sold&limit=5' });
    expect(create).toMatchObject({ method: 'POST', url: '/v1/pets' });
    expect(get).toMatchObject({ method: 'GET', url: '/v1/pets/7' });
    for (const arrival of [list, create, get]) {
      expect(arrival?.headers.authorization).toBe('Bearer sk_wire_test');
      expect(arrival?.headers['x-trace']).toBe('abc');
    }
    // The body is JSON whatever the extra headers say.
    expect(create?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(create?.body ?? '')).toEqual({ name: 'Rex & Co', categoryId: 1 });
    expect(list?.body).toBe('');
  });

  it('fail to a server that answers TLS in plain HTTP with a ConnectionError that asks for http://', async () => {
    server = await startFaultServer([jsonFault(200, [])]);
    const client = new PetsClient({
      apiKey: 'sk_wire_test',
      baseUrl: server.url.replace('http:', 'https:'),
      maxRetries: 0,
      logLevel: 'off',
    });
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain('(ERR_SSL_WRONG_VERSION_NUMBER: is it http://?)');
  });
});
