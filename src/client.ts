import { resolveApiKey } from './auth.js';
import { warnDeprecatedOnce } from './deprecation.js';
import { AnimalStoreError } from './errors/AnimalStoreError.js';
import { LevelLogger } from './logger.js';
import {
  type ClientOptions,
  checkDuration,
  checkHeaders,
  checkLogLevel,
  checkMaxRetries,
  DEFAULTS,
  type OperationName,
  type RequestOptions,
  type RetryInfo,
  resolveBaseUrl,
} from './options.js';
import type { RateLimitInfo } from './rate-limit/parse.js';
import { withRetries } from './retry/run.js';
import { type Call, Transport } from './transport.js';
import type { ListPetsParams, NewPet, Pet } from './types.js';
import {
  checkListPetsParams,
  checkNewPet,
  checkPet,
  checkPetId,
  checkPets,
} from './validation/fast.js';
import { validateInput, validateOutput } from './validation/validate.js';

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

function isBrowser(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  return typeof g.window !== 'undefined' && typeof g.document !== 'undefined';
}

let warnedBrowser = false;

function warnBrowserOnce(log: LevelLogger): void {
  if (warnedBrowser) return;
  warnedBrowser = true;
  log.log(
    'warn',
    'PetsClient is running in a browser: every visitor can read the API key in this page. ' +
      'Use a per-user key or call the API through your server; pass dangerouslyAllowBrowser: true to silence this warning.',
  );
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
  readonly #transport: Transport;
  readonly #maxRetries: number;
  readonly #maxRetryDelayMs: number;
  readonly #timeoutMs: number;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;
  readonly #log: LevelLogger;
  readonly #deprecationWarnings: boolean;

  /**
   * @throws {AnimalStoreError} when the API key is missing or malformed, or an option is invalid.
   */
  constructor(options: ClientOptions = {}) {
    const apiKey = resolveApiKey(options.apiKey);
    this.baseUrl = resolveBaseUrl(options);
    this.#maxRetries = checkMaxRetries(options.maxRetries ?? DEFAULTS.maxRetries, 'maxRetries');
    this.#maxRetryDelayMs = checkDuration(
      options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs,
      'maxRetryDelayMs',
      0,
    );
    this.#timeoutMs = checkDuration(options.timeoutMs ?? DEFAULTS.timeoutMs, 'timeoutMs', 1);
    if (options.onRetry !== undefined && typeof options.onRetry !== 'function') {
      throw new AnimalStoreError('Invalid onRetry: expected a function.');
    }
    this.#onRetry = options.onRetry;
    this.#log = new LevelLogger(checkLogLevel(options.logLevel), options.logger ?? console, apiKey);
    this.#deprecationWarnings = options.deprecationWarnings ?? true;
    if (isBrowser() && !options.dangerouslyAllowBrowser) warnBrowserOnce(this.#log);
    if (typeof (options.fetch ?? globalThis.fetch) !== 'function') {
      throw new AnimalStoreError(
        'No fetch available: pass a fetch implementation as the fetch option.',
      );
    }
    this.#transport = new Transport({
      baseUrl: this.baseUrl,
      apiKey,
      fetch: options.fetch,
      headers: checkHeaders(options.headers),
      maxRetryDelayMs: this.#maxRetryDelayMs,
      log: this.#log,
    });
  }

  /** The last `X-RateLimit-*` values the service sent, or `undefined` before any response. */
  get rateLimit(): RateLimitInfo | undefined {
    return this.#transport.rateLimit;
  }

  /**
   * Lists animals, at most `limit` (1..100, default 20), optionally only those with `status`.
   *
   * @example
   * ```ts
   * const available = await client.listPets({ status: 'available', limit: 50 });
   * ```
   * @throws {RequestValidationError} when `limit` or `status` is invalid (nothing is sent).
   */
  async listPets(params: ListPetsParams = {}, options: RequestOptions = {}): Promise<Pet[]> {
    const query = await validateInput(
      checkListPetsParams,
      'ListPetsParams',
      params,
      'listPets parameters',
    );
    const target = `GET ${this.baseUrl}/pets`;
    const body = await this.#send('listPets', 'GET', target, options, (api, signal) =>
      api.GET('/pets', { params: { query }, parseAs: 'text', signal }),
    );
    return validateOutput(checkPets, 'Pets', body.body, 'listPets', body.status);
  }

  /**
   * Adds an animal; resolves to it with the `id` the service assigned.
   * Not retried after a 5xx or a network failure (the animal could be added twice); retried after 429.
   *
   * @example
   * ```ts
   * const pet = await client.createPet({ name: 'Rex', categoryId: 3, status: 'available' });
   * ```
   * @throws {RequestValidationError} when the body is invalid (nothing is sent).
   */
  async createPet(pet: NewPet, options: RequestOptions = {}): Promise<Pet> {
    const body = await validateInput(checkNewPet, 'NewPet', pet, 'createPet body');
    const target = `POST ${this.baseUrl}/pets`;
    const result = await this.#send('createPet', 'POST', target, options, (api, signal) =>
      api.POST('/pets', { body, parseAs: 'text', signal }),
    );
    return validateOutput(checkPet, 'Pet', result.body, 'createPet', result.status);
  }

  /**
   * Fetches one animal by its id.
   *
   * @deprecated The service removes `GET /pets/{petId}` on 2030-12-05. Use
   * `listPets({ status })` instead. Calling it emits a one-time warning
   * (turn off with `deprecationWarnings: false`).
   * @throws {NotFoundError} when no animal has this id.
   * @throws {RequestValidationError} when `petId` is not a safe integer (nothing is sent).
   */
  async getPet(petId: number, options: RequestOptions = {}): Promise<Pet> {
    const id = await validateInput(checkPetId, 'PetId', petId, 'getPet petId');
    if (this.#deprecationWarnings) {
      warnDeprecatedOnce(
        'ANIMAL_STORE_GET_PET_DEPRECATED',
        'PetsClient.getPet (GET /pets/{petId}) is deprecated and will be removed on 2030-12-05; use listPets({ status }) instead.',
      );
    }
    const target = `GET ${this.baseUrl}/pets/${id}`;
    const result = await this.#send('getPet', 'GET', target, options, (api, signal) =>
      api.GET('/pets/{petId}', { params: { path: { petId: id } }, parseAs: 'text', signal }),
    );
    return validateOutput(checkPet, 'Pet', result.body, 'getPet', result.status);
  }

  #send(
    operation: OperationName,
    method: 'GET' | 'POST',
    target: string,
    options: RequestOptions,
    call: Call,
  ): Promise<{ body: unknown; status: number }> {
    const maxRetries =
      options.maxRetries === undefined
        ? this.#maxRetries
        : checkMaxRetries(options.maxRetries, `${operation} option maxRetries`);
    const timeoutMs =
      options.timeoutMs === undefined
        ? this.#timeoutMs
        : checkDuration(options.timeoutMs, `${operation} option timeoutMs`, 1);
    const { signal } = options;
    signal?.throwIfAborted();
    return withRetries(
      {
        operation,
        method,
        maxRetries,
        maxRetryDelayMs: this.#maxRetryDelayMs,
        signal,
        gate: this.#transport.gate,
        log: this.#log,
        onRetry: this.#onRetry,
      },
      () => this.#transport.attempt(target, call, timeoutMs, signal),
    );
  }

  /** A summary without secrets. */
  toJSON(): Record<string, unknown> {
    return {
      baseUrl: this.baseUrl,
      apiKey: '[redacted]',
      maxRetries: this.#maxRetries,
      maxRetryDelayMs: this.#maxRetryDelayMs,
      timeoutMs: this.#timeoutMs,
    };
  }

  /** `PetsClient(<baseUrl>)`, without secrets. */
  toString(): string {
    return `PetsClient(${this.baseUrl})`;
  }

  [INSPECT](): string {
    return `PetsClient ${JSON.stringify(this.toJSON())}`;
  }
}
