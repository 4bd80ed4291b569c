import type { RateLimitInfo } from '../timing.js';
import { checkErrorBody, REJECT } from '../validation/fast.js';
import type { ApiError, ApiErrorDetails } from './ApiError.js';
import { AuthenticationError } from './AuthenticationError.js';
import { BadRequestError } from './BadRequestError.js';
import { NotFoundError } from './NotFoundError.js';
import { RateLimitError } from './RateLimitError.js';
import { ServerError } from './ServerError.js';

/** What is known about a non-2xx response when its error is built. */
export interface FailedResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  /** The body: parsed JSON, raw text when it was not JSON, or `undefined` when empty. */
  readonly body: unknown;
  /** The body as text, for the message; `undefined` when it could not be read. */
  readonly text?: string | undefined;
  /** The body as text for `rawBody`; `undefined` when there was none to give. */
  readonly rawBody?: string | undefined;
  /** The request's method: a 400 to a GET is about its parameters, to a POST about its body. */
  readonly method: 'GET' | 'POST';
  /** The response's `X-RateLimit-*` values, when it carried them. */
  readonly rateLimit: RateLimitInfo | undefined;
  /** `"GET /pets"`, for the message. */
  readonly request: string;
  /** For 429: the wait the service asked for, if it said. */
  readonly retryAfterMs?: number | undefined;
  /** For 429: the wait is longer than `maxRetryDelayMs`, so the client does not take it. */
  readonly tooLongToWait?: boolean;
  /** For 429: the longest wait the client accepts, for the message. */
  readonly maxRetryDelayMs?: number;
}

function describeBody(response: FailedResponse): string {
  const type = response.headers.get('content-type') ?? 'no content type';
  const { text } = response;
  if (text === undefined) return `a body that could not be read (${type})`;
  if (text === '') return `an empty body (${type})`;
  const excerpt = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  return `a body that is not the service's Error JSON (${type}): ${JSON.stringify(excerpt)}`;
}

function rateLimitAdvice(response: FailedResponse): string {
  const wait = response.retryAfterMs;
  if (wait === undefined) {
    return response.tooLongToWait
      ? ' The service asks to wait more than a day, so the client did not wait.'
      : ' The response said nothing usable about when to retry.';
  }
  if (response.tooLongToWait) {
    return ` The service asks to wait ${wait} ms, longer than maxRetryDelayMs (${response.maxRetryDelayMs} ms), so the client did not wait.`;
  }
  return ` The service asks to wait ${wait} ms.`;
}

/**
 * Builds the {@link ApiError} subclass for an HTTP status. The HTTP status
 * decides the class, whatever the body says; a body that is not the spec's
 * Error (an HTML page from a proxy, garbage, nothing) still gives the right
 * class, with code `http_<status>` and a message saying what came back.
 */
export function errorFromResponse(response: FailedResponse): ApiError {
  const { status } = response;
  const parsed = checkErrorBody(response.body);
  const code = parsed !== REJECT ? parsed.code : `http_${status}`;
  const said = parsed !== REJECT ? `${parsed.message} (code ${code})` : describeBody(response);
  let head = `${response.request} failed with HTTP ${status}${response.statusText ? ` ${response.statusText}` : ''}: ${said}.`;
  if (status === 0 || (status >= 300 && status < 400)) {
    // A browser shows a redirect it did not follow as status 0, without Location.
    const location = response.headers.get('location');
    head = `${response.request} was answered with a redirect${status ? ` (HTTP ${status})` : ''}${location ? ` to ${JSON.stringify(location.slice(0, 200))}` : ''}, which the SDK does not follow, so nothing was sent there. Check baseUrl.`;
  }
  const details: ApiErrorDetails = {
    status,
    code,
    headers: response.headers,
    rateLimit: response.rateLimit,
    body: parsed !== REJECT ? parsed : undefined,
    rawBody: response.rawBody,
  };
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
    case 404:
      return new NotFoundError(head, details);
    case 429:
      return new RateLimitError(`${head}${rateLimitAdvice(response)}`, {
        ...details,
        retryAfterMs: response.retryAfterMs,
      });
    default:
      return new ServerError(head, details);
  }
}
