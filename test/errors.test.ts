import { describe, expect, it } from 'vitest';
import * as sdk from '../src/index.js';
import {
  AnimalStoreError,
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  NotFoundError,
  RateLimitError,
  RequestValidationError,
  ServerError,
  TimeoutError,
} from '../src/index.js';
import { apiError, clientWith, json, scriptedFetch } from './helpers/scripted-fetch.js';

const noRetry = { maxRetries: 0 };

async function failure(response: Response | Error, call: 'list' | 'create' | 'get' = 'list') {
  const client = clientWith(scriptedFetch(response).fetch, noRetry);
  const run =
    call === 'list'
      ? client.listPets()
      : call === 'create'
        ? client.createPet({ name: 'Rex', categoryId: 1 })
        : client.getPet(1);
  return run.then(
    () => expect.unreachable('the call should have failed'),
    (error: unknown) => error as ApiError,
  );
}

describe('errors', () => {
  it.each([
    [400, BadRequestError, 'create'],
    [401, AuthenticationError, 'list'],
    [404, NotFoundError, 'get'],
    [429, RateLimitError, 'list'],
    [500, ServerError, 'list'],
    [503, ServerError, 'create'],
    [403, ApiError, 'list'],
    [409, ApiError, 'create'],
    [422, ApiError, 'create'],
    [418, ApiError, 'get'],
  ] as const)(
    'maps HTTP %i to %o with status, code, message and headers',
    async (status, Class, call) => {
      const error = await failure(apiError(status, { 'x-request-id': 'r-1' }), call);
      expect(error).toBeInstanceOf(Class);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toBeInstanceOf(AnimalStoreError);
      expect(error).toBeInstanceOf(Error);
      expect(error.status).toBe(status);
      expect(error.code).toBe(`code_${status}`);
      expect(error.message).toContain(`message ${status}`);
      expect(error.headers.get('x-request-id')).toBe('r-1');
      expect(error.name).toBe(Class.name);
      // "Server error" says the fault is the service's: only a 5xx is one.
      expect(error instanceof ServerError).toBe(status >= 500);
    },
  );

  it('builds the right class from an HTML 502 page from a proxy', async () => {
    const html = new Response('<html><body><h1>502 Bad Gateway</h1></body></html>', {
      status: 502,
      statusText: 'Bad Gateway',
      headers: { 'content-type': 'text/html' },
    });
    const error = await failure(html);
    expect(error).toBeInstanceOf(ServerError);
    expect(error.status).toBe(502);
    expect(error.code).toBe('http_502');
    expect(error.message).toMatch(/502 Bad Gateway.*text\/html/);
  });

  it("says a 503 page of a proxy's may be a rate limiter's, and how to make it answer 429; not the service's own 503", async () => {
    const page = '<html><center><h1>503 Service Temporarily Unavailable</h1></center>nginx</html>';
    for (const call of ['list', 'create'] as const) {
      const nginx = new Response(page, { status: 503, headers: { 'content-type': 'text/html' } });
      const error = await failure(nginx, call);
      expect(error).toBeInstanceOf(ServerError);
      expect(error.message).toMatch(
        /may be a rate limiter's on the way: have it answer 429 .*limit_req_status 429/,
      );
    }
    const own = await failure(apiError(503));
    expect(own.message).not.toMatch(/rate limiter/);
  });

  it.each([
    ['an empty body', ''],
    ['garbage', '}{ not json'],
    ['JSON of another shape', '{"error":"nope"}'],
    ['JSON with a wrong field type', '{"code":1,"message":"x","status":404}'],
  ])('falls back to a code and a message saying what came back for %s', async (_, body) => {
    const error = await failure(new Response(body, { status: 404 }), 'get');
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.code).toBe('http_404');
    expect(error.message).toMatch(/HTTP 404/);
    expect(error.message).toMatch(body ? /not the service's Error JSON/ : /empty body/);
  });

  it('blames baseUrl for a 404 whose body is not the Error JSON, but not for one it could not read', async () => {
    const read = await failure(new Response('<h1>nope</h1>', { status: 404 }), 'get');
    expect(read.message).toMatch(/check baseUrl/);
    const big = JSON.stringify({ code: 'not_found', message: 'x'.repeat(200), status: 404 });
    const client = clientWith(scriptedFetch(new Response(big, { status: 404 })).fetch, {
      ...noRetry,
      maxResponseBytes: 50,
    });
    const unread = (await client.getPet(1).catch((e: unknown) => e)) as ApiError;
    expect(unread).toBeInstanceOf(NotFoundError);
    expect(unread.message).toMatch(
      /could not be read \(.*\): the body is larger than maxResponseBytes \(50 bytes\)/,
    );
    expect(unread.message).not.toMatch(/baseUrl/);
  });

  it('lets the HTTP status win over a body status that disagrees', async () => {
    const error = await failure(json({ code: 'x', message: 'm', status: 500 }, 404), 'get');
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.status).toBe(404);
  });

  it('carries the rate-limit headers of the failed response', async () => {
    const reset = Math.floor(Date.now() / 1000) + 30;
    const error = await failure(
      apiError(401, {
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '7',
        'x-ratelimit-reset': String(reset),
      }),
    );
    expect(error.rateLimit).toEqual({
      limit: 60,
      remaining: 7,
      resetAt: new Date(reset * 1000),
    });
  });

  it('wraps a network failure in ConnectionError, keeping the cause', async () => {
    const cause = new TypeError('fetch failed');
    const error = await failure(cause);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).not.toBeInstanceOf(TimeoutError);
    expect(error.cause).toBe(cause);
    expect(error.message).toMatch(/got no response.*fetch failed/);
  });

  it('gives every error class a literal name that survives bundling', () => {
    const classes = Object.entries(sdk).filter(
      ([, value]) => typeof value === 'function' && 'brand' in value,
    );
    expect(classes).toHaveLength(11);
    for (const [name, Class] of classes as [string, { brand: string }][]) {
      expect(Class.brand).toBe(name);
    }
    expect(new TimeoutError('t').name).toBe('TimeoutError');
    expect(new RequestValidationError('r', []).name).toBe('RequestValidationError');
  });

  it('answers instanceof for an error made by another copy of the SDK', () => {
    const brands = Symbol.for('@animal-store/sdk/error-brands');
    const foreign = Object.assign(new Error('x'), {
      [brands]: ['NotFoundError', 'ApiError', 'AnimalStoreError'],
    });
    expect(foreign).toBeInstanceOf(NotFoundError);
    expect(foreign).toBeInstanceOf(ApiError);
    expect(foreign).toBeInstanceOf(AnimalStoreError);
    expect(foreign).not.toBeInstanceOf(RateLimitError);
    expect(new Error('plain')).not.toBeInstanceOf(AnimalStoreError);
    expect(
      new ServerError('s', { status: 500, code: 'c', headers: new Headers() }),
    ).not.toBeInstanceOf(NotFoundError);
  });
});
