import { inspect } from 'node:util';
import fc from 'fast-check';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AnimalStoreError,
  MemoryQuotaStore,
  type NewPet,
  PetsClient,
  RequestValidationError,
} from '../src/index.js';
import { today, useFakeTime } from './helpers/fake-time.js';

// Property-based fuzzing: arbitrary statuses, headers and bodies from the
// "server" (a stub fetch under fake time) and arbitrary inputs to the three
// methods. Seeded, so a failure reproduces; 1,000 runs per property.

const KEY = 'sk_prop_5f3c9a1e77';
const RUNS = 1000;
const SEED = 1122;
const TIMEOUT = 1000;
const MAX_RETRIES = 2;
const MAX_DELAY = 2000;
// Every attempt may time out, and before each attempt after the first the
// client may wait at most maxRetryDelayMs for its retry and again at its gate.
const BOUND = TIMEOUT * (MAX_RETRIES + 1) + 2 * MAX_DELAY * (MAX_RETRIES + 1);

type Reply =
  | { kind: 'response'; status: number; headers: [string, string][]; body: string }
  | { kind: 'throw' }
  | { kind: 'hang' };

const PET = { id: 1, name: 'Rex', categoryId: 2, status: 'available' };
const headerValue = fc.oneof(
  fc.constantFrom('0', '1', '0.5', '-3', '2.5', 'soon', '', '99999', KEY, `Bearer ${KEY}`),
  fc.integer({ min: -5, max: 5 }).map((n) => new Date(today() + n * 1000).toUTCString()),
  fc.string(),
);
const reply: fc.Arbitrary<Reply> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('response' as const),
      status: fc.oneof(
        fc.constantFrom(200, 201, 204, 400, 401, 403, 404, 429, 429, 500, 502, 503),
        fc.integer({ min: 200, max: 599 }),
      ),
      headers: fc.array(
        fc.tuple(
          fc.constantFrom(
            'retry-after',
            'x-ratelimit-limit',
            'x-ratelimit-remaining',
            'x-ratelimit-reset',
            'content-type',
            'x-echo',
            'date',
          ),
          headerValue,
        ),
        { maxLength: 5 },
      ),
      body: fc.oneof(
        fc.constant(JSON.stringify(PET)),
        fc.constant(JSON.stringify([PET])),
        fc.constant(JSON.stringify({ code: 'x', message: `bad key ${KEY}`, status: 401 })),
        fc.constant('<html>502</html>'),
        fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
        fc.string(),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'throw' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
);

function stubFrom(replies: Reply[]) {
  const sent: { method: string; previousStatus: number | undefined }[] = [];
  let last: number | undefined;
  const fetch = async (url: string, init: RequestInit) => {
    const input = new Request(url, init);
    sent.push({ method: input.method, previousStatus: last });
    const next = replies.shift() ?? {
      kind: 'response',
      status: 200,
      headers: [],
      body: JSON.stringify(
        input.method === 'GET' && !/\/pets\/-?\d+$/.test(input.url) ? [PET] : PET,
      ),
    };
    if (next.kind === 'throw') {
      last = undefined;
      throw new TypeError('fetch failed');
    }
    if (next.kind === 'hang') {
      last = undefined;
      return new Promise<Response>(() => {});
    }
    last = next.status;
    const headers = new Headers();
    for (const [name, value] of next.headers) {
      try {
        headers.append(name, value);
      } catch {
        // a value fetch could not carry either
      }
    }
    const noBody = next.status === 204 || next.status === 205 || next.status === 304;
    return new Response(noBody ? null : next.body, { status: next.status, headers });
  };
  return { fetch, sent };
}

async function settleWithin<T>(
  promise: Promise<T>,
): Promise<{ settled: boolean; elapsed: number; outcome?: { value?: T; error?: unknown } }> {
  let outcome: { value?: T; error?: unknown } | undefined;
  promise.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  const start = Date.now();
  while (!outcome && Date.now() - start <= BOUND + 100) await vi.advanceTimersByTimeAsync(50);
  await vi.advanceTimersByTimeAsync(0);
  return outcome
    ? { settled: true, elapsed: Date.now() - start, outcome }
    : { settled: false, elapsed: Date.now() - start };
}

const newClient = (fetch: (url: string, init: RequestInit) => Promise<Response>) =>
  new PetsClient({
    quotaStore: new MemoryQuotaStore(),
    apiKey: KEY,
    baseUrl: 'http://127.0.0.1:9/v1',
    fetch,
    timeoutMs: TIMEOUT,
    maxRetries: MAX_RETRIES,
    maxRetryDelayMs: MAX_DELAY,
    logLevel: 'off',
    deprecationWarnings: false,
  });

const run = (client: PetsClient, op: number): Promise<unknown> =>
  op === 0
    ? client.listPets({ limit: 10 })
    : op === 1
      ? client.createPet({ name: 'Rex', categoryId: 2 })
      : client.getPet(1);

function expectNoKey(error: unknown) {
  const text = [
    String(error),
    (error as Error).stack,
    JSON.stringify(error),
    inspect(error, { depth: 6 }),
    JSON.stringify((error as { body?: unknown }).body ?? null),
    [...((error as { headers?: Headers }).headers ?? [])].join(' '),
  ].join('\n');
  expect(text).not.toContain(KEY);
}

// The bound is in fake time; loading the Zod chunk (on the first declined
// value) is real I/O, so it is loaded before the clock is faked.
beforeAll(async () => {
  await import('../src/validation/verdict.js');
});
beforeEach(() => useFakeTime());
afterEach(() => vi.useRealTimers());

describe('properties', () => {
  it('every call ends within the bound, with a value or an AnimalStoreError that does not hold the key', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(reply, { maxLength: 4 }),
        fc.integer({ min: 0, max: 2 }),
        async (replies, op) => {
          const { fetch } = stubFrom([...replies]);
          const result = await settleWithin(run(newClient(fetch), op));
          expect(result.settled, `still pending after ${result.elapsed} ms`).toBe(true);
          if (result.outcome && 'error' in result.outcome) {
            expect(result.outcome.error).toBeInstanceOf(AnimalStoreError);
            expectNoKey(result.outcome.error);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('never sends a POST twice unless a 429 preceded the resend', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(reply, { maxLength: 4 }), async (replies) => {
        const { fetch, sent } = stubFrom([...replies]);
        await settleWithin(run(newClient(fetch), 1));
        for (const resend of sent.slice(1)) expect(resend.previousStatus).toBe(429);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('answers arbitrary input with a result or a RequestValidationError, sending nothing when invalid', async () => {
    const input = fc.oneof(
      fc.anything(),
      fc.record(
        {
          name: fc.anything(),
          categoryId: fc.anything(),
          status: fc.anything(),
          limit: fc.anything(),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(input, fc.integer({ min: 0, max: 2 }), async (value, op) => {
        const { fetch, sent } = stubFrom([]);
        const client = newClient(fetch);
        const call: Promise<unknown> =
          op === 0
            ? client.listPets(value as never)
            : op === 1
              ? client.createPet(value as NewPet)
              : client.getPet(value as number);
        const result = await settleWithin(call);
        expect(result.settled).toBe(true);
        // Invalid input is refused before sending; valid input is sent once
        // (the stub's answer may then contradict it: another id, a category).
        if (sent.length === 0) {
          expect((result.outcome as { error?: unknown }).error).toBeInstanceOf(
            RequestValidationError,
          );
        } else {
          expect(sent).toHaveLength(1);
          const error = (result.outcome as { error?: unknown }).error;
          if (error !== undefined) expect(error).not.toBeInstanceOf(RequestValidationError);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
