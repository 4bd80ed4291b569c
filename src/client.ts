import { bucketName, readEnv, resolveApiKey } from './auth.js';
import { runCall } from './call.js';
import { AnimalStoreError, describeThrown, INSPECT, Redactor } from './errors.js';
import { type RateLimitInfo, type ResponseTiming, serviceClock } from './headers.js';
import type { RetryInfo, TracerProviderLike, WithResponse } from './observe.js';
import { canonical, OPERATIONS } from './operations.js';
import type { ClientOptions, Logger, LogLevel, RequestOptions } from './options.js';
import { defaultQuotaStore, shared } from './quota/MemoryQuotaStore.js';
import { counters, Quota } from './quota/Quota.js';
import {
  type ClientSettings,
  checkClientOptions,
  readClientOptions,
  resolveBaseUrl,
  unknownClientOptions,
} from './settings.js';
import type { Tracing } from './tracing/otel.js';
import { Transport } from './transport.js';
import type { ListPetsParams, NewPet, Pet } from './types.js';

type WarningProcess = {
  emitWarning?: (message: string, options: { type: string; code: string }) => void;
};

// The ESM and CommonJS builds in one process warn once between them.
const warned = shared('deprecations-warned', () => new Set<string>());

/** Whether `key` is new to `seen`, which then keeps it (at most 100): what warns once warns then. */
const first = (seen: Set<string>, key: string) =>
  !seen.has(key) && seen.size < 100 && seen.add(key) !== undefined;

/** Warns once per process and code, through `process.emitWarning` where it exists (`--no-deprecation`). */
function warnDeprecatedOnce(code: string, message: string): void {
  if (!first(warned, code)) return;
  const proc = (globalThis as { process?: WarningProcess }).process;
  if (typeof proc?.emitWarning === 'function') {
    proc.emitWarning(message, { type: 'DeprecationWarning', code });
  } else {
    console.warn(`DeprecationWarning [${code}]: ${message}`);
  }
}

/** Forgets which warnings were shown (tests only). */
export function resetDeprecationWarnings(): void {
  warned.clear();
}

const RANK: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 };

const noop = () => undefined;

/** Calls `fn`: what it throws, or the rejection of a promise it returns, goes to `failed`. */
function guard(fn: () => unknown, failed: (error: unknown) => void): void {
  try {
    const result = fn() as { then?: unknown } | null | undefined;
    if (typeof result?.then === 'function')
      (result as PromiseLike<unknown>).then(undefined, failed);
  } catch (error) {
    failed(error);
  }
}

type Level = Exclude<LogLevel, 'off'>;

/** A leveled logger that prefixes its lines and scrubs `secret` from them. */
interface LevelLogger {
  enabled(level: Level): boolean;
  log(level: Level, message: string): void;
}

function levelLogger(level: LogLevel, sink: Logger, redact: Redactor): LevelLogger {
  const enabled = (at: Level) => RANK[level] >= RANK[at];
  return {
    enabled,
    log(at, message) {
      // A logger that throws, or whose promise rejects, must not break a call.
      if (enabled(at)) guard(() => sink[at](redact.text(`[animal-store] ${message}`)), noop);
    },
  };
}

// Fixed by @opentelemetry/api 1.x: where it registers its global tracer provider.
const OTEL = Symbol.for('opentelemetry.js.api.1');
/** The package's version, which tracers are told (a test holds it to package.json). */
export const VERSION = '0.2.0';

// Each fetch option, numbered (in every copy of the SDK in the process alike).
const fetchIds = shared('fetch-ids', () => new WeakMap<object, number>());

/** What a client gives every call it runs: its settings, transport, quota and logger. */
export class CallContext {
  /** The same for clients that send alike (one fetch, the same headers): a call counts their requests as its own. */
  readonly id: string;
  readonly transport: Transport;
  readonly quota: Quota;
  /** The client's options, checked, without the key. */
  readonly settings: Omit<ClientSettings, 'apiKey'>;
  #tracer: Promise<Tracing> | undefined;
  #tracerFor: TracerProviderLike | undefined;
  /** The last rate-limit values this client saw. */
  rateLimit: RateLimitInfo | undefined;
  /** Why this client's last request got no response: the cause of the holds it began. */
  lostCause: unknown;
  readonly clock = serviceClock();
  /** In a page, a request refused by CORS fails as one without a response. */
  readonly inBrowser = isBrowser();

  constructor(
    settings: ClientSettings,
    readonly baseUrl: string,
    apiKey: string,
    /** Takes the key out of everything the SDK shows. */
    readonly redact: Redactor,
    readonly log: LevelLogger,
  ) {
    const { apiKey: _, ...rest } = settings;
    this.settings = rest;
    const { fetch, headers } = settings;
    this.transport = new Transport({ baseUrl, apiKey, fetch, headers });
    const fetchId = fetch ? (fetchIds.get(fetch) ?? ++counters.clients) : 0;
    if (fetch) fetchIds.set(fetch, fetchId);
    this.id = `${fetchId} ${canonical(Object.fromEntries(headers))}`;
    this.quota = new Quota(
      settings.quotaStore ?? defaultQuotaStore(),
      bucketName(apiKey, baseUrl),
      (error, doing) =>
        log.log('error', `The quota store failed to ${doing}: ${describeThrown(error)}`),
      redact,
    );
  }

  /** The tracing of a call: the provider passed, else the one registered now; loaded on first use. */
  tracing(): Promise<Tracing> | undefined {
    const options = this.settings.tracing;
    if (options === false) return undefined;
    let provider: TracerProviderLike | undefined;
    try {
      provider =
        options?.tracerProvider ??
        (globalThis as Record<symbol, { trace?: TracerProviderLike } | undefined>)[OTEL]?.trace;
    } catch (error) {
      this.tracingFailed(error);
    }
    if (!provider) {
      if (options) {
        this.warnOnce(
          'tracing was passed, but no OpenTelemetry tracer provider is registered: nothing is traced.',
        );
      }
      return undefined;
    }
    if (provider !== this.#tracerFor) {
      this.#tracerFor = provider;
      const httpSpans = options?.httpSpans === true;
      this.#tracer = import('./tracing/otel.js').then((m) =>
        m.createTracing(provider, httpSpans, this.baseUrl, VERSION, this.tracingFailed),
      );
    }
    return this.#tracer;
  }

  readonly tracingFailed = (error: unknown): void =>
    this.log.log('error', `Tracing failed and was skipped: ${describeThrown(error)}`);

  /** Calls a hook, never letting it break the call: a throw or a rejection is logged and ignored. */
  run<A>(name: string, hook: ((argument: A) => unknown) | undefined, argument: A): void {
    if (hook) {
      guard(
        () => hook(argument),
        (error) => this.log.log('error', `${name} threw and was ignored: ${describeThrown(error)}`),
      );
    }
  }

  /** Takes note of what a response said about time. */
  saw(timing: ResponseTiming): void {
    if (timing.rateLimit) this.rateLimit = timing.rateLimit;
    if (timing.reading) this.warnOnce(`${this.redact.text(timing.reading)}.`, 'reading');
    if (timing.unusable) {
      this.warnOnce(
        `The rate-limit headers could not be used: ${this.redact.text(timing.unusable).slice(0, 300)}. The client learns the budget instead, from the 429s it meets.`,
        'unusable',
      );
    }
    for (const value of timing.ignored) {
      const clean = this.redact.text(value);
      this.log.log('info', `Ignored ${clean.length > 200 ? `${clean.slice(0, 200)}…` : clean}.`);
    }
  }

  readonly #warned = new Set<string>();

  /** Logs `message` at `warn`, the first time only for its `kind` (of a bounded number). */
  warnOnce(message: string, kind = message): void {
    if (first(this.#warned, kind)) this.log.log('warn', message);
  }

  /** Tells `onRetry` and `hooks.beforeRetry` of a wait, never letting them break the call. */
  notify(info: RetryInfo): void {
    this.run('onRetry', this.settings.onRetry, info);
    this.run('hooks.beforeRetry', this.settings.hooks.beforeRetry, info);
  }
}

function isBrowser(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  return typeof g.window !== 'undefined' && typeof g.document !== 'undefined';
}

/** What each logger was warned of as clients were made (once in a page): a client made per request warns once. */
const told = new WeakMap<object, Set<string>>();
const page = new Set<string>();
function warnOncePer(sink: Logger, log: LevelLogger, message: string, seen?: Set<string>): void {
  const said = seen ?? told.get(sink) ?? new Set<string>();
  if (!seen) told.set(sink, said);
  if (first(said, message)) log.log('warn', message);
}

/**
 * Client of the Animal Store API.
 *
 * @example
 * ```ts
 * const client = new PetsClient({ apiKey: process.env.ANIMAL_STORE_API_KEY });
 * const pets = await client.listPets({ status: 'available', limit: 50 });
 * ```
 */
export class PetsClient {
  /** Base address every request goes to, ending in `/v1` for the built-in environments. */
  readonly baseUrl: string;
  readonly #context: CallContext;
  readonly #deprecationWarnings: boolean;

  /**
   * @throws {@link AnimalStoreError} when the API key is missing or malformed, or an option is invalid.
   */
  constructor(options: ClientOptions = {}) {
    let apiKey = '';
    try {
      checkClientOptions(options);
      apiKey = resolveApiKey(options.apiKey, () => unknownClientOptions(options));
      const redact = new Redactor(apiKey);
      const { settings, unknown } = readClientOptions(options);
      this.baseUrl = resolveBaseUrl(settings);
      const where = redact.holds(this.baseUrl)
        ? 'baseUrl'
        : [...settings.headers].some((pair) => pair.some((text) => redact.holds(text))) &&
          'headers';
      if (where) {
        throw new AnimalStoreError(
          `Invalid ${where}: it holds the API key. Pass the key as apiKey (or ANIMAL_STORE_API_KEY) only, sent in Authorization alone.`,
        );
      }
      const log = levelLogger(settings.logLevel, settings.logger, redact);

      const warn = (message: string) => warnOncePer(settings.logger, log, message);
      if (unknown.length > 0)
        warn(`Unknown PetsClient options were ignored: ${unknown.join(', ')}.`);
      this.#deprecationWarnings = settings.deprecationWarnings;
      if (isBrowser() && !settings.dangerouslyAllowBrowser) {
        const browser =
          'PetsClient is running in a browser: every visitor can read the API key in this page. Use a per-user key or call the API through your server; pass dangerouslyAllowBrowser: true to silence this warning.';
        warnOncePer(settings.logger, log, browser, page);
      }
      if (/\/pets$/i.test(this.baseUrl)) {
        warn(
          `baseUrl ${this.baseUrl} ends in /pets, which each call adds: pass the address up to /v1.`,
        );
      }
      if (typeof (settings.fetch ?? globalThis.fetch) !== 'function') {
        throw new AnimalStoreError(
          'No fetch available: pass a fetch implementation as the fetch option.',
        );
      }
      this.#context = new CallContext(settings, this.baseUrl, apiKey, redact, log);
    } catch (error) {
      // Before the key was read, the one in the environment is the one to keep out.
      const redact = new Redactor(apiKey || readEnv('ANIMAL_STORE_API_KEY') || '');
      if (error instanceof AnimalStoreError) throw redact.thrown(error);
      // A getter or a proxy of the caller's that throws, deep in the options.
      throw new AnimalStoreError(
        redact.text(`Invalid PetsClient options: reading them threw ${describeThrown(error)}.`),
        { cause: redact.error(error) },
      );
    }
    // Bound, so that `const { listPets } = client` works as a call on it does.
    this.listPets = this.listPets.bind(this);
    this.createPet = this.createPet.bind(this);
    this.getPet = this.getPet.bind(this);
    const context = this.#context;
    this.withResponse = Object.freeze({
      listPets: (params?: ListPetsParams, options?: RequestOptions) =>
        runCall(context, OPERATIONS.listPets, params === undefined ? {} : params, options, true),
      createPet: (pet: NewPet, options?: RequestOptions) =>
        runCall(context, OPERATIONS.createPet, pet, options, true),
      getPet: (petId: number, options?: RequestOptions) => {
        this.#warnGetPet();
        return runCall(context, OPERATIONS.getPet, petId, options, true);
      },
    });
  }

  /**
   * The same methods, resolving to the validated data together with the
   * response it came from: `{ data, response: { status, headers, rateLimit, attempts } }`.
   * Calls made through the plain methods pay nothing for it.
   *
   * @example
   * ```ts
   * const { data: pets, response } = await client.withResponse.listPets({ limit: 10 });
   * console.log(response.status, response.headers.get('x-ratelimit-remaining'), pets.length);
   * ```
   */
  readonly withResponse: {
    /** {@link PetsClient.listPets}, with the response the list came from. */
    listPets(params?: ListPetsParams, options?: RequestOptions): Promise<WithResponse<Pet[]>>;
    /** {@link PetsClient.createPet}, with the response the animal came from. */
    createPet(pet: NewPet, options?: RequestOptions): Promise<WithResponse<Pet>>;
    /**
     * @deprecated The service removes `GET /pets/{petId}` on 2030-12-05. Its
     * replacement, `listPets({ status })`, filters by status and cannot look
     * up an id: find the id in a list (at most 100 animals per call).
     */
    getPet(petId: number, options?: RequestOptions): Promise<WithResponse<Pet>>;
  };

  /** The last rate-limit values the service sent (`X-RateLimit-*`, or the IETF `RateLimit` fields), or `undefined` before any response. */
  get rateLimit(): RateLimitInfo | undefined {
    return this.#context.rateLimit;
  }

  /**
   * Lists animals, at most `limit` (1..100, default 20), optionally only those with `status`.
   *
   * @example
   * ```ts
   * const available = await client.listPets({ status: 'available', limit: 50 });
   * ```
   * @throws {@link RequestValidationError} when `limit` or `status` is invalid (nothing is sent).
   */
  listPets(params?: ListPetsParams, options?: RequestOptions): Promise<Pet[]> {
    return runCall(
      this.#context,
      OPERATIONS.listPets,
      params === undefined ? {} : params,
      options,
      false,
    );
  }

  /**
   * Adds an animal; resolves to it with the `id` the service assigned.
   * Not retried after a 5xx or a network failure (the animal could be added twice); retried after 429.
   *
   * @example
   * ```ts
   * const pet = await client.createPet({ name: 'Rex', categoryId: 3, status: 'available' });
   * ```
   * @throws {@link RequestValidationError} when the body is invalid (nothing is sent).
   */
  createPet(pet: NewPet, options?: RequestOptions): Promise<Pet> {
    return runCall(this.#context, OPERATIONS.createPet, pet, options, false);
  }

  /**
   * Fetches one animal by its id.
   *
   * @deprecated The service removes `GET /pets/{petId}` on 2030-12-05. The
   * replacement it names, `listPets({ status })`, filters by status and
   * cannot look up an id: find the id in a list (at most 100 animals per
   * call; the service offers no paging), or keep what `createPet` answered.
   * Calling it emits a one-time warning (turn off with
   * `deprecationWarnings: false`).
   * @throws {@link NotFoundError} when no animal has this id.
   * @throws {@link RequestValidationError} when `petId` is not a safe integer (nothing is sent).
   */
  getPet(petId: number, options?: RequestOptions): Promise<Pet> {
    this.#warnGetPet();
    return runCall(this.#context, OPERATIONS.getPet, petId, options, false);
  }

  #warnGetPet(): void {
    if (this.#deprecationWarnings) {
      warnDeprecatedOnce(
        'ANIMAL_STORE_GET_PET_DEPRECATED',
        'PetsClient.getPet (GET /pets/{petId}) is deprecated and will be removed on 2030-12-05. The service names listPets({ status }) as its replacement, which filters by status and has no lookup by id: find the id in a list (at most 100 animals per call).',
      );
    }
  }

  /** A summary without secrets. */
  toJSON(): Record<string, unknown> {
    return {
      baseUrl: this.baseUrl,
      apiKey: '[redacted]',
      maxRetries: this.#context.settings.maxRetries,
      maxRetryDelayMs: this.#context.settings.maxRetryDelayMs,
      timeoutMs: this.#context.settings.timeoutMs,
    };
  }

  /** `PetsClient(<baseUrl>)`, without secrets. */
  toString(): string {
    return `PetsClient(${this.baseUrl})`;
  }

  /** What `util.inspect` and `console.log` show: never the key. @internal */
  [INSPECT](): string {
    return `PetsClient ${JSON.stringify(this.toJSON())}`;
  }
}
