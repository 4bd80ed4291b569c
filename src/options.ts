import { readEnv } from './auth.js';
import { type Environment, environments } from './environments.js';
import { AnimalStoreError } from './errors.js';
import { isLogLevel, type Logger, type LogLevel } from './logger.js';
import type { Hooks, RetryInfo, TracingOptions } from './observe.js';
import type { QuotaStore } from './quota/store.js';

/** Environment variable read for the base address when neither `baseUrl` nor `environment` is given. */
export const BASE_URL_ENV = 'ANIMAL_STORE_BASE_URL';

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
  readonly status: number;
  readonly statusText: string;
  readonly headers: {
    get(name: string): string | null;
    has(name: string): boolean;
    forEach(callback: (value: string, name: string) => void): void;
  };
  /** A web `ReadableStream` of the body, or `null`. */
  readonly body: unknown;
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
   * Which environment of the service to call.
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
   * @default 60000
   */
  maxRetryDelayMs?: number | undefined;
  /**
   * Time limit of each attempt, reading the body included.
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
  /** Called before every wait (between attempts, and before a held request is sent), to see and log each decision. */
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
  /** Overrides the client's `timeoutMs` for this call. */
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

/** The defaults, in one place. */
export const DEFAULTS = Object.freeze({
  environment: 'production' as Environment,
  maxRetries: 2,
  maxRetryDelayMs: 60_000,
  timeoutMs: 30_000,
  maxResponseBytes: 1_048_576,
  logLevel: 'warn' as LogLevel,
});

function fail(message: string): never {
  throw new AnimalStoreError(message);
}

/** Checks a call's `signal` option: an `AbortSignal`, or absent. */
export function checkSignal(signal: unknown, where: string): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  const candidate = signal as Partial<AbortSignal> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.aborted !== 'boolean' ||
    typeof candidate.addEventListener !== 'function' ||
    typeof candidate.throwIfAborted !== 'function'
  ) {
    fail(
      `Invalid ${where}: expected an AbortSignal (from an AbortController, or AbortSignal.timeout(ms)), got ${describeValue(signal)}; nothing was sent.`,
    );
  }
  return signal as AbortSignal;
}

/** A value as a message quotes it: a string shows as one, so that `'3'` is not mistaken for `3`. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean' || value == null)
    return String(value);
  return typeof value === 'function' ? 'a function' : `a value of type ${typeof value}`;
}

/** Checks a retry count; `where` names the option in the message. */
export function checkMaxRetries(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    fail(
      `Invalid ${where}: expected a whole number of retries ≥ 0 (0 disables retries), got ${describeValue(value)}.`,
    );
  }
  return value;
}

/** Checks a size in bytes. */
export function checkBytes(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    fail(`Invalid ${where}: expected a whole number of bytes ≥ 1, got ${describeValue(value)}.`);
  }
  return value;
}

/** Checks a duration in milliseconds; `Infinity` means no limit. */
export function checkDuration(value: unknown, where: string, min: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < min) {
    fail(
      `Invalid ${where}: expected a number of milliseconds ≥ ${min} (or Infinity), got ${describeValue(value)}.`,
    );
  }
  return value;
}

function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    /^127(?:\.\d{1,3}){3}$/.test(hostname) ||
    hostname === '[::1]'
  );
}

/** Resolves `baseUrl` or `environment` to a checked base address without a trailing slash. */
export function resolveBaseUrl(options: ClientOptions): string {
  if (options.baseUrl === undefined && options.environment === undefined) {
    const fromEnv = readEnv(BASE_URL_ENV);
    if (fromEnv !== undefined) return checkBaseUrl(fromEnv, BASE_URL_ENV, options);
  }
  if (options.baseUrl === undefined) {
    const environment = options.environment ?? DEFAULTS.environment;
    if (!Object.hasOwn(environments, environment)) {
      fail(
        `Invalid environment ${JSON.stringify(environment)}: use 'production' or 'staging', or pass baseUrl.`,
      );
    }
    return environments[environment];
  }
  return checkBaseUrl(options.baseUrl, 'baseUrl', options);
}

/** Checks a base address given as `where` (the option or the environment variable). */
function checkBaseUrl(baseUrl: string, where: string, options: ClientOptions): string {
  let url: URL;
  try {
    const location = (globalThis as { location?: { href?: string } }).location?.href;
    url = new URL(baseUrl, location);
  } catch (cause) {
    throw new AnimalStoreError(
      `Invalid ${where} ${JSON.stringify(baseUrl)}: expected an absolute URL such as 'https://api.example.com/v1'.`,
      { cause },
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail(`Invalid ${where}: the protocol must be https: or http:, got ${url.protocol}.`);
  }
  if (url.username || url.password) {
    fail(`Invalid ${where}: it must not carry credentials; pass the key as apiKey.`);
  }
  // `…/v1?` and `…/v1#` have an empty search and hash, but keep the mark.
  if (url.search || url.hash || /[?#]/.test(url.href)) {
    fail(`Invalid ${where}: it must not carry a query or a fragment.`);
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !options.allowInsecureHttp) {
    fail(
      `Refusing to send the API key in clear text to ${url.host}: use https:, ` +
        'or set allowInsecureHttp: true if this network is trusted.',
    );
  }
  return url.href.replace(/\/+$/, '');
}

// Headers of the connection, which fetch refuses or sets itself.
const CONNECTION_HEADERS = [
  'connection',
  'content-length',
  'expect',
  'host',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/**
 * Checks extra headers: an object of names and values (a `Headers` or a list
 * of pairs fits too), valid, and not `Authorization`. A value `undefined` is
 * left out rather than sent as the text "undefined".
 */
export function checkHeaders(headers: HeadersOption | undefined, where = 'headers'): Headers {
  const checked = new Headers();
  if (headers === undefined) return checked;
  if (typeof headers !== 'object' || headers === null) {
    fail(
      `Invalid ${where}: expected an object of header names and values, got ${describeValue(headers)}.`,
    );
  }
  // A Headers, a list of pairs, a Map or any other iterable of pairs, or a
  // plain object of names and values.
  const entries =
    Symbol.iterator in headers ? [...new Headers(headers as HeadersInit)] : Object.entries(headers);
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    const lower = String(name).toLowerCase();
    if (lower === 'authorization') {
      fail(`Invalid ${where}: Authorization is set from apiKey; pass the key as apiKey instead.`);
    }
    if (CONNECTION_HEADERS.includes(lower)) {
      fail(
        `Invalid ${where}: ${JSON.stringify(lower)} is set by the HTTP client for each connection and cannot be given.`,
      );
    }
    const kind = typeof value;
    if (kind !== 'string' && kind !== 'number' && kind !== 'boolean') {
      fail(
        `Invalid ${where}: the value of ${JSON.stringify(name)} must be a string, got ${describeValue(value)}.`,
      );
    }
    try {
      checked.set(name, value);
    } catch (cause) {
      throw new AnimalStoreError(
        `Invalid ${where}: header ${JSON.stringify(name)} is not valid (names must be tokens and values must not hold line breaks).`,
        { cause },
      );
    }
  }
  return checked;
}

const HOOK_NAMES = ['beforeRequest', 'afterResponse', 'beforeRetry', 'onError'] as const;

/**
 * Checks the `hooks` option: each one given must be a function. Returns a
 * frozen copy, so that a hook replaced or a getter on the caller's object
 * later changes nothing.
 */
export function checkHooks(hooks: Hooks | undefined): Hooks {
  if (hooks !== undefined && (typeof hooks !== 'object' || hooks === null)) {
    fail(`Invalid hooks: expected an object of functions, got ${describeValue(hooks)}.`);
  }
  for (const name of Object.keys(hooks ?? {})) {
    if (!(HOOK_NAMES as readonly string[]).includes(name)) {
      fail(`Invalid hooks.${name}: there is no such hook; the hooks are ${HOOK_NAMES.join(', ')}.`);
    }
  }
  const checked: Hooks = {};
  for (const name of HOOK_NAMES) {
    const hook = hooks?.[name];
    if (hook === undefined) continue;
    if (typeof hook !== 'function') {
      fail(`Invalid hooks.${name}: expected a function, got ${describeValue(hook)}.`);
    }
    checked[name] = hook as never;
  }
  return Object.freeze(checked);
}

/**
 * The `tracing` option, read once: a copy, so that a getter on the caller's
 * object is not read per call. What the provider is gets checked when the
 * tracing code loads (a provider without `getTracer` is logged and skipped),
 * so that apps without OpenTelemetry carry none of it.
 */
export function checkTracing(
  tracing: TracingOptions | false | undefined,
): TracingOptions | false | undefined {
  if (!tracing) return tracing;
  const { tracerProvider, httpSpans } = tracing;
  return { tracerProvider, httpSpans };
}

/** Checks a `logger` option: `console` when absent. */
export function checkLogger(value: Logger | undefined): Logger {
  if (value === undefined) return console;
  for (const level of ['error', 'warn', 'info', 'debug'] as const) {
    if (typeof value?.[level] !== 'function') {
      fail(
        `Invalid logger: expected an object with error, warn, info and debug methods (console fits); ${level} is missing.`,
      );
    }
  }
  return value;
}

/** Checks a `logLevel` option. */
export function checkLogLevel(value: unknown): LogLevel {
  if (value === undefined) return DEFAULTS.logLevel;
  if (!isLogLevel(value)) {
    fail(
      `Invalid logLevel ${JSON.stringify(value)}: use 'off', 'error', 'warn', 'info' or 'debug'.`,
    );
  }
  return value;
}

const OPTION_NAMES = {
  apiKey: 1,
  environment: 1,
  baseUrl: 1,
  maxRetries: 1,
  maxRetryDelayMs: 1,
  timeoutMs: 1,
  maxResponseBytes: 1,
  fetch: 1,
  headers: 1,
  onRetry: 1,
  hooks: 1,
  tracing: 1,
  quotaStore: 1,
  logLevel: 1,
  logger: 1,
  deprecationWarnings: 1,
  allowInsecureHttp: 1,
  dangerouslyAllowBrowser: 1,
} satisfies Record<keyof ClientOptions, 1>;

const TRACING_OPTION_NAMES = { tracerProvider: 1, httpSpans: 1 } satisfies Record<
  keyof TracingOptions,
  1
>;

const REQUEST_OPTION_NAMES = {
  signal: 1,
  timeoutMs: 1,
  maxRetries: 1,
  headers: 1,
} satisfies Record<keyof RequestOptions, 1>;

/**
 * The names in `options` that are none of `known` (a misspelling, which
 * would otherwise be ignored in silence), each quoted with `prefix` and with
 * the name it is likely meant for.
 */
function unknownNames(options: object, known: object, prefix = ''): string[] {
  const names = Object.keys(known);
  const unknown = Object.keys(options).filter((name) => !Object.hasOwn(known, name));
  // Quoted only when it looks like a name: anything else (a pasted key, a
  // long or odd string) is counted, never shown.
  const shown = unknown.filter((name) => /^[A-Za-z_$][\w$]{0,39}$/.test(name)).slice(0, 5);
  const lines = shown.map((name) => {
    const stem = name.toLowerCase().slice(0, 5);
    const near = names.find((candidate) => candidate.toLowerCase().startsWith(stem));
    return `"${prefix}${name}"${near ? ` (did you mean ${prefix}${near}?)` : ''}`;
  });
  const more = unknown.length - shown.length;
  if (more > 0) lines.push(`${more} more${prefix ? ` in ${prefix.slice(0, -1)}` : ''}`);
  return lines;
}

/** The names in client options, `tracing` included, that are no option. */
export function unknownOptions(options: ClientOptions): string[] {
  const { tracing } = options;
  return [
    ...unknownNames(options, OPTION_NAMES),
    ...(typeof tracing === 'object' && tracing !== null
      ? unknownNames(tracing, TRACING_OPTION_NAMES, 'tracing.')
      : []),
  ];
}

/** The names in a call's options that are no option. */
export function unknownRequestOptions(options: object): string[] {
  // Per call: nothing is allocated while every name is known.
  for (const name in options) {
    if (!Object.hasOwn(REQUEST_OPTION_NAMES, name)) {
      return unknownNames(options, REQUEST_OPTION_NAMES);
    }
  }
  return [];
}
