import { isPetStatus, STATUS_MESSAGE } from '../rules.js';
import type { NewPet } from '../types.js';
import { MockServerOptionError } from './MockServerOptionError.js';
import { PLAN_LIMITS, type Plan, type RateLimits } from './plans.js';

/** Options of the mock service, shared by {@link createHandlers} and {@link startMockServer}. */
export interface MockServiceOptions {
  /**
   * Keys accepted as `Authorization: Bearer <key>`; any other gets 401.
   * @default any non-empty bearer token is accepted
   */
  apiKeys?: readonly string[] | undefined;
  /**
   * Rate-limit plan: `'free'`, `'pro'`, `'business'` or `'enterprise'`, with the
   * service's limits per minute and per day.
   * @default 'free' (60 per minute, 1,000 per day)
   */
  plan?: Plan | undefined;
  /** Custom limits (the Enterprise plan's, or any plan's, overridden). */
  limits?: Partial<RateLimits> | undefined;
  /**
   * Animals the store starts with (and returns to on `reset()`). Those without
   * `id` get one assigned. {@link SAMPLE_PETS} offers three.
   * @default [] (an empty store)
   */
  seed?: ReadonlyArray<NewPet & { id?: number }> | undefined;
  /**
   * The clock, in epoch milliseconds; inject one to test time-dependent behaviour.
   * @default Date.now
   */
  now?: (() => number) | undefined;
  /**
   * Base address the service answers under; only its path matters to routing.
   * @default 'https://api.animal-store.example/v1'
   */
  baseUrl?: string | undefined;
}

function fail(message: string): never {
  throw new MockServerOptionError(message);
}

const quote = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : String(value);

const isUrl = (text: string): boolean => {
  try {
    return Boolean(new URL(text));
  } catch {
    return false;
  }
};

const positiveInteger = (value: unknown): boolean =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

// Those of the service, and those of the server and the msw handlers around it.
const KNOWN = ['apiKeys', 'plan', 'limits', 'seed', 'now', 'baseUrl', 'port', 'host', 'service'];
const KNOWN_LIMITS = ['perMinute', 'perDay', 'windowMs'];

function unknown(options: object, known: readonly string[], prefix: string, also = ''): void {
  const name = Object.keys(options).find((key) => !known.includes(key));
  if (name !== undefined) {
    fail(
      `${prefix}${name} is no option of the mock; the options are ${known.map((k) => prefix + k).join(', ')}${also}.`,
    );
  }
}

/**
 * Checks what the mock service is made with, so that a typo fails at once
 * rather than as a mock that answers something else than the service would.
 */
export function checkServiceOptions(options: MockServiceOptions): void {
  if (typeof options !== 'object' || options === null) {
    fail(`the options must be an object such as { apiKeys: ['test-key'] }; got ${quote(options)}.`);
  }
  const { plan, apiKeys, limits, seed, now } = options;
  unknown(
    options,
    KNOWN,
    '',
    ' (service for createHandlers only; port and host for startMockServer, which takes no baseUrl)',
  );
  if (typeof limits === 'object' && limits !== null) unknown(limits, KNOWN_LIMITS, 'limits.');
  if (plan !== undefined && !Object.hasOwn(PLAN_LIMITS, plan)) {
    fail(`plan must be one of ${Object.keys(PLAN_LIMITS).join(', ')}; got ${quote(plan)}.`);
  }
  if (apiKeys !== undefined) {
    if (!Array.isArray(apiKeys)) {
      fail(`apiKeys must be an array of keys, e.g. ['test-key']; got ${quote(apiKeys)}.`);
    }
    if (apiKeys.length === 0) {
      fail('apiKeys is empty, so every request would get 401; leave it out to accept any key.');
    }
    for (const key of apiKeys) {
      if (typeof key !== 'string' || !/^[\x21-\x7e]+$/.test(key)) {
        fail(
          `apiKeys must hold non-empty keys of visible ASCII, without spaces; got ${quote(key)}.`,
        );
      }
    }
  }
  if (limits !== undefined && (typeof limits !== 'object' || limits === null)) {
    fail(`limits must be an object such as { perMinute: 10 }; got ${quote(limits)}.`);
  }
  if (typeof limits?.windowMs === 'number' && limits.windowMs > 86_400_000) {
    fail(`limits.windowMs must be at most a day (86400000); got ${limits.windowMs}.`);
  }
  const { baseUrl } = options;
  if (baseUrl !== undefined && (typeof baseUrl !== 'string' || !isUrl(baseUrl))) {
    fail(
      `baseUrl must be an absolute URL such as 'http://127.0.0.1:4010/v1'; got ${quote(baseUrl)}.`,
    );
  }
  for (const name of ['perMinute', 'perDay', 'windowMs'] as const) {
    const value = limits?.[name];
    if (value !== undefined && !positiveInteger(value)) {
      fail(`limits.${name} must be a positive integer; got ${quote(value)}.`);
    }
  }
  if (now !== undefined && typeof now !== 'function') {
    fail(`now must be a function returning epoch milliseconds; got ${quote(now)}.`);
  }
  if (seed !== undefined) checkSeed(seed);
}

/** Checks animals to seed a store with: each one the service could answer. */
export function checkSeed(seed: unknown): void {
  if (!Array.isArray(seed)) fail(`seed must be an array of animals; got ${quote(seed)}.`);
  const ids = new Set<number>();
  seed.forEach((pet: unknown, at) => {
    const { id, name, categoryId, status } = (pet ?? {}) as Record<string, unknown>;
    const why =
      typeof name !== 'string'
        ? 'name must be a string'
        : !Number.isSafeInteger(categoryId)
          ? 'categoryId must be an integer'
          : status !== undefined && !isPetStatus(status)
            ? STATUS_MESSAGE
            : id !== undefined && (!positiveInteger(id) || (id as number) > 2 ** 52)
              ? 'id must be a positive integer up to 2^52'
              : id !== undefined && ids.has(id as number)
                ? `id ${quote(id)} is used twice`
                : undefined;
    if (why) fail(`seed[${at}] is not an animal the service could answer: ${why}.`);
    if (id !== undefined) ids.add(id as number);
  });
}
