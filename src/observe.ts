import type { RateLimitInfo } from './headers.js';
import type { HoldReason } from './quota/store.js';

/** Name of a client method, as reported to `onRetry`. */
export type OperationName = 'listPets' | 'createPet' | 'getPet';

/**
 * Why the client waits. Before a retry: the service's `Retry-After`
 * (`'retry-after'`), its rate-limit reset (`'rate-limit-reset'`), back-off
 * after a 429 that said neither (`'rate-limited'`), a 5xx (`'server-error'`),
 * a network failure (`'connection-error'`) or a timeout (`'timeout'`). Before
 * a request is sent at all, a hold by the key's quota: see {@link HoldReason}.
 */
export type RetryReason =
  | 'retry-after'
  | 'rate-limit-reset'
  | 'rate-limited'
  | 'server-error'
  | 'connection-error'
  | 'timeout'
  | HoldReason;

/** What `onRetry` and `hooks.beforeRetry` are told before every wait: between attempts, and before a held request is sent. */
export interface RetryInfo {
  /** The method that waits. */
  readonly operation: OperationName;
  /** The number of the call's latest attempt: 1 for its first request, 2 for its first retry…; 0 before any was sent. */
  readonly attempt: number;
  /**
   * How long the client waits. For a hold until a response in flight arrives
   * (`'budget-unknown'`), the longest it may wait.
   */
  readonly delayMs: number;
  /** Why it waits. */
  readonly reason: RetryReason;
  /** The failure of the attempt before a retry; absent for a hold. */
  readonly error?: Error;
}

/** What `hooks.beforeRequest` is given: the request about to leave, whose headers it may change. */
export interface BeforeRequestContext {
  readonly operation: OperationName;
  /** The number of the call's latest attempt (this one, about to be sent): 1 for its first request, 2 for its first retry…; 0 before any was sent. */
  readonly attempt: number;
  readonly method: 'GET' | 'POST';
  /** The full URL, query included. */
  readonly url: string;
  /** The request's headers, without `Authorization` (reserved: setting it here is ignored). */
  readonly headers: Headers;
}

/** What `hooks.afterResponse` is given, once a response's status and headers arrived (before its body is read). */
export interface AfterResponseContext {
  readonly operation: OperationName;
  /** The number of the call's latest attempt (the one this response answers): 1 for its first request, 2 for its first retry…; 0 before any was sent. */
  readonly attempt: number;
  readonly status: number;
  /** The response's headers (the key redacted, should the server echo it). */
  readonly headers: Headers;
  /** From sending to the headers' arrival. */
  readonly durationMs: number;
}

/** What `hooks.onError` is given when a call fails for good. */
export interface ErrorContext {
  readonly operation: OperationName;
  /** The number of the call's latest attempt: 1 for its first request, 2 for its first retry…; 0 before any was sent. */
  readonly attempt: number;
  /** What the call rejects with: an `AnimalStoreError`, or the reason of the caller's aborted `signal` (any value). */
  readonly error: unknown;
}

/**
 * Functions the client calls as a call goes. Each receives the operation and
 * the attempt number. A hook that throws is reported through the logger and
 * ignored: it never changes what is sent, retried or held, nor what the call
 * returns. Hooks run synchronously; a promise a hook returns is not awaited.
 */
export interface Hooks {
  /** Before each attempt is sent: may add, change or remove headers (not `Authorization`). */
  beforeRequest?: ((context: BeforeRequestContext) => void) | undefined;
  /** When a response's status and headers arrived, retried or not. */
  afterResponse?: ((context: AfterResponseContext) => void) | undefined;
  /**
   * Before every wait: a retry, or a hold before sending. The client option
   * `onRetry` is the same callback under its older name; given both, both are
   * called, `onRetry` first.
   */
  beforeRetry?: ((info: RetryInfo) => void) | undefined;
  /** When a call fails, after its last attempt. */
  onError?: ((context: ErrorContext) => void) | undefined;
}

/** The response a call's data came from, as `client.withResponse` gives it. */
export interface ResponseInfo {
  /** HTTP status of the response the data came from. */
  readonly status: number;
  /** Its headers (the key redacted, should the server echo it). */
  readonly headers: Headers;
  /** Its rate-limit budget (`X-RateLimit-*`, or the standard fields), when it carried a usable one. */
  readonly rateLimit: RateLimitInfo | undefined;
  /** Attempts the call took (1 when the first succeeded). */
  readonly attempts: number;
}

/** The validated data of a call together with the response it came from. */
export interface WithResponse<T> {
  readonly data: T;
  readonly response: ResponseInfo;
}

/**
 * The part of an OpenTelemetry `TracerProvider` the client uses. Any provider
 * of `@opentelemetry/api` 1.x fits (`trace.getTracerProvider()`, or the
 * provider of `@opentelemetry/sdk-trace-base`).
 */
export interface TracerProviderLike {
  /** The tracer the client's spans are made with, named `@animal-store/sdk` with its version. */
  getTracer(name: string, version?: string): unknown;
}

/** Tracing options: where spans go, and whether each attempt gets an HTTP client span. */
export interface TracingOptions {
  /**
   * The provider to trace with.
   * @default the global provider of `@opentelemetry/api`, when one is registered
   */
  tracerProvider?: TracerProviderLike | undefined;
  /**
   * One HTTP client span per attempt, under the operation's span, following
   * the HTTP semantic conventions. Off by default: many apps trace `fetch` itself.
   * @default false
   */
  httpSpans?: boolean | undefined;
}
