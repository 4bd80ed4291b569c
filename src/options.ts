import type { Environment } from './environments.js';
import type { Hooks, RetryInfo, TracingOptions } from './observe.js';
import type { QuotaStore } from './quota/store.js';

/**
 * What a custom `fetch` is called with as its second argument: a plain
 * object, as the platform `fetch` takes it (so the platform's, undici's and
 * any wrapper of theirs fit). It is the call's own copy: changing it changes
 * that request only.
 */
export interface FetchInit {
  /** `'GET'` or `'POST'`. */
  method: string;
  /** Every header of the request, names lowercase, `authorization` (the key) included. */
  headers: Record<string, string>;
  /** The JSON body of a `POST`; `null` for a `GET`. */
  body: string | null;
  /** Aborts the request when the call is aborted or its attempt times out. */
  signal: AbortSignal;
  /** The client never follows a redirect: keep it. */
  redirect: 'manual';
}

/**
 * What a custom `fetch` resolves to: a `Response`, the platform's or another
 * fetch's (undici's fits). This is the part the client reads.
 */
export interface FetchResponse {
  /** The HTTP status. */
  readonly status: number;
  /** The reason phrase (quoted in messages, the key redacted). */
  readonly statusText: string;
  /** The response headers, as a `Headers` reads them. */
  readonly headers: {
    /** The value of a header, or `null`. */
    get(name: string): string | null;
    /** Whether a header is present. */
    has(name: string): boolean;
    /** Calls `callback` with each header. */
    forEach(callback: (value: string, name: string) => void): void;
  };
  /** A web `ReadableStream` of the body, or `null`. */
  readonly body: unknown;
  /** The body as text, for a fetch whose body is no web stream. */
  text(): Promise<string>;
}

/** Options of {@link PetsClient}. Every one is optional. */
export interface ClientOptions {
  /**
   * Your API key, sent as `Authorization: Bearer <apiKey>`.
   * @default process.env.ANIMAL_STORE_API_KEY (where `process` exists)
   */
  apiKey?: string | undefined;
  /**
   * Which environment of the service to call: `'production'` or `'staging'`
   * (checked even when `baseUrl` overrides it).
   * @default 'production'
   */
  environment?: Environment | undefined;
  /**
   * Base address of the service, ending in `/v1`: the address your account
   * was given. Overrides `environment`. Plain `http://` is accepted only for
   * loopback hosts unless `allowInsecureHttp` is set.
   * @default process.env.ANIMAL_STORE_BASE_URL when neither `baseUrl` nor `environment` is given, else the environment's address
   * @example 'http://127.0.0.1:4010/v1'
   */
  baseUrl?: string | undefined;
  /**
   * Retries after the first attempt; `0` disables retries.
   * @default 2
   */
  maxRetries?: number | undefined;
  /**
   * Longest single wait the client accepts. When the service asks for a longer
   * one, the call fails at once with `RateLimitError` instead of waiting.
   * Back-off waits are capped at it; the shortest is 100 ms, so below that a
   * failure that needs one is not retried.
   * @default 60000
   */
  maxRetryDelayMs?: number | undefined;
  /**
   * Time limit of each attempt, reading the body included. Waits between
   * attempts and holds before sending are not counted: to bound the whole
   * call, pass `signal: AbortSignal.timeout(ms)` to it. `Infinity` sets no
   * limit: while the key's budget is unknown, the calls of every client of
   * the key then wait on an answer that may never come.
   * @default 30000
   */
  timeoutMs?: number | undefined;
  /**
   * The most a response body may hold, counted in decoded bytes (so that
   * compression cannot get round it). Past it the client stops reading and the
   * call fails: a `ResponseValidationError` for a 2xx. A valid answer holds at
   * most 100 pets; this leaves room for names up to about 10 kB each.
   * @default 1048576 (1 MiB)
   */
  maxResponseBytes?: number | undefined;
  /**
   * The `fetch` to send requests with. It is called as the platform's would
   * be: `fetch(url, init)`, with `url` a string and `init` a plain object
   * (`method`, `headers` as a plain object holding `authorization`, `body`,
   * `signal`, `redirect: 'manual'`), so a wrapper such as
   * `(input, init) => fetch(input, { ...init, headers: { ...init?.headers, 'x-trace': id } })`
   * keeps the key.
   * @default globalThis.fetch
   */
  fetch?: ((url: string, init: FetchInit) => Promise<FetchResponse>) | undefined;
  /**
   * Extra headers sent with every request. `Authorization` is reserved for
   * the key; a value `undefined` is left out.
   */
  headers?: HeadersOption | undefined;
  /**
   * Called before every wait (between attempts, and before a held request is
   * sent): the same callback as `hooks.beforeRetry`, under its older name.
   */
  onRetry?: ((info: RetryInfo) => void) | undefined;
  /** Functions called before each request, after each response, before each wait and when a call fails. */
  hooks?: Hooks | undefined;
  /**
   * OpenTelemetry tracing: one span per call, with an event per retry and
   * hold. On when `@opentelemetry/api` has a registered tracer provider, or
   * when one is passed here; `false` turns it off.
   */
  tracing?: TracingOptions | false | undefined;
  /**
   * Where the key's budget lives. By default, one in-memory store per process,
   * so that clients with the same key and base URL share one budget and one
   * cooldown. Pass `new MemoryQuotaStore()` for a budget of this client's own,
   * or a store shared by many processes (see README: one budget per key and base URL).
   * @default the process-wide MemoryQuotaStore
   */
  quotaStore?: QuotaStore | undefined;
  /**
   * How much to log: one line per request at `debug`, one per retry at `info`.
   * @default 'warn'
   */
  logLevel?: LogLevel | undefined;
  /**
   * Where log lines go.
   * @default console
   */
  logger?: Logger | undefined;
  /**
   * Emit the one-time runtime warning when a deprecated method (`getPet`) is called.
   * @default true
   */
  deprecationWarnings?: boolean | undefined;
  /**
   * Allow a plain `http://` base address on a host other than loopback. The
   * key would travel in clear text; use only behind a trusted network.
   * @default false
   */
  allowInsecureHttp?: boolean | undefined;
  /**
   * Confirms that running in a browser is intended, which silences the one-time
   * warning. Anyone who can open the page can read a key shipped to it: use
   * this only with per-user keys or behind a proxy.
   * @default false
   */
  dangerouslyAllowBrowser?: boolean | undefined;
}

/** Options accepted by every method as its last argument. */
export interface RequestOptions {
  /** Aborts the call, also during a back-off wait; the call then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Overrides the client's `timeoutMs` (each attempt's limit) for this call; bound the whole call with `signal: AbortSignal.timeout(ms)`. */
  timeoutMs?: number | undefined;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined;
  /**
   * Headers for this call, merged over the client's. `Authorization` is
   * reserved for the key; a value `undefined` is left out.
   */
  headers?: HeadersOption | undefined;
}

/**
 * Extra headers: names and values (a value `undefined` is left out), or a
 * `Headers`.
 */
export type HeadersOption = Record<string, string | undefined> | Headers;

/** How much the client logs. Each level includes the ones before it. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/** Where log lines go; `console` fits. */
export interface Logger {
  /** Failures the call survived: a store that could not record, a hook that threw. */
  error(message: string): void;
  /** Something to fix: an unknown option, headers that could not be used. */
  warn(message: string): void;
  /** One line per retry and per hold. */
  info(message: string): void;
  /** One line per request. */
  debug(message: string): void;
}
