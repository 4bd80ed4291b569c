import type { RateLimitInfo } from '../timing.js';
import type { ErrorBody } from '../types.js';
import { AnimalStoreError } from './AnimalStoreError.js';

/** What every {@link ApiError} carries about the response that caused it. */
export interface ApiErrorDetails {
  /** HTTP status of the response. */
  status: number;
  /** Machine-readable code from the body, or `http_<status>` when the body was not the spec's Error. */
  code: string;
  /** Response headers (the API key is redacted should the server echo it). */
  headers: Headers;
  /** The `X-RateLimit-*` values of the response, when it carried all three. */
  rateLimit?: RateLimitInfo | undefined;
  /** The body, when it was the spec's `Error` JSON. */
  body?: ErrorBody | undefined;
  /** The body as text (JSON re-serialised), when there was one. */
  rawBody?: string | undefined;
  cause?: unknown;
}

/**
 * The service answered with a non-2xx status. Subclasses name the status:
 * {@link BadRequestError} (400), {@link AuthenticationError} (401),
 * {@link NotFoundError} (404), {@link RateLimitError} (429) and
 * {@link ServerError} (5xx and any other unexpected status).
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
  /** `X-RateLimit-*` values of this response, when present. */
  readonly rateLimit?: RateLimitInfo;
  /**
   * The response's body when it was the spec's `Error` JSON (`{ code,
   * message, status }`, unknown fields dropped); `undefined` when it was
   * something else (an HTML page from a proxy, other JSON, nothing), and for
   * a `RateLimitError` whose request was never sent.
   */
  readonly body: ErrorBody | undefined;
  /**
   * The body as received, as text (JSON is re-serialised after the key is
   * redacted), whatever its shape; `undefined` when there was none, it could
   * not be read, or the request was never sent.
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
