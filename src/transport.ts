import createClient, { type Client, createQuerySerializer } from 'openapi-fetch';
import type { paths } from '../generated/schema.js';
import { redact } from './auth.js';
import { AnimalStoreError } from './errors/AnimalStoreError.js';
import { ConnectionError } from './errors/ConnectionError.js';
import { errorFromResponse } from './errors/from-response.js';
import { ResponseValidationError } from './errors/ResponseValidationError.js';
import { TimeoutError } from './errors/TimeoutError.js';
import type { LevelLogger } from './logger.js';
import { RateLimitGate } from './rate-limit/gate.js';
import { parseRateLimit, type RateLimitInfo } from './rate-limit/parse.js';
import { rateLimitWait, resetWait } from './rate-limit/wait.js';
import { backoffDelay } from './retry/backoff.js';
import { MAX_TIMER_MS } from './retry/sleep.js';

/** What openapi-fetch resolves to when asked to parse the body as text. */
export interface RawResult {
  data?: string | undefined;
  error?: unknown;
  response: Response;
}

/** One request of one attempt, made with the given signal. */
export type Call = (api: Client<paths>, signal: AbortSignal) => Promise<RawResult>;

/** Settings of a {@link Transport}. */
export interface TransportSettings {
  readonly baseUrl: string;
  readonly apiKey: string;
  /** A caller's own fetch, which receives a `Request`; `undefined` means the platform's. */
  readonly fetch: ((input: Request, init?: RequestInit) => Promise<Response>) | undefined;
  readonly headers: Headers;
  readonly maxRetryDelayMs: number;
  readonly log: LevelLogger;
}

/** What openapi-fetch's `new Request(url, init)` produces here: the init, kept as is. */
class PlainRequest implements RequestInit {
  readonly url: string;
  readonly method: string;
  headers: HeadersInit;
  readonly body: BodyInit | null;
  readonly signal: AbortSignal | null;
  readonly redirect: RequestRedirect;

  constructor(url: string, init: RequestInit & { headers: Headers }) {
    this.url = url;
    this.method = init.method ?? 'GET';
    this.headers = init.headers;
    this.body = init.body ?? null;
    this.signal = init.signal ?? null;
    this.redirect = init.redirect ?? 'follow';
  }
}

/**
 * Sends one attempt: bearer injection, per-attempt timeout (body included),
 * rate-limit bookkeeping, and mapping of every failure to a typed error.
 */
export class Transport {
  readonly api: Client<paths>;
  readonly gate = new RateLimitGate();
  readonly #settings: TransportSettings;
  #rateLimit: RateLimitInfo | undefined;

  constructor(settings: TransportSettings) {
    this.#settings = settings;
    const authorization = `Bearer ${settings.apiKey}`;
    const custom = settings.fetch;
    // Plain objects: fetch copies them faster than a Headers.
    const headers = { ...Object.fromEntries(settings.headers), authorization };
    const jsonHeaders = { ...headers, 'content-type': 'application/json' };
    this.api = createClient<paths>({
      baseUrl: settings.baseUrl,
      // Built once: given options instead, openapi-fetch builds one per call.
      querySerializer: createQuerySerializer(),
      // openapi-fetch builds a Request per call and fetch() would build a second
      // one from it: a plain holder avoids both for the platform fetch.
      Request: PlainRequest as unknown as typeof Request,
      // Bearer injection at the one place every request leaves through. The
      // only header openapi-fetch adds itself is the content type of a JSON body.
      fetch: (request: Request) => {
        const plain = request as unknown as PlainRequest;
        plain.headers = plain.body === null ? headers : jsonHeaders;
        return custom ? custom(new Request(plain.url, plain)) : globalThis.fetch(plain.url, plain);
      },
    });
  }

  /** The last `X-RateLimit-*` values seen. */
  get rateLimit(): RateLimitInfo | undefined {
    return this.#rateLimit;
  }

  /** Runs one attempt; resolves to the parsed JSON body of a 2xx response. */
  async attempt(
    request: string,
    call: Call,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ body: unknown; status: number }> {
    const { log } = this.#settings;
    const controller = new AbortController();
    // A custom fetch may ignore the signal: never wait for it past an abort.
    // (The platform fetch rejects on abort by itself, body read included.)
    let stop: ((reason: unknown) => void) | undefined;
    const stopped = this.#settings.fetch
      ? new Promise<never>((_, reject) => {
          stop = reject;
        })
      : undefined;
    const abort = (reason: unknown) => {
      controller.abort(reason);
      stop?.(reason);
    };
    let timedOut = false;
    // A timeout beyond what setTimeout can hold means "no timeout".
    const timer =
      timeoutMs <= MAX_TIMER_MS
        ? setTimeout(() => {
            timedOut = true;
            abort(new Error(`timed out after ${timeoutMs} ms`));
          }, timeoutMs)
        : undefined;
    const forward = () => abort(signal?.reason);
    signal?.addEventListener('abort', forward, { once: true });
    const started = log.enabled('debug') ? performance.now() : 0;
    try {
      const pending = call(this.api, controller.signal);
      const result = await (stopped ? Promise.race([pending, stopped]) : pending);
      if (started) {
        const ms = Math.round(performance.now() - started);
        log.log('debug', `${request} -> ${result.response.status} in ${ms} ms`);
      }
      return this.#settle(request, result);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof AnimalStoreError) throw error;
      if (timedOut) {
        throw new TimeoutError(
          `${request} timed out after ${timeoutMs} ms (timeoutMs), reading the body included. Raise timeoutMs if the service is slow.`,
          { cause: error },
        );
      }
      const why = error instanceof Error ? this.#scrub(describeFailure(error)) : 'unknown failure';
      throw new ConnectionError(
        `${request} got no response from ${this.#settings.baseUrl}: ${why}. Check the network and baseUrl.`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    }
  }

  #settle(request: string, result: RawResult): { body: unknown; status: number } {
    const { response } = result;
    const now = Date.now();
    const rateLimit = parseRateLimit(response.headers);
    if (rateLimit) {
      this.#rateLimit = rateLimit;
      const untilReset = rateLimit.remaining === 0 ? resetWait(response.headers, now) : undefined;
      if (untilReset !== undefined) {
        this.gate.close(
          now + untilReset,
          `no requests remain until the rate limit resets at ${rateLimit.resetAt.toISOString()}`,
          response.headers,
        );
      }
    }
    if (response.ok)
      return { body: parseBody(request, result.data, response.status), status: response.status };

    const headers = this.#scrubHeaders(response.headers);
    const wait = response.status === 429 ? rateLimitWait(headers, now) : undefined;
    if (response.status === 429) {
      // Every call of this client now waits too: the service bans keys that keep sending.
      this.gate.close(
        now + (wait?.ms ?? backoffDelay(1)),
        `the service answered 429 Too Many Requests to ${request}`,
        headers,
      );
    }
    throw errorFromResponse({
      status: response.status,
      statusText: response.statusText,
      headers,
      body: this.#scrubBody(result.error),
      rateLimit,
      request,
      retryAfterMs: wait?.ms,
      maxRetryDelayMs: this.#settings.maxRetryDelayMs,
    });
  }

  #scrub(text: string): string {
    return redact(text, this.#settings.apiKey);
  }

  #scrubHeaders(headers: Headers): Headers {
    const key = this.#settings.apiKey;
    let leaks = false;
    for (const [, value] of headers) if (value.includes(key)) leaks = true;
    if (!leaks) return headers;
    const clean = new Headers();
    for (const [name, value] of headers) clean.append(name, redact(value, key));
    return clean;
  }

  #scrubBody(body: unknown): unknown {
    if (body === undefined) return undefined;
    if (typeof body === 'string') return this.#scrub(body);
    const text = JSON.stringify(body);
    return text.includes(this.#settings.apiKey) ? JSON.parse(this.#scrub(text)) : body;
  }
}

function parseBody(request: string, text: string | undefined, status: number): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch (cause) {
    const excerpt = (text ?? '').slice(0, 80);
    throw new ResponseValidationError(
      `The service's response to ${request} (HTTP ${status}) is not JSON: ${text ? JSON.stringify(excerpt) : 'the body is empty'}.`,
      {
        issues: [{ path: [], code: 'invalid_json', message: 'the body is not valid JSON' }],
        status,
        cause,
      },
    );
  }
}

// undici says only "fetch failed" and keeps the reason (ECONNREFUSED…) in `cause`.
function describeFailure(error: Error): string {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause?.code ?? cause?.message;
  return typeof detail === 'string' && detail ? `${error.message} (${detail})` : error.message;
}
