import { MockServerOptionError } from './MockServerOptionError.js';
import { PLAN_LIMITS } from './plans.js';
import type { MockServiceOptions } from './service.js';

function fail(message: string): never {
  throw new MockServerOptionError(message);
}

const quote = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : String(value);

const positiveInteger = (value: unknown): boolean =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/**
 * Checks what the mock service is made with, so that a typo fails at once
 * rather than as a mock that answers something else than the service would.
 */
export function checkServiceOptions(options: MockServiceOptions): void {
  const { plan, apiKeys, limits, seed, now } = options;
  if (plan !== undefined && !Object.hasOwn(PLAN_LIMITS, plan)) {
    fail(`plan must be one of ${Object.keys(PLAN_LIMITS).join(', ')}; got ${quote(plan)}.`);
  }
  if (apiKeys !== undefined) {
    if (!Array.isArray(apiKeys)) {
      fail(`apiKeys must be an array of keys, e.g. ['test-key']; got ${quote(apiKeys)}.`);
    }
    for (const key of apiKeys) {
      if (typeof key !== 'string' || !/^\S+$/.test(key)) {
        fail(`apiKeys must hold non-empty keys without spaces; got ${quote(key)}.`);
      }
    }
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
  if (seed === undefined) return;
  if (!Array.isArray(seed)) fail(`seed must be an array of animals; got ${quote(seed)}.`);
  const ids = new Set<number>();
  seed.forEach((pet: unknown, at) => {
    const { id, name, categoryId, status } = (pet ?? {}) as Record<string, unknown>;
    const why =
      typeof name !== 'string'
        ? 'name must be a string'
        : !Number.isSafeInteger(categoryId)
          ? 'categoryId must be an integer'
          : status !== undefined && !['available', 'pending', 'sold'].includes(status as string)
            ? "status must be 'available', 'pending' or 'sold'"
            : id !== undefined && !positiveInteger(id)
              ? 'id must be a positive integer'
              : id !== undefined && ids.has(id as number)
                ? `id ${quote(id)} is used twice`
                : undefined;
    if (why) fail(`seed[${at}] is not an animal the service could answer: ${why}.`);
    if (id !== undefined) ids.add(id as number);
  });
}
