// The options, checked from one table of rules (what each takes, its default, the message when it
// is wrong), for the client and a call alike; unknown names are held against the same table.
import { readEnv } from './auth.js';
import { type Environment, environments } from './environments.js';
import { AnimalStoreError, describeThrown, RequestValidationError } from './errors.js';
import type { Hooks, TracingOptions } from './observe.js';
import type { ClientOptions, Logger, LogLevel, RequestOptions } from './options.js';
import type { QuotaStore } from './quota/store.js';

const BASE_URL_ENV = 'ANIMAL_STORE_BASE_URL';

function fail(message: string): never {
  throw new AnimalStoreError(message);
}

/** A value as a message quotes it: a string shows as one, so that `'3'` is not mistaken for `3`. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean' || value == null)
    return String(value);
  return typeof value === 'function' ? 'a function' : `a value of type ${typeof value}`;
}

/** Checks one option's value (`undefined` when not given); `where` names it in messages. */
type Rule<T> = (value: unknown, where: string) => T;

/** A number of `what` of at least `min`: `whole` (a safe integer), else any (`Infinity`: no limit). */
const count =
  (what: string, min: number, whole: boolean, note = ''): Rule<number | undefined> =>
  (value, where) => {
    if (value === undefined) return undefined;
    if (
      typeof value !== 'number' ||
      Number.isNaN(value) ||
      value < min ||
      (whole && !Number.isSafeInteger(value))
    ) {
      fail(
        `Invalid ${where}: expected a ${whole ? 'whole ' : ''}number of ${what} ≥ ${min}${note}, got ${describeValue(value)}.`,
      );
    }
    return value;
  };
const retries = count('retries', 0, true, ' (0 disables retries)');
const duration = (min: number) => count('milliseconds', min, false, ' (or Infinity)');

const signal: Rule<AbortSignal | undefined> = (value, where) => {
  const given = value as Partial<AbortSignal> | null | undefined;
  if (
    given !== undefined &&
    (typeof given?.throwIfAborted !== 'function' || typeof given.addEventListener !== 'function')
  ) {
    fail(
      `Invalid ${where}: expected an AbortSignal (from an AbortController, or AbortSignal.timeout(ms)), got ${describeValue(value)}; nothing was sent.`,
    );
  }
  return given as AbortSignal | undefined;
};

/** `true` or `false`; `fallback` when not given. */
const flag =
  (fallback: boolean): Rule<boolean> =>
  (value, where) => {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean')
      fail(`Invalid ${where}: expected true or false, got ${describeValue(value)}.`);
    return value;
  };

const fn = <F>(value: unknown, where: string): F | undefined => {
  if (value !== undefined && typeof value !== 'function') {
    fail(`Invalid ${where}: expected a function, got ${describeValue(value)}.`);
  }
  return value as F | undefined;
};

/** Checked where it is used (the key, the base address). */
const asGiven =
  <T>(): Rule<T | undefined> =>
  (value) =>
    value as T | undefined;

// Headers of the connection, which fetch refuses or sets itself.
const CONNECTION_HEADER =
  /^(?:connection|content-length|expect|host|keep-alive|proxy-connection|te|trailer|transfer-encoding|upgrade)$/i;

/** Why a header cannot be given (the key's, or the connection's), or `undefined`. */
export function reservedHeader(name: string): string | undefined {
  if (/^authorization$/i.test(name)) return 'Authorization is set from apiKey';
  if (CONNECTION_HEADER.test(name)) {
    return `${JSON.stringify(name.toLowerCase())} is set by the HTTP client for each connection`;
  }
  return undefined;
}

/** Extra headers: an object or a `Headers`, valid, not `Authorization`; an `undefined` value left out. */
const headers: Rule<Headers | undefined> = (value, where) => {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    (Symbol.iterator in value && !(value instanceof Headers))
  ) {
    const what = value instanceof Map ? 'a Map' : Array.isArray(value) ? 'an array' : undefined;
    fail(
      `Invalid ${where}: expected an object of header names and values, got ${what ?? describeValue(value)}${what ? ': pass Object.fromEntries(it)' : ''}.`,
    );
  }
  const checked = new Headers();
  const entries = value instanceof Headers ? [...value] : Object.entries(value);
  for (const [name, item] of entries) {
    if (item === undefined) continue;
    const reserved = reservedHeader(name);
    if (reserved) fail(`Invalid ${where}: ${reserved}, and cannot be given.`);
    if (!['string', 'number', 'boolean'].includes(typeof item)) {
      fail(
        `Invalid ${where}: the value of ${JSON.stringify(name)} must be a string, got ${describeValue(item)}.`,
      );
    }
    try {
      checked.set(name, String(item));
    } catch (cause) {
      throw new AnimalStoreError(
        `Invalid ${where}: header ${JSON.stringify(name)} is not valid (names must be tokens; values must not hold line breaks or characters beyond Latin-1: encode them).`,
        { cause },
      );
    }
  }
  return checked;
};

const HOOK_NAMES = ['beforeRequest', 'afterResponse', 'beforeRetry', 'onError'] as const;

/** Each hook a function; a frozen copy, so later changes to the caller's object change nothing. */
const hooks: Rule<Hooks> = (value, where) => {
  if (value !== undefined && (typeof value !== 'object' || value === null)) {
    fail(`Invalid ${where}: expected an object of functions, got ${describeValue(value)}.`);
  }
  const given = (value ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if (!(HOOK_NAMES as readonly string[]).includes(name)) {
      fail(
        `Invalid ${where}.${name}: there is no such hook; the hooks are ${HOOK_NAMES.join(', ')}.`,
      );
    }
  }
  const checked: Hooks = {};
  for (const name of HOOK_NAMES) {
    const hook = fn(given[name], `${where}.${name}`);
    if (hook !== undefined) checked[name] = hook as never;
  }
  return Object.freeze(checked);
};

/** Read once, as a copy; the provider is checked when the tracing code loads. */
const tracing: Rule<TracingOptions | false | undefined> = (value, where) => {
  if (value === undefined || value === false) return value;
  if (typeof value !== 'object' || value === null) {
    fail(
      `Invalid ${where}: expected false or an object such as { httpSpans: true }, got ${describeValue(value)}.`,
    );
  }
  const { tracerProvider, httpSpans } = value as TracingOptions;
  return { tracerProvider, httpSpans: flag(false)(httpSpans, `${where}.httpSpans`) };
};

/** An object with the methods `names`, or a failure that says `what` is expected and which are missing. */
function methods<T>(value: unknown, names: readonly string[], what: (missing: string) => string) {
  const missing = names.filter(
    (name) => typeof (value as Record<string, unknown> | null)?.[name] !== 'function',
  );
  if (missing.length > 0) {
    const last = missing.pop();
    fail(what(missing.length ? `${missing.join(', ')} and ${last} are` : `${last} is`));
  }
  return value as T;
}

const logger: Rule<Logger> = (value, where) =>
  value === undefined
    ? console
    : methods(
        value,
        ['error', 'warn', 'info', 'debug'],
        (level) =>
          `Invalid ${where}: expected an object with error, warn, info and debug methods (console fits); ${level} missing.`,
      );

const logLevel: Rule<LogLevel> = (value, where) => {
  if (value === undefined) return 'warn';
  if (!['off', 'error', 'warn', 'info', 'debug'].includes(value as string)) {
    fail(
      `Invalid ${where} ${JSON.stringify(value)}: use 'off', 'error', 'warn', 'info' or 'debug'.`,
    );
  }
  return value as LogLevel;
};

const quotaStore: Rule<QuotaStore | undefined> = (value, where) =>
  value === undefined
    ? undefined
    : methods(
        value,
        ['admit', 'observe', 'release'],
        () =>
          `Invalid ${where}: expected an object with admit, observe and release methods (a QuotaStore).`,
      );

/** Every client option: its rule, which gives its default. */
const CLIENT_OPTIONS = {
  apiKey: asGiven<string>(),
  environment: asGiven<Environment>(),
  baseUrl: asGiven<string>(),
  maxRetries: (value, where) => retries(value, where) ?? 2,
  maxRetryDelayMs: (value, where) => duration(0)(value, where) ?? 60_000,
  timeoutMs: (value, where) => duration(1)(value, where) ?? 30_000,
  maxResponseBytes: (value, where) => count('bytes', 1, true)(value, where) ?? 1_048_576,

  fetch: (value, where) => fn<ClientOptions['fetch']>(value, where),
  headers: (value, where) => headers(value, where) ?? new Headers(),
  onRetry: (value, where) => fn<ClientOptions['onRetry']>(value, where),
  hooks,
  tracing,
  quotaStore,
  logLevel,
  logger,
  deprecationWarnings: flag(true),
  allowInsecureHttp: flag(false),
  dangerouslyAllowBrowser: flag(false),
} satisfies { [K in keyof Required<ClientOptions>]: Rule<unknown> };

const TRACING_OPTIONS = { tracerProvider: 1, httpSpans: 1 } satisfies Record<
  keyof TracingOptions,
  1
>;

/** Every option of a call; `undefined` where the client's setting holds. */
const CALL_OPTIONS = {
  signal,
  timeoutMs: duration(1),
  maxRetries: retries,
  headers: (value, where) => {
    const checked = headers(value, where);
    return checked && Object.fromEntries(checked);
  },
} satisfies { [K in keyof Required<RequestOptions>]: Rule<unknown> };

// Names only a call takes.
const CALL_OPTIONS_ONLY = { signal: 1 };

type Settings<T> = { readonly [K in keyof T]: T[K] extends Rule<infer R> ? R : never };

export type ClientSettings = Settings<typeof CLIENT_OPTIONS>;
type CallSettings = Settings<typeof CALL_OPTIONS>;

/** Edit distance of two names, ignoring case. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let row = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost);
    }
    row = next;
  }
  return row[y.length]!;
}

/** The known name `name` is likely meant for: the nearest, or one holding it whole or held in it. */
function nearest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let least = Number.POSITIVE_INFINITY;
  for (const candidate of names) {
    const [a, b] = [name.toLowerCase(), candidate.toLowerCase()];
    const holds = Math.min(a.length, b.length) >= 3 && (b.includes(a) || a.includes(b));
    const d = holds ? Math.abs(b.length - a.length) : distance(name, candidate);
    const near = d <= Math.ceil(Math.max(name.length, candidate.length) / 3);
    if ((holds || near) && d < least) {
      best = candidate;
      least = d;
    }
  }
  return best;
}

/** The names in `options` none of `known`, each with the name likely meant, or where it belongs. */
function unknownNames(
  options: object,
  known: object,
  prefix = '',
  elsewhere?: { names: object; where: string },
): string[] {
  const names = Object.keys(known);
  const unknown = Object.keys(options).filter((name) => !Object.hasOwn(known, name));
  // Quoted only when it looks like a name (never a pasted key): the rest is counted.
  const shown = unknown.filter((name) => /^[A-Za-z_$][\w$]{0,39}$/.test(name)).slice(0, 5);
  const lines = shown.map((name) => {
    if (elsewhere && Object.hasOwn(elsewhere.names, name)) {
      return `"${prefix}${name}" (${elsewhere.where})`;
    }
    const near = nearest(name, names);
    return `"${prefix}${name}"${near ? ` (did you mean ${prefix}${near}?)` : ''}`;
  });
  const more = unknown.length - shown.length;
  if (more > 0) lines.push(`${more} more${prefix ? ` in ${prefix.slice(0, -1)}` : ''}`);
  return lines;
}

/** Checks `options` against `table`, in its order; and the names it does not know. */
function read<T extends Record<string, Rule<unknown>>>(
  table: T,
  options: object,
  where: (name: string) => string,
  elsewhere: { names: object; where: string },
): { settings: Settings<T>; unknown: string[] } {
  const settings: Record<string, unknown> = {};
  const given = options as Record<string, unknown>;
  for (const name in table) {
    const at = where(name);
    try {
      settings[name] = table[name]!(given[name], at);
    } catch (cause) {
      if (cause instanceof AnimalStoreError) throw cause;
      throw new AnimalStoreError(`Invalid ${at}: reading it threw ${describeThrown(cause)}.`, {
        cause,
      });
    }
  }
  return {
    settings: settings as Settings<T>,
    unknown: unknownNames(options, table, '', elsewhere),
  };
}

const NOT_OF_THE_CLIENT = {
  names: CALL_OPTIONS_ONLY,
  where: 'an option of each call, not of the client',
};

/** The client's unknown option names, each with the one likely meant (`"apikey" (did you mean apiKey?)`). */
export const unknownClientOptions = (options: object) =>
  unknownNames(options, CLIENT_OPTIONS, '', NOT_OF_THE_CLIENT);

/** Checks that the client's options are an object, before anything is read from them. */
export function checkClientOptions(options: unknown): asserts options is ClientOptions {
  if (typeof options !== 'object' || options === null) {
    // Never quoted: a string here is likely the key itself.
    fail(
      `Invalid PetsClient options: expected an object such as { apiKey }, got ${options === null ? 'null' : `a value of type ${typeof options}`}.`,
    );
  }
}

export function readClientOptions(options: ClientOptions) {
  const read_ = read(CLIENT_OPTIONS, options, (name) => name, NOT_OF_THE_CLIENT);
  const { tracing: given } = options;
  if (typeof given === 'object' && given !== null) {
    read_.unknown.push(...unknownNames(given, TRACING_OPTIONS, 'tracing.'));
  }
  return read_;
}

/** A call's options, checked (`undefined` where the client's setting holds), and unknown names. */
export function readCallOptions(
  options: RequestOptions,
  operation: string,
): { settings: CallSettings; unknown: readonly string[] } {
  try {
    if (typeof options !== 'object' || options === null) {
      fail(
        `Invalid ${operation} options: expected an object such as { timeoutMs: 5000 }, got ${describeValue(options)}; nothing was sent.`,
      );
    }
    return read(CALL_OPTIONS, options, (name) => `${operation} option ${name}`, {
      names: CLIENT_OPTIONS,
      where: 'an option of the client, not of a call',
    });
  } catch (thrown) {
    // Bad input of the call, as its arguments' would be; the issue's path is empty: not its input's.
    const { message, cause } =
      thrown instanceof AnimalStoreError
        ? thrown
        : {
            message: `Invalid ${operation} options: reading them threw ${describeThrown(thrown)}.`,
            cause: thrown,
          };
    const issues = [{ path: [], message, code: 'invalid_option' }];
    throw new RequestValidationError(message, issues, cause === undefined ? {} : { cause });
  }
}

function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    /^127(?:\.\d{1,3}){3}$/.test(hostname) ||
    hostname === '[::1]' ||
    /^\[::ffff:7f[\da-f]{2}:[\da-f]{1,4}\]$/.test(hostname) // ::ffff:127.x.y.z, as URL writes it
  );
}

/** Resolves `baseUrl` or `environment` to a checked base address without a trailing slash. */
export function resolveBaseUrl(settings: ClientSettings): string {
  const { baseUrl, environment } = settings;
  // Checked even beside a baseUrl, which overrides it: a misspelt one is a misconfiguration.
  if (environment !== undefined && !Object.hasOwn(environments, environment)) {
    fail(`Invalid environment ${JSON.stringify(environment)}: use 'production' or 'staging'.`);
  }
  if (baseUrl !== undefined) return checkBaseUrl(baseUrl, 'baseUrl', settings);
  if (environment !== undefined) return environments[environment];
  const fromEnv = readEnv(BASE_URL_ENV);
  return fromEnv === undefined
    ? environments.production
    : checkBaseUrl(fromEnv, BASE_URL_ENV, settings);
}

function checkBaseUrl(baseUrl: string, where: string, settings: ClientSettings): string {
  // `localhost:4010/v1` parses with the protocol `localhost:`, `127.0.0.1:4010/v1` not at all.
  const host = /^([\w.-]+)(?::\d+)?(?:\/|$)/.exec(baseUrl)?.[1];
  const meant = host ? ` (did you mean ${isLoopback(host) ? 'http' : 'https'}://${baseUrl}?)` : '';
  if (!baseUrl.trim()) {
    fail(
      `Invalid ${where} ${JSON.stringify(baseUrl)}: it is empty (from a variable set to ""?). Pass the address your account was given, such as 'https://api.example.com/v1', or leave ${where} out.`,
    );
  }
  let url: URL;
  try {
    const location = (globalThis as { location?: { href?: string } }).location?.href;
    url = new URL(baseUrl, location);
  } catch (cause) {
    throw new AnimalStoreError(
      `Invalid ${where} ${JSON.stringify(baseUrl)}: expected an absolute URL such as 'https://api.example.com/v1'${meant}.`,
      { cause },
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail(`Invalid ${where}: the protocol must be https: or http:, got ${url.protocol}${meant}.`);
  }
  if (url.username || url.password) {
    fail(`Invalid ${where}: it must not carry credentials; pass the key as apiKey.`);
  }
  // `…/v1?` and `…/v1#` have an empty search and hash, but keep the mark.
  if (url.search || url.hash || /[?#]/.test(url.href)) {
    fail(`Invalid ${where}: it must not carry a query or a fragment.`);
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !settings.allowInsecureHttp) {
    fail(
      `Refusing to send the API key in clear text to ${url.host}: use https:, ` +
        'or set allowInsecureHttp: true if this network is trusted.',
    );
  }
  return url.href.replace(/\/+$/, '');
}
