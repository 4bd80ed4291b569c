import { isPetStatus, LIMIT, STATUS_MESSAGE } from '../rules.js';
import type { NewPet, Pet } from '../types.js';
import { checkSeed, checkServiceOptions, type MockServiceOptions } from './check-options.js';
import { MockServerOptionError } from './MockServerOptionError.js';
import { PLAN_LIMITS } from './plans.js';
import { RateLimiter, type WindowState } from './rate-limiter.js';

export type { MockServiceOptions } from './check-options.js';

/** The in-memory Animal Store, answering Fetch API requests. */
export interface MockService {
  /** Answers one request as the real service would. */
  handle(request: Request): Promise<Response>;
  /** Animals in the store now, in creation order. */
  readonly pets: readonly Pet[];
  /** Adds animals directly (ids assigned when missing); returns them. */
  seed(pets: ReadonlyArray<NewPet & { id?: number }>): Pet[];
  /** Restores the seed and forgets every rate-limit counter. */
  reset(): void;
  /** The base address the service answers under. */
  readonly baseUrl: string;
}

/** Three sample animals to seed a store with (the demo and the `animal-store-mock` command do). */
export const SAMPLE_PETS: readonly Pet[] = Object.freeze([
  { id: 1, name: 'Rex', categoryId: 1, status: 'available' },
  { id: 2, name: 'Tom', categoryId: 2, status: 'pending' },
  { id: 3, name: 'Polly', categoryId: 3, status: 'sold' },
]);

function problem(status: number, code: string, message: string, headers: Headers): Response {
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify({ code, message, status }), { status, headers });
}

function newPetProblems(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return 'the body must be a JSON object with name and categoryId';
  }
  const { name, categoryId, status } = body as Record<string, unknown>;
  if (typeof name !== 'string') return 'name is required and must be a string';
  if (typeof categoryId !== 'number' || !Number.isSafeInteger(categoryId)) {
    return 'categoryId is required and must be an integer';
  }
  if (status !== undefined && !isPetStatus(status)) {
    return STATUS_MESSAGE;
  }
  return undefined;
}

function parseLimit(raw: string | null): number {
  // The spec declares no 400 for listPets: out-of-range limits are clamped, not refused.
  if (raw === null || !/^-?\d+$/.test(raw)) return LIMIT.default;
  return Math.min(LIMIT.max, Math.max(LIMIT.min, Number(raw)));
}

/**
 * Creates the in-memory service: bearer check (401), request validation (400),
 * 404, `status` filter and `limit`, id assignment, `X-RateLimit-*` on every
 * response and per-plan rate limiting answering 429 with `Retry-After`.
 */
export function createMockService(options: MockServiceOptions = {}): MockService {
  checkServiceOptions(options);
  // Read through a closure so that fake timers installed later apply to the mock too.
  const now = options.now ?? (() => Date.now());
  const baseUrl = (options.baseUrl ?? 'https://api.animal-store.example/v1').replace(/\/+$/, '');
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  const limits = { ...PLAN_LIMITS[options.plan ?? 'free'], ...options.limits };
  const limiter = new RateLimiter(limits);
  const keys = options.apiKeys ? new Set(options.apiKeys) : undefined;
  // A copy: the caller's array may change after this, and reset() restores it.
  const initial = (options.seed ?? []).map((pet) => ({ ...pet }));
  let pets: Pet[] = [];
  let nextId = 1;

  const add = (pet: NewPet & { id?: number }): Pet => {
    const id = pet.id ?? nextId;
    nextId = Math.max(nextId, id + 1);
    const stored: Pet = { id, name: pet.name, categoryId: pet.categoryId };
    if (pet.status !== undefined) stored.status = pet.status;
    pets.push(stored);
    return stored;
  };
  const seed = (list: ReadonlyArray<NewPet & { id?: number }>) => {
    checkSeed(list);
    const taken = list.find((pet) => pets.some((stored) => stored.id === pet.id));
    if (taken) {
      throw new MockServerOptionError(`id ${taken.id} is taken already; seed it without an id.`);
    }
    return list.map(add);
  };
  const reset = () => {
    pets = [];
    nextId = 1;
    limiter.reset();
    seed(initial);
  };
  reset();

  const rateHeaders = (state: WindowState, at: number): Headers =>
    new Headers({
      date: new Date(at).toUTCString(),
      'x-ratelimit-limit': String(state.limit),
      'x-ratelimit-remaining': String(state.remaining),
      'x-ratelimit-reset': String(Math.ceil(state.resetAt / 1000)),
    });

  const route = async (request: Request, path: string, headers: Headers): Promise<Response> => {
    const ok = (body: unknown, status = 200) => {
      headers.set('content-type', 'application/json');
      return new Response(JSON.stringify(body), { status, headers });
    };
    if (path === '/pets' && request.method === 'GET') {
      const url = new URL(request.url);
      const status = url.searchParams.get('status');
      const limit = parseLimit(url.searchParams.get('limit'));
      const matching = status === null ? pets : pets.filter((p) => p.status === status);
      return ok(matching.slice(0, limit));
    }
    if (path === '/pets' && request.method === 'POST') {
      let body: unknown;
      try {
        body = JSON.parse(await request.text());
      } catch {
        return problem(400, 'invalid_body', 'the body must be valid JSON', headers);
      }
      const why = newPetProblems(body);
      if (why) return problem(400, 'invalid_body', why, headers);
      const { name, categoryId, status } = body as NewPet;
      return ok(
        add(status === undefined ? { name, categoryId } : { name, categoryId, status }),
        201,
      );
    }
    const match = /^\/pets\/([^/]+)$/.exec(path);
    if (match && request.method === 'GET') {
      const id = /^-?\d+$/.test(match[1]!) ? Number(match[1]) : Number.NaN;
      const pet = pets.find((p) => p.id === id);
      return pet ? ok(pet) : problem(404, 'not_found', `no animal has id ${match[1]}`, headers);
    }
    return problem(
      404,
      'not_found',
      `${request.method} ${path} is not part of this service`,
      headers,
    );
  };

  const handle = async (request: Request): Promise<Response> => {
    const at = now();
    // What a Date can hold: the Date header is written from it.
    if (!(Math.abs(at) <= 8.64e15)) {
      throw new MockServerOptionError(`now() returned ${at}; it must return epoch milliseconds.`);
    }
    const url = new URL(request.url);
    // Only what lies under the base path is the service: a client whose
    // baseUrl lacks `/v1` must fail here as it would against the service.
    if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) {
      return problem(
        404,
        'not_found',
        `${request.method} ${url.pathname} is outside this service, which answers under ${basePath || '/'}: pass baseUrl ${baseUrl}`,
        new Headers({ date: new Date(at).toUTCString() }),
      );
    }
    const path = url.pathname.slice(basePath.length);
    const auth = request.headers.get('authorization') ?? '';
    // The scheme's name is case-insensitive (RFC 9110, section 11.1).
    const token = /^Bearer (\S+)$/i.exec(auth)?.[1];
    if (!token || (keys && !keys.has(token))) {
      const headers = rateHeaders(limiter.peek(`anonymous:${token ?? ''}`, at), at);
      return problem(401, 'unauthorized', 'the API key is missing or invalid', headers);
    }
    const { allowed, state } = limiter.take(token, at);
    const headers = rateHeaders(state, at);
    if (!allowed) {
      headers.set('retry-after', String(Math.max(1, Math.ceil((state.resetAt - at) / 1000))));
      return problem(
        429,
        'rate_limited',
        `rate limit of ${state.limit} requests exceeded`,
        headers,
      );
    }
    return route(request, path, headers);
  };

  return {
    handle,
    get pets() {
      return pets.map((p) => ({ ...p }));
    },
    seed,
    reset,
    baseUrl,
  };
}
