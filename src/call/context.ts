import type { RateLimitInfo, ResponseTiming } from '../headers.js';
import type { Hooks, RetryInfo, TracerProviderLike } from '../observe.js';
import type { Quota } from '../quota/Quota.js';
import {
  describeThrown,
  type LevelLogger,
  redact,
  redactError,
  redactHeaders,
  redactJson,
  scrubThrown,
} from '../redact.js';
import type { Tracing } from '../tracing/otel.js';
import type { Transport } from './transport.js';

/** The client's settings a call runs with. */
export interface ContextSettings {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly transport: Transport;
  readonly quota: Quota;
  readonly maxRetries: number;
  readonly maxRetryDelayMs: number;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly log: LevelLogger;
  readonly onRetry: ((info: RetryInfo) => void) | undefined;
  readonly hooks?: Hooks | undefined;
  /** `false`: no tracing; else a provider to trace with, or the global one when registered. */
  readonly tracing?:
    | { tracerProvider?: TracerProviderLike | undefined; httpSpans?: boolean | undefined }
    | false
    | undefined;
  readonly random?: (() => number) | undefined;
}

// Fixed by @opentelemetry/api 1.x: where it registers its global tracer provider.
const OTEL = Symbol.for('opentelemetry.js.api.1');
/** The package's version, which tracers are told (a test holds it to package.json). */
export const VERSION = '0.2.0';

/** What a client gives every call it runs. */
export class CallContext {
  readonly baseUrl: string;
  readonly transport: Transport;
  readonly quota: Quota;
  readonly maxRetries: number;
  readonly maxRetryDelayMs: number;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly log: LevelLogger;
  readonly random: () => number;
  readonly #apiKey: string;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;
  readonly hooks: Hooks;
  readonly #tracing: ContextSettings['tracing'];
  #tracer: Promise<Tracing> | undefined;
  #tracerFor: TracerProviderLike | undefined;
  /** The last `X-RateLimit-*` values this client saw. */
  rateLimit: RateLimitInfo | undefined;

  constructor(settings: ContextSettings) {
    this.baseUrl = settings.baseUrl;
    this.transport = settings.transport;
    this.quota = settings.quota;
    this.maxRetries = settings.maxRetries;
    this.maxRetryDelayMs = settings.maxRetryDelayMs;
    this.timeoutMs = settings.timeoutMs;
    this.maxResponseBytes = settings.maxResponseBytes;
    this.log = settings.log;
    this.random = settings.random ?? Math.random;
    this.#apiKey = settings.apiKey;
    this.#onRetry = settings.onRetry;
    this.hooks = settings.hooks ?? {};
    this.#tracing = settings.tracing;
  }

  /**
   * The tracing to start a call with, when there is a provider: the one
   * passed, else the one registered with `@opentelemetry/api` (looked up per
   * call, so that one registered after the client was made counts). The
   * tracing code loads on first use only.
   */
  tracing(): Promise<Tracing> | undefined {
    const options = this.#tracing;
    if (options === false) return undefined;
    let provider: TracerProviderLike | undefined;
    try {
      provider =
        options?.tracerProvider ??
        (globalThis as Record<symbol, { trace?: TracerProviderLike } | undefined>)[OTEL]?.trace;
    } catch (error) {
      // Something else broke OpenTelemetry's global registry: not this call.
      this.log.log('error', `Tracing failed and was skipped: ${describeThrown(error)}`);
    }
    if (!provider) return undefined;
    if (provider !== this.#tracerFor) {
      this.#tracerFor = provider;
      const httpSpans = options?.httpSpans === true;
      this.#tracer = import('../tracing/otel.js').then((m) =>
        m.createTracing(provider, httpSpans, this.baseUrl, VERSION, (error) =>
          this.log.log('error', `Tracing failed and was skipped: ${describeThrown(error)}`),
        ),
      );
    }
    return this.#tracer;
  }

  /**
   * Calls a hook, never letting it break the call: a throw, or the rejection
   * of a promise it returns (not awaited), is logged and ignored.
   */
  run<A>(name: string, hook: ((argument: A) => unknown) | undefined, argument: A): void {
    if (!hook) return;
    const failed = (error: unknown) =>
      this.log.log('error', `${name} threw and was ignored: ${describeThrown(error)}`);
    try {
      const result = hook(argument) as { then?: unknown } | null | undefined;
      if (typeof result?.then === 'function') {
        (result as PromiseLike<unknown>).then(undefined, failed);
      }
    } catch (error) {
      failed(error);
    }
  }

  /** `text` with the key replaced by `[redacted]`. */
  scrub(text: string): string {
    return redact(text, this.#apiKey);
  }

  /** Parsed JSON with the key redacted from every string and name. */
  scrubJson(value: unknown): unknown {
    return redactJson(value, this.#apiKey);
  }

  /** Headers without the key; a copy whenever `copy` asks. */
  scrubHeaders(headers: Headers, copy?: boolean): Headers {
    return redactHeaders(headers, this.#apiKey, copy);
  }

  /** An error of the SDK's own, without the key in its message, stack or cause. */
  scrubThrown<E>(error: E): E {
    return scrubThrown(error, this.#apiKey);
  }

  /** An error (a `cause`) without the key anywhere in it. */
  scrubError(error: unknown): unknown {
    return redactError(error, this.#apiKey);
  }

  /** Takes note of what a response said about time. */
  saw(timing: ResponseTiming): void {
    if (timing.rateLimit) this.rateLimit = timing.rateLimit;
    if (timing.reading) this.warnOnce(`${this.scrub(timing.reading)}.`, 'reading');
    if (timing.unusable) {
      this.warnOnce(
        `The rate-limit headers could not be used: ${this.scrub(timing.unusable).slice(0, 300)}. The client learns the budget instead, from one request at first.`,
        'unusable',
      );
    }
    for (const value of timing.ignored) {
      const clean = this.scrub(value);
      this.log.log('info', `Ignored ${clean.length > 200 ? `${clean.slice(0, 200)}…` : clean}.`);
    }
  }

  readonly #warned = new Set<string>();

  /** Logs `message` at `warn`, the first time only for its `kind` (of a bounded number). */
  warnOnce(message: string, kind = message): void {
    if (this.#warned.has(kind) || this.#warned.size >= 100) return;
    this.#warned.add(kind);
    this.log.log('warn', message);
  }

  /** Tells `onRetry` and `hooks.beforeRetry` of a wait, never letting them break the call. */
  notify(info: RetryInfo): void {
    this.run('onRetry', this.#onRetry, info);
    this.run('hooks.beforeRetry', this.hooks.beforeRetry, info);
  }
}
