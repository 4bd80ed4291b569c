// Everything the SDK throws, and the one factory that maps an HTTP status to
// its class. Each class sets `name` to a literal (bundlers rename classes)
// and a `brand`, so that `instanceof` holds across the ESM and CJS builds.
import type { RateLimitInfo } from './headers.js';
import { type Redaction, redaction } from './redact.js';
import type { ErrorBody } from './types.js';

const BRANDS = Symbol.for('@animal-store/sdk/error-brands');

type Branded = { [BRANDS]?: unknown };
type ErrorClass = { brand?: string } | null;

function brandsOf(target: ErrorClass): string[] {
  const brands: string[] = [];
  for (let c = target; c && typeof c.brand === 'string'; c = Object.getPrototypeOf(c)) {
    brands.push(c.brand);
  }
  return brands;
}

/**
 * Base class of everything the SDK throws (except a caller's own abort, which
 * rejects with the signal's reason).
 *
 * `instanceof` works across the ESM and CommonJS builds, even when both are
 * loaded in one process.
 *
 * @example
 * ```ts
 * try { await client.listPets(); }
 * catch (error) { if (error instanceof AnimalStoreError) console.error(error.message); }
 * ```
 */
export class AnimalStoreError extends Error {
  /** Stable identity used by `instanceof` across builds; never renamed by bundlers. */
  static readonly brand: string = 'AnimalStoreError';
  override readonly name: string = 'AnimalStoreError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    Object.defineProperty(this, BRANDS, { value: brandsOf(new.target as ErrorClass) });
  }

  /** What `JSON.stringify(error)` gives: `name`, `message`, every field (`headers` as an object), `cause` as a string. */
  toJSON(): Record<string, unknown> {
    const json: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      json[key] = value instanceof Headers ? Object.fromEntries(value) : value;
    }
    const { cause } = this;
    if (cause !== undefined) {
      try {
        json.cause =
          cause instanceof Error
            ? `${cause.name}: ${cause.message}`
            : typeof cause === 'object' || typeof cause === 'function'
              ? Object.prototype.toString.call(cause)
              : String(cause);
      } catch {
        json.cause = Object.prototype.toString.call(cause);
      }
    }
    return json;
  }

  /** `instanceof` that also knows this class's instances from the other build. @internal */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const brands = (value as Branded | null)?.[BRANDS];
    return Array.isArray(brands) && brands.includes(this.brand);
  }
}

/** One problem found by validation: where (`path`) and what (`message`). */
export interface ValidationIssue {
  /** Path to the offending value, e.g. `['limit']` or `[3, 'id']`. */
  readonly path: readonly PropertyKey[];
  /** What is wrong, in words. */
  readonly message: string;
  /**
   * Zod's issue code, e.g. `too_big` or `invalid_type`; or `invalid_json` (a 2xx body
   * that is not JSON) or `validator_unavailable` (the validator could not be loaded).
   */
  readonly code: string;
}

/** What every {@link ApiError} carries about the response that caused it: see its fields. */
export interface ApiErrorDetails {
  status: number;
  code: string;
  headers: Headers;
  rateLimit?: RateLimitInfo | undefined;
  body?: ErrorBody | undefined;
  rawBody?: string | undefined;
  cause?: unknown;
}

/**
 * The service answered with a non-2xx status. Subclasses name the status:
 * {@link BadRequestError} (400), {@link AuthenticationError} (401),
 * {@link NotFoundError} (404), {@link RateLimitError} (429) and
 * {@link ServerError} (5xx); a status the interface does not list (a 3xx,
 * 403, 409, 422…) is an `ApiError` itself, with that `status`.
 */
export class ApiError extends AnimalStoreError {
  static override readonly brand: string = 'ApiError';
  override readonly name: string = 'ApiError';
  /** HTTP status of the response. */
  readonly status: number;
  /** Machine-readable code from the Error body, or `http_<status>` as a fallback. */
  readonly code: string;
  /** Response headers. */
  readonly headers: Headers;
  /** The rate-limit values of this response (`X-RateLimit-*`, or the IETF `RateLimit` fields), when present. */
  declare readonly rateLimit?: RateLimitInfo;
  /**
   * The body when it was the spec's `Error` JSON (unknown fields dropped); `undefined` when it
   * was something else (an HTML page, other JSON, nothing), or the request was never sent.
   */
  readonly body: ErrorBody | undefined;
  /**
   * The body as text, whatever its shape (JSON re-serialised once the key is redacted);
   * `''` when it was empty; `undefined` when it could not be read, or the request was never sent.
   */
  readonly rawBody: string | undefined;

  constructor(message: string, details: ApiErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.code = details.code;
    this.headers = details.headers;
    if (details.rateLimit) this.rateLimit = details.rateLimit;
    this.body = details.body;
    this.rawBody = details.rawBody;
  }
}

/** The service answered 400: the body is missing required fields or holds invalid values. */
export class BadRequestError extends ApiError {
  static override readonly brand: string = 'BadRequestError';
  override readonly name: string = 'BadRequestError';
}

/** The service answered 401: the API key is missing or invalid. */
export class AuthenticationError extends ApiError {
  static override readonly brand: string = 'AuthenticationError';
  override readonly name: string = 'AuthenticationError';
}

/** The service answered 404: the animal could not be found. */
export class NotFoundError extends ApiError {
  static override readonly brand: string = 'NotFoundError';
  override readonly name: string = 'NotFoundError';
}

/**
 * The service answered 429 and retries are spent, or the wait it demanded is
 * longer than `maxRetryDelayMs` (then the SDK fails at once instead of waiting).
 */
export class RateLimitError extends ApiError {
  static override readonly brand: string = 'RateLimitError';
  override readonly name: string = 'RateLimitError';
  /** How long the service asked to wait, when it said (`Retry-After` or `X-RateLimit-Reset`). */
  declare readonly retryAfterMs?: number;

  constructor(message: string, details: ApiErrorDetails & { retryAfterMs?: number | undefined }) {
    super(message, details);
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }
}

/** The service (or a proxy on the way) answered 5xx. */
export class ServerError extends ApiError {
  static override readonly brand: string = 'ServerError';
  override readonly name: string = 'ServerError';
}

/** The request never got a response (DNS, refused connection, reset socket…). The original failure is in `cause`. */
export class ConnectionError extends AnimalStoreError {
  static override readonly brand: string = 'ConnectionError';
  override readonly name: string = 'ConnectionError';
}

/** An attempt, reading the body included, ran past `timeoutMs`. */
export class TimeoutError extends ConnectionError {
  static override readonly brand: string = 'TimeoutError';
  override readonly name: string = 'TimeoutError';
}

/** The input to a method is invalid; nothing was sent. `issues` says what to fix. */
export class RequestValidationError extends AnimalStoreError {
  static override readonly brand: string = 'RequestValidationError';
  override readonly name: string = 'RequestValidationError';
  /** Every problem found, with its path (the first 100, where there are more). */
  readonly issues: readonly ValidationIssue[];

  constructor(message: string, issues: readonly ValidationIssue[], options?: { cause?: unknown }) {
    super(message, options);
    this.issues = issues;
  }
}

/** A 2xx response whose body does not match the spec. Nothing wrong is returned to you. */
export class ResponseValidationError extends AnimalStoreError {
  static override readonly brand: string = 'ResponseValidationError';
  override readonly name: string = 'ResponseValidationError';
  /** Every mismatch found, with its path in the body (the first 100, where there are more). */
  readonly issues: readonly ValidationIssue[];
  /** HTTP status of the response. */
  readonly status: number;

  constructor(
    message: string,
    details: { issues: readonly ValidationIssue[]; status: number; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.issues = details.issues;
    this.status = details.status;
  }
}

/** What is known about a non-2xx response when its error is built. */
interface FailedResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly body: ErrorBody | undefined;
  readonly text?: string | undefined;
  readonly rawBody?: string | undefined;
  readonly unread?: string | undefined; // why the body was not read, when too large to
  readonly method: 'GET' | 'POST';
  readonly rateLimit: RateLimitInfo | undefined;
  readonly request: string;
  /** For a 429: the key's wait, what was asked, whether nothing was said, whether too long; retries spent. */
  readonly retryAfterMs?: number | undefined;
  readonly askedMs?: number | undefined;
  readonly guessed?: boolean;
  readonly tooLongToWait?: boolean;
  readonly maxRetryDelayMs?: number;
  readonly retriesSpent?: number | undefined;
}

const clip = (text: string, most: number) =>
  text.length > most ? `${text.slice(0, most)}…` : text;

/** Said of a POST that was not retried, since it may have been carried out: the animal added. */
export const POSSIBLY_ACTED =
  ' The service may have acted on the request: check before sending it again.';

function describeBody(response: FailedResponse): string {
  const type = response.headers.get('content-type') ?? 'no content type';
  const { text, unread } = response;
  if (text === undefined)
    return `a body that could not be read (${type})${unread ? `: ${unread}` : ''}`;
  if (text === '') return `an empty body (${type})`;
  const excerpt = clip(text, 120);
  return `a body that is not the service's Error JSON (${type}): ${JSON.stringify(excerpt)}`;
}

const spentAdvice = (spent: number | undefined, lead: string) =>
  spent === undefined
    ? ''
    : `${lead} call's retries (maxRetries: ${spent}) were spent, so it was not retried. Raise maxRetries, or try again later.`;

/** For a 5xx: why a GET was not retried (a POST never is: the animal may have been added). */
function serverAdvice(response: FailedResponse): string {
  // nginx's limit_req, for one, refuses with a page of its own and 503 unless told otherwise.
  const proxy =
    response.status === 503 && !response.body
      ? " A 503 page may be a rate limiter's on the way: have it answer 429 (nginx: limit_req_status 429)."
      : '';
  if (response.method === 'POST') return POSSIBLY_ACTED + proxy;
  if (response.retriesSpent !== undefined || !response.tooLongToWait)
    return spentAdvice(response.retriesSpent, ' The') + proxy;
  return rateLimitAdvice({ ...response, retryAfterMs: response.askedMs }) + proxy;
}

function rateLimitAdvice(response: FailedResponse): string {
  const wait = response.retryAfterMs;
  const tried = spentAdvice(response.retriesSpent, '; the') || '.';
  const raise = ' Raise maxRetryDelayMs to wait that long, or try again later.';
  if (response.guessed && response.tooLongToWait) {
    return ` After 429s in a row, the back-off (${wait} ms) is longer than maxRetryDelayMs (${response.maxRetryDelayMs} ms), so the client did not wait.${raise}`;
  }
  if (wait === undefined) {
    return response.tooLongToWait
      ? ' The service asks to wait more than a day, so the client did not wait; the key cools down for a minute.'
      : ` The response said nothing usable about when to retry${tried}`;
  }
  const { askedMs } = response;
  const asks =
    askedMs !== undefined && askedMs < wait
      ? `The service asks to wait ${askedMs} ms; after 429s in a row the key waits ${wait} ms`
      : `The service asks to wait ${wait} ms`;
  if (response.tooLongToWait) {
    const until = new Date(Date.now() + wait).toISOString();
    return ` ${asks} (until ${until}), longer than maxRetryDelayMs (${response.maxRetryDelayMs} ms), so the client did not wait.${raise}`;
  }
  return ` ${asks}${tried}`;
}

/** The {@link ApiError} of an HTTP status, whatever the body says (else code `http_<status>`). */
export function errorFromResponse(response: FailedResponse): ApiError {
  const { status } = response;
  const parsed = response.body;
  const code = parsed ? parsed.code.slice(0, 100) : `http_${status}`;
  const said = parsed ? `${clip(parsed.message, 500)} (code ${code})` : describeBody(response);
  const reason = response.statusText ? ` ${clip(response.statusText, 200)}` : '';
  let head = `${response.request} failed with HTTP ${status}${reason}: ${said}.`;

  // A browser shows a redirect it did not follow as status 0.
  if (status === 0 || (status >= 300 && status < 400)) {
    const location = response.headers.get('location');
    head = `${response.request} was answered with a redirect${status ? ` (HTTP ${status})` : ''}${location ? ` to ${JSON.stringify(location.slice(0, 200))}` : ''}, which the SDK does not follow, so nothing was sent there. Check baseUrl.`;
  }
  const { headers, rateLimit, rawBody } = response;
  const details: ApiErrorDetails = { status, code, headers, rateLimit, body: parsed, rawBody };
  switch (status) {
    case 400:
      return new BadRequestError(
        `${head} Fix the request's ${response.method === 'GET' ? 'parameters' : 'body'} and try again.`,
        details,
      );
    case 401:
      return new AuthenticationError(
        `${head} Check the API key (apiKey or ANIMAL_STORE_API_KEY) and the environment it belongs to.`,
        details,
      );
    case 404: {
      const elsewhere = ` This is not the service's answer: check baseUrl (it must end in the API's version, such as /v1).`;
      // A body that could not be read says nothing about who answered.
      const unread = rawBody === undefined;
      return new NotFoundError(parsed || unread ? head : `${head}${elsewhere}`, details);
    }
    case 429:
      return new RateLimitError(`${head}${rateLimitAdvice(response)}`, {
        ...details,
        retryAfterMs: response.retryAfterMs,
      });
    default:
      if (status < 500 || status >= 600) return new ApiError(head, details);
      return new ServerError(`${head}${serverAdvice(response)}`, details);
  }
}

// --- keeping the API key out of everything the SDK says ---

export const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const MOST_NODES = 2000;

/** Takes one secret (the API key) out of each kind of value the SDK shows; never shows it itself. */
export class Redactor {
  readonly #redaction: Redaction | undefined;
  readonly #secret: string;

  constructor(secret: string) {
    this.#redaction = secret ? redaction(secret) : undefined;
    this.#secret = secret;
  }

  /** `text` with the secret, however spelt, replaced by `[redacted]`; a short one only where it stands alone. */
  text(text: string): string {
    const redaction = this.#redaction;
    if (!redaction || text.length < redaction.shortest) return text;
    return redaction.known.get(text) ?? redaction.clean(text);
  }

  /** Whether `text` (a URL, a header's name or value) holds the secret, however spelt. */
  holds(text: string): boolean {
    return this.text(text) !== text;
  }

  /** A parsed JSON value with the secret redacted from every string and name, in place, walked without recursion. */
  json(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    const pending: object[] = [];
    if (typeof value === 'object' && value !== null) pending.push(value);
    for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
      const record = node as Record<string, unknown>;
      for (const name of Object.keys(record)) {
        const child = record[name];
        const cleanChild = typeof child === 'string' ? this.text(child) : child;
        if (typeof child === 'object' && child !== null) pending.push(child);
        const clean = this.text(name);
        if (clean !== name) delete record[name];
        // Written only when changed: an object the SDK froze (a `rateLimit`) is left as it is.
        if (clean !== name || cleanChild !== child) record[clean] = cleanChild;
      }
    }
    return value;
  }

  /**
   * `headers`, or (when one holds the secret, `copy` asks, or they are not the platform's) a
   * `Headers` of their text without it in any value or name; none where they cannot be read.
   */
  headers(headers: Headers, copy = false): Headers {
    try {
      if (!copy && headers instanceof Headers) {
        let leaks = false;
        headers.forEach((value, name) => {
          if (this.holds(name) || this.holds(value)) leaks = true;
        });
        if (!leaks) return headers;
      }
      const clean = new Headers();
      headers.forEach((value, name) => {
        const [text, said] = [String(name), String(value)];
        if (!this.holds(text)) clean.append(text, this.text(said));
      });
      return clean;
    } catch {
      return new Headers();
    }
  }

  /** An error of the SDK's own, the secret taken out of its message, stack and cause (an option given the key, say). */
  thrown<E>(error: E): E {
    if (!this.#secret || typeof error !== 'object' || error === null || this.#clean(error)) {
      return error;
    }
    const own = error as Record<string, unknown>;
    // Besides its cause, its message, stack and fields (`issues`, `body`…) are plain data of its own.
    for (const key of ['message', 'stack', 'cause', ...Object.keys(error)]) {
      const value = own[key];
      if (value === undefined) continue;
      Object.defineProperty(error, key, {
        value: key === 'cause' ? this.error(value) : this.json(value),
        writable: true,
        configurable: true,
      });
    }
    return error;
  }

  /** `error`, or when it cannot be shown free of the secret, a plain `Error` with its redacted message, name, code. */
  error(error: unknown): unknown {
    if (!this.#secret || this.#clean(error)) return error;
    const source = error as { message?: unknown; name?: unknown; code?: unknown };
    let message: string;
    try {
      message = typeof source.message === 'string' ? source.message : 'an error';
    } catch {
      message = 'an error';
    }
    const clean = new Error(this.text(message));
    if (typeof source.name === 'string') clean.name = this.text(source.name);
    if (typeof source.code === 'string') Object.assign(clean, { code: this.text(source.code) });
    return clean;
  }

  /** Whether nothing reachable from `value` holds the secret (walked without recursion); one whose keys hide its content is not. */
  #clean(value: unknown): boolean {
    const dirty = (text: string) => this.holds(text);
    const seen = new Set<object>();
    const pending: unknown[] = [value];
    try {
      for (let node = pending.pop(), count = 0; count < MOST_NODES; node = pending.pop(), count++) {
        if (typeof node === 'string' || typeof node === 'symbol') {
          if (dirty(String(typeof node === 'symbol' ? node.description : node))) return false;
        } else if (
          (typeof node === 'object' || typeof node === 'function') &&
          node &&
          !seen.has(node)
        ) {
          seen.add(node);
          if (INSPECT in node) return false;
          const proto = Object.getPrototypeOf(node);
          if (node instanceof Map || node instanceof Set) {
            pending.push(...node.keys(), ...node.values());
          } else if (node instanceof Error) {
            // What inspection shows of it, wherever it is kept (an own property, a getter, a slot).
            pending.push(node.name, node.message, node.constructor?.name);
          } else if (typeof node === 'function') pending.push(node.name);
          else if (proto !== null && proto !== Object.prototype && !Array.isArray(node))
            return false;
          for (const key of Reflect.ownKeys(node)) {
            if (typeof key === 'string' ? dirty(key) : dirty(String(key.description))) return false;
            pending.push((node as Record<PropertyKey, unknown>)[key]);
          }
        }
        if (pending.length === 0) return true;
      }
    } catch {}
    return false;
  }
}

/** What was thrown, as text for a log line; never throws itself, whatever was thrown. */
export function describeThrown(thrown: unknown): string {
  try {
    return thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  } catch {
    return `a value of type ${typeof thrown}`;
  }
}
