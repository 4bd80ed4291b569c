import { redact } from '../auth.js';
import type { LevelLogger } from '../logger.js';
import type { RetryInfo } from '../options.js';
import type { Quota } from '../quota/Quota.js';
import type { RateLimitInfo, ResponseTiming } from '../timing.js';
import type { Output, SchemaName } from '../validation/verdict.js';
import type { Operation } from './operations.js';
import type { Transport } from './transport.js';

/** The client's settings a call runs with. */
export interface CallSettings {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly transport: Transport;
  readonly quota: Quota;
  readonly maxRetries: number;
  readonly maxRetryDelayMs: number;
  readonly timeoutMs: number;
  readonly log: LevelLogger;
  readonly onRetry: ((info: RetryInfo) => void) | undefined;
  readonly random?: (() => number) | undefined;
}

/** What a client gives every call it runs. */
export class CallContext {
  readonly baseUrl: string;
  readonly transport: Transport;
  readonly quota: Quota;
  readonly maxRetries: number;
  readonly maxRetryDelayMs: number;
  readonly timeoutMs: number;
  readonly log: LevelLogger;
  readonly random: () => number;
  readonly #apiKey: string;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;
  /** The last `X-RateLimit-*` values this client saw. */
  rateLimit: RateLimitInfo | undefined;

  constructor(settings: CallSettings) {
    this.baseUrl = settings.baseUrl;
    this.transport = settings.transport;
    this.quota = settings.quota;
    this.maxRetries = settings.maxRetries;
    this.maxRetryDelayMs = settings.maxRetryDelayMs;
    this.timeoutMs = settings.timeoutMs;
    this.log = settings.log;
    this.random = settings.random ?? Math.random;
    this.#apiKey = settings.apiKey;
    this.#onRetry = settings.onRetry;
  }

  /** `text` with the key replaced by `[redacted]`. */
  scrub(text: string): string {
    return redact(text, this.#apiKey);
  }

  /** Takes note of what a response said about time. */
  saw(timing: ResponseTiming): void {
    if (timing.rateLimit) this.rateLimit = timing.rateLimit;
    for (const value of timing.ignored) this.log.log('info', `Ignored ${value}.`);
  }

  /** Tells `onRetry` of a wait, never letting it break the call. */
  notify(info: RetryInfo): void {
    if (!this.#onRetry) return;
    try {
      this.#onRetry(info);
    } catch (callbackError) {
      this.log.log('error', `onRetry threw and was ignored: ${String(callbackError)}`);
    }
  }
}

/** One call of an operation, across its attempts. */
export interface Call<In extends SchemaName = SchemaName, Out extends SchemaName = SchemaName> {
  readonly operation: Operation<In, Out>;
  readonly input: Output<In>;
  /** `"GET https://…/pets"`, for messages. */
  readonly label: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly signal: AbortSignal | undefined;
  /** Attempts sent so far. */
  attempts: number;
}
