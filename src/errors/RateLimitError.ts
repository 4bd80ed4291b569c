import { ApiError, type ApiErrorDetails } from './ApiError.js';

/**
 * The service answered 429 and retries are spent, or the wait it demanded is
 * longer than `maxRetryDelayMs` (then the SDK fails at once instead of waiting).
 */
export class RateLimitError extends ApiError {
  static override readonly brand: string = 'RateLimitError';
  override readonly name: string = 'RateLimitError';
  /** How long the service asked to wait, when it said (`Retry-After` or `X-RateLimit-Reset`). */
  readonly retryAfterMs?: number;

  constructor(message: string, details: ApiErrorDetails & { retryAfterMs?: number | undefined }) {
    super(message, details);
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }
}
