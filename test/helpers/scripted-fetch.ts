import { PetsClient } from '../../src/client.js';
import type { ClientOptions } from '../../src/options.js';
import { MemoryQuotaStore } from '../../src/quota/MemoryQuotaStore.js';

/** A response to script: a Response, a function of the request, or an error to throw. */
export type Step = Response | Error | ((request: Request) => Response | Promise<Response>);

/** One request the stub received, with the (fake or real) time it arrived. */
export interface Received {
  request: Request;
  at: number;
  body: string;
}

export const API_KEY = 'sk_test_1234567890abcdef';
export const BASE_URL = 'http://127.0.0.1:4010/v1';

/** A fetch stub that answers each request with the next scripted step and records what it got. */
export function scriptedFetch(...steps: Step[]) {
  const received: Received[] = [];
  let fallback: Step | undefined;
  const fetch = async (input: Request | string, init?: RequestInit): Promise<Response> => {
    const request = typeof input === 'string' ? new Request(input, init) : input;
    received.push({ request, at: Date.now(), body: await request.clone().text() });
    const step = steps.length ? steps.shift() : fallback;
    if (step === undefined) throw new Error('scriptedFetch: no response scripted');
    if (step instanceof Error) throw step;
    if (typeof step === 'function') return step(request);
    return step.clone();
  };
  return {
    fetch,
    received,
    /** Answers every request past the script with `step`. */
    thenAlways(step: Step) {
      fallback = step;
      return this;
    },
  };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export function apiError(status: number, headers: Record<string, string> = {}): Response {
  return json({ code: `code_${status}`, message: `message ${status}`, status }, status, headers);
}

export const rex = { id: 1, name: 'Rex', categoryId: 3, status: 'available' as const };

/** A client on `fetch`, with a budget of its own unless `options` names a store. */
export function clientWith(fetch: ClientOptions['fetch'], options: ClientOptions = {}): PetsClient {
  return new PetsClient({
    apiKey: API_KEY,
    baseUrl: BASE_URL,
    fetch,
    logLevel: 'off',
    deprecationWarnings: false,
    quotaStore: new MemoryQuotaStore(),
    ...options,
  });
}
