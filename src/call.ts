// One call, top to bottom: check the input → for each attempt (p-retry's):
// be admitted by the key's quota → send → read status and headers → let the
// quota observe them → read the body → the answer, or `decide()` on the
// failure → check the output.
import pRetry from 'p-retry';
import type { CallContext } from './client.js';
import {
  AnimalStoreError,
  ConnectionError,
  describeIssues,
  describeThrown,
  errorFromResponse,
  RateLimitError,
  RequestValidationError,
  ResponseValidationError,
  TimeoutError,
} from './errors.js';
import { type RateLimitInfo, readTiming } from './headers.js';
import type { RetryInfo, WithResponse } from './observe.js';
import {
  checkErrorBody,
  type Operation,
  REJECT,
  validateInput,
  validateOutput,
} from './operations.js';
import type { RequestOptions } from './options.js';
import { BACKOFF_FLOOR_MS, type Decision, decide, type HoldRequest } from './quota/Quota.js';
import type { HoldReason, Observation } from './quota/store.js';
import { NO_CALL_OPTIONS, readCallOptions } from './settings.js';
import { onAbort } from './timers.js';
import type { AttemptTrace, CallTrace, Tracing } from './tracing/otel.js';
import { BodyTooLarge, type Exchange, LeaseLapsed, type PrepareHeaders } from './transport.js';
import type { ErrorBody } from './types.js';
import type { Output, SchemaName } from './validation/verdict.js';

const HOLDS: Record<HoldReason, string> = {
  cooldown: 'the service answered 429 Too Many Requests, and every caller of this key waits',
  'no-response':
    'the last requests got no response, and the key waits a little before the next (100 ms, doubling up to 8 s)',
  'budget-exhausted':
    'no requests remain in the rate-limit window (as stated, or as learnt where none is) until it ends',
  'budget-in-flight':
    'the requests left in the rate-limit window (as stated, or as learnt where none is) are all in flight',
  'budget-unknown': 'the budget is unknown until the response to the first request arrives',
};

/** A 2xx answer: its parsed body, and what the response said besides. */
interface Answer {
  readonly body: unknown;
  readonly status: number;
  readonly headers: Headers;
  readonly rateLimit: RateLimitInfo | undefined;
}

/** One call of an operation, across its attempts; also what the quota holds. */
class Call<In extends SchemaName = SchemaName, Out extends SchemaName = SchemaName>
  implements HoldRequest
{
  /** Attempts sent so far: p-retry's number of the last one that left. */
  attempts = 0;
  /** The call's tracing, when traced. */
  trace: CallTrace | undefined;
  /** What was decided on the last failed attempt. */
  decision: Decision | undefined;
  /** The wait after a 429 told already: the cooldown's hold is that wait, unless longer. */
  told: number | undefined;

  constructor(
    readonly ctx: CallContext,
    readonly operation: Operation<In, Out>,
    readonly input: Output<In>,
    readonly timeoutMs: number,
    readonly maxRetries: number,
    readonly signal: AbortSignal | undefined,
    /** This call's own headers, checked, when it has any. */
    readonly headers: Record<string, string> | undefined,
  ) {}

  get maxRetryDelayMs(): number {
    return this.ctx.maxRetryDelayMs;
  }

  /** `"GET https://…/pets?limit=5"`, for messages and log lines. */
  get label(): string {
    const { method, path } = this.operation;
    const { input } = this;
    let query = '';
    if (method === 'GET' && typeof input === 'object' && input !== null) {
      const defined = Object.entries(input).filter(([, value]) => value !== undefined);
      if (defined.length > 0)
        query = `?${new URLSearchParams(defined.map(([k, v]) => [k, String(v)]))}`;
    }
    return `${method} ${this.ctx.baseUrl}${path.replace('{petId}', String(input))}${query}`;
  }

  /** Tells of a wait: `onRetry`, `hooks.beforeRetry` and the call's span. */
  notify(info: RetryInfo): void {
    this.ctx.notify(info);
    this.trace?.wait(info);
  }

  onHold(reason: HoldReason, delayMs: number, untimed: boolean): void {
    const name = this.operation.name;
    const told = this.told;
    this.told = undefined;
    if (reason === 'cooldown' && told !== undefined && delayMs <= told) return;
    const how = untimed ? `(at most ${delayMs} ms)` : `for ${delayMs} ms`;
    this.ctx.log.log('info', `${name} is held ${how} before sending: ${HOLDS[reason]}.`);
    this.notify({ operation: name, attempt: this.attempts, delayMs, reason });
  }

  tooLong(reason: HoldReason, waitMs: number | undefined): Error {
    const { maxRetryDelayMs, rateLimit } = this.ctx;
    const when =
      waitMs === undefined
        ? `, and none arrived within maxRetryDelayMs (${maxRetryDelayMs} ms). Retry once the service answers again.`
        : `, for ${waitMs} ms more, longer than maxRetryDelayMs (${maxRetryDelayMs} ms). Retry after ${new Date(Date.now() + waitMs).toISOString()}.`;
    // No 429 came: the service (or the way to it) did not answer.
    if (reason === 'no-response') {
      return new ConnectionError(
        `${this.operation.name} was not sent: ${HOLDS[reason]}${when} Check the network and baseUrl.`,
      );
    }
    return new RateLimitError(`${this.operation.name} was not sent: ${HOLDS[reason]}${when}`, {
      status: 429,
      code: 'rate_limit_hold',
      headers: new Headers(),
      rateLimit,
      retryAfterMs: waitMs,
    });
  }
}

/**
 * Runs one call of `operation`: checks the input and options, runs attempts
 * until one succeeds or a failure is not retried, and checks the output.
 * `withResponse` also gives the response the data came from.
 */
export async function runCall<In extends SchemaName, Out extends SchemaName>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  raw: unknown,
  options: RequestOptions,
  withResponse: true,
): Promise<WithResponse<Output<Out>>>;
export async function runCall<In extends SchemaName, Out extends SchemaName>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  raw: unknown,
  options: RequestOptions,
  withResponse?: false,
): Promise<Output<Out>>;
export async function runCall<In extends SchemaName, Out extends SchemaName>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  raw: unknown,
  options: RequestOptions,
  withResponse = false,
): Promise<Output<Out> | WithResponse<Output<Out>>> {
  let call: Call<In, Out> | undefined;
  try {
    call = await prepare(ctx, operation, raw, options);
    const tracing = ctx.tracing();
    if (tracing) await startTrace(ctx, call, tracing);
    call.signal?.throwIfAborted();
    const answer = await withRetries(ctx, call);
    call.signal?.throwIfAborted();
    const { status } = answer;
    const name = operation.name;
    const data = await validateOutput(
      operation.checkOutput,
      operation.output,
      answer.body,
      name,
      status,
    );
    const issue = operation.checkAnswer?.(call.input, data);
    if (issue) {
      throw new ResponseValidationError(
        `The service's response to ${name} (HTTP ${status}) contradicts the request: ${describeIssues([issue])}.`,
        { issues: [issue], status },
      );
    }
    call.trace?.end();
    if (!withResponse) return data;
    const { headers, rateLimit } = answer;
    return {
      data,
      response: { status, headers: ctx.scrubHeaders(headers), rateLimit, attempts: call.attempts },
    };
  } catch (thrown) {
    const error = settled(ctx, operation.name, call, thrown);
    call?.trace?.end(error);
    ctx.run('hooks.onError', ctx.hooks.onError, {
      operation: operation.name,
      attempt: call?.attempts ?? 0,
      error,
    });
    throw error;
  }
}

/**
 * What a call rejects with: the caller's abort reason as it is; an error of
 * the SDK's own, without the key; anything else (a caller's fetch, signal or
 * store that broke in an odd way) as an `AnimalStoreError` that says what.
 */
function settled(ctx: CallContext, name: string, call: Call | undefined, thrown: unknown): unknown {
  try {
    if (call?.signal?.aborted && thrown === call.signal.reason) return thrown;
  } catch {
    // A signal whose getters throw is no abort of the caller's.
  }
  if (thrown instanceof AnimalStoreError) return ctx.scrubThrown(thrown);
  return new AnimalStoreError(ctx.scrub(`${name} failed: ${describeThrown(thrown)}`), {
    cause: ctx.scrubError(thrown),
  });
}

/** Starts the call's span; tracing that fails is logged and never fails the call. */
async function startTrace(ctx: CallContext, call: Call, tracing: Promise<Tracing>): Promise<void> {
  try {
    const { name, method, path } = call.operation;
    call.trace = (await tracing).start(name, method, path);
  } catch (error) {
    ctx.log.log('error', `Tracing failed and was skipped: ${describeThrown(error)}`);
  }
}

/** Checks the input and the call's options; the call to run. */
async function prepare<In extends SchemaName, Out extends SchemaName>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  raw: unknown,
  options: RequestOptions,
): Promise<Call<In, Out>> {
  let input: Output<In>;
  try {
    input = await validateInput(operation.checkInput, operation.input, raw, operation.inputName);
  } catch (error) {
    if (error instanceof AnimalStoreError) throw error;
    // A getter of the caller's that throws, a Proxy that refuses to be read…
    const message = ctx.scrub(`reading it threw ${describeThrown(error)}`);
    throw new RequestValidationError(
      `Invalid ${operation.inputName}; nothing was sent. ${message}.`,
      [{ path: [], code: 'unreadable', message }],
    );
  }
  const { name } = operation;
  try {
    // A call without options reads none.
    if (options === NO_CALL_OPTIONS) {
      return new Call(ctx, operation, input, ctx.timeoutMs, ctx.maxRetries, undefined, undefined);
    }
    const { settings, unknown } = readCallOptions(options, name);
    if (unknown.length > 0) {
      ctx.warnOnce(`Unknown ${name} options were ignored: ${unknown.join(', ')}.`);
    }
    return new Call(
      ctx,
      operation,
      input,
      settings.timeoutMs ?? ctx.timeoutMs,
      settings.maxRetries ?? ctx.maxRetries,
      settings.signal,
      settings.headers,
    );
  } catch (error) {
    if (error instanceof AnimalStoreError) throw error;
    throw new AnimalStoreError(
      ctx.scrub(`Invalid ${name} options: reading them threw ${describeThrown(error)}.`),
      { cause: ctx.scrubError(error) },
    );
  }
}

/**
 * The attempts, run by p-retry with its own count: each failure is decided
 * once, where it is known ({@link attempt}); p-retry asks `shouldRetry`, and
 * the wait decided is taken in `onFailedAttempt`, which p-retry awaits.
 */
async function withRetries(ctx: CallContext, call: Call): Promise<Answer> {
  try {
    return await pRetry((attemptNumber) => attempt(ctx, call, attemptNumber), {
      retries: call.maxRetries,
      // The waits are the decisions' own (Retry-After, back-off with jitter).
      minTimeout: 0,
      maxTimeout: 0,
      onFailedAttempt: ({ error, retriesLeft }) =>
        retriesLeft > 0 ? backOff(ctx, call, error) : undefined,
      shouldRetry: () => call.decision?.retry !== undefined,
      // p-retry fills in what it is not given on a copy of these options,
      // property by property, which costs about 4 µs a call (Node 20): all
      // given, it costs a quarter of a microsecond.
      factor: 1,
      maxRetryTime: Number.POSITIVE_INFINITY,
      randomize: false,
      shouldConsumeRetry: consumeRetry,
    });
  } catch (error) {
    if (call.signal?.aborted) throw call.signal.reason;
    throw error;
  }
}

const consumeRetry = () => true;

/** Waits what was decided before the next attempt, telling the logs and `onRetry`. */
async function backOff(ctx: CallContext, call: Call, error: Error): Promise<void> {
  const retry = call.decision?.retry;
  if (!retry) return;
  const status = 'status' in error ? ` (HTTP ${String(error.status)})` : '';
  ctx.log.log(
    'info',
    `${call.operation.name} attempt ${call.attempts} failed with ${error.name}${status}; retrying in ${retry.delayMs} ms (${retry.reason}).`,
  );
  call.notify({
    operation: call.operation.name,
    attempt: call.attempts,
    delayMs: retry.delayMs,
    reason: retry.reason,
    error,
  });
  // A 429's wait is the key's cooldown: the quota holds the next attempt for it.
  if (retry.held) call.told = retry.delayMs;
  else await sleep(retry.delayMs, call.signal);
}

/**
 * The headers of one attempt: the client's, then the call's own, then what
 * `hooks.beforeRequest` makes of them. `authorization` stays the transport's.
 */
function attemptHeaders(
  ctx: CallContext,
  call: Call,
  url: string,
  method: 'GET' | 'POST',
): Record<string, string> {
  const { authorization: _, ...client } = ctx.transport.headers;
  const merged = call.headers ? { ...client, ...call.headers } : client;
  const hook = ctx.hooks.beforeRequest;
  if (!hook) return merged;
  const headers = new Headers(merged);
  ctx.run('hooks.beforeRequest', hook, {
    operation: call.operation.name,
    attempt: call.attempts,
    method,
    url,
    headers,
  });
  try {
    if (headers.has('authorization')) {
      ctx.log.log(
        'error',
        'hooks.beforeRequest set Authorization, which is reserved for the key; it was ignored.',
      );
    }
    return Object.fromEntries(headers);
  } catch (error) {
    ctx.log.log(
      'error',
      `hooks.beforeRequest broke the headers it was given (${describeThrown(error)}); the request is sent with the headers it had before.`,
    );
    return merged;
  }
}

/**
 * One attempt: be admitted by the quota → send through openapi-fetch → read
 * status and headers → let the quota observe them → read the body → the
 * parsed 2xx body, or a typed error, with the decision on it kept on the call.
 */
async function attempt(ctx: CallContext, call: Call, attemptNumber: number): Promise<Answer> {
  call.decision = undefined;
  const lease = await ctx.quota.admit(call);
  call.told = undefined;
  // Every way out of the attempt ends the lease; one left open would hold
  // the key's budget for every client that shares it.
  let ended = false;
  const observe = (observation: Observation) => {
    ended = true;
    return ctx.quota.observe(lease, observation, call.timeoutMs);
  };
  let exchange: Exchange;
  try {
    exchange = ctx.transport.open(call.timeoutMs, call.signal);
  } catch (error) {
    // Nothing was sent (a signal that broke when read): the lease goes back.
    await ctx.quota.release(lease);
    throw error;
  }
  if (ctx.quota.checksLeases) exchange.holds = () => ctx.quota.holds(lease);
  call.attempts = attemptNumber;
  const { hooks } = ctx;
  const seen = hooks.afterResponse !== undefined;
  const timed = seen || ctx.log.enabled('debug');
  const started = timed ? performance.now() : 0;
  // Only a call with headers of its own, a beforeRequest hook or HTTP spans
  // builds its headers per attempt; the others send the client's as they are.
  let span: AttemptTrace | undefined;
  const prepare: PrepareHeaders | undefined =
    call.headers || hooks.beforeRequest || call.trace
      ? (url, method) => {
          span = call.trace?.attempt(call.attempts, method, url);
          exchange.within = span?.within ?? call.trace?.within;
          return attemptHeaders(ctx, call, url, method);
        }
      : undefined;
  let observed: Promise<void> | undefined;
  try {
    let response: Response;
    const sentAt = Date.now();
    try {
      response = await ctx.transport.send(call.operation, call.input, exchange, prepare);
    } catch (error) {
      if (error instanceof LeaseLapsed) {
        // Nothing left: the turn is asked for again.
        span?.end(undefined, error);
        ended = true;
        await ctx.quota.release(lease);
        exchange.close();
        return await attempt(ctx, call, attemptNumber);
      }
      // No response (a timeout, an abort, a connection lost): the request may
      // still have reached the service and been counted, so it is counted.
      await observe({ status: 0 });
      const failure = noResponse(ctx, call, exchange, error);
      span?.end(undefined, failure);
      throw failure;
    }
    const { status } = response;
    span?.end(status);
    if (timed) {
      const durationMs = performance.now() - started;
      ctx.log.log('debug', `${call.label} -> ${status} in ${Math.round(durationMs)} ms`);
      if (seen) {
        ctx.run('hooks.afterResponse', hooks.afterResponse, {
          operation: call.operation.name,
          attempt: call.attempts,
          status,
          // A copy: the hook must not change what the client reads next.
          headers: ctx.scrubHeaders(response.headers, true),
          durationMs,
        });
      }
    }
    const timing = readTiming(response.headers, status, Date.now(), sentAt);
    const ok = status >= 200 && status < 300;
    const decision = ok
      ? undefined
      : decide(
          {
            kind: 'response',
            status,
            retryAfter: timing.retryAfter,
            retryAfterTooFar: timing.retryAfterTooFar,
          },
          situation(ctx, call, lease),
        );
    observed = observe({
      status,
      window: timing.window,
      cooldownMs: decision?.cooldownMs,
      ...(status === 429 && !timing.retryAfter && !timing.retryAfterTooFar && { guessed: true }),
    });
    ctx.saw(timing);
    if (ok) {
      let text: string;
      try {
        text = await ctx.transport.read(exchange, response, ctx.maxResponseBytes);
      } catch (error) {
        if (error instanceof BodyTooLarge) throw tooLarge(call, error, status);
        throw noResponse(ctx, call, exchange, error, status);
      }
      const body = parseBody(call, text, status);
      // Parsing counts against the time limit too.
      if (exchange.timedOut) throw noResponse(ctx, call, exchange, undefined, status);
      return { body, status, headers: response.headers, rateLimit: timing.rateLimit };
    }
    // The status decides the error; a body that breaks off only loses its detail.
    const text = await ctx.transport
      .read(exchange, response, ctx.maxResponseBytes)
      .catch(() => undefined);
    if (call.signal?.aborted) throw call.signal.reason;
    call.decision = decision;
    throw errorFromResponse({
      status,
      statusText: ctx.scrub(typeof response.statusText === 'string' ? response.statusText : ''),
      headers: ctx.scrubHeaders(response.headers),
      ...errorBody(ctx, text),
      rateLimit: timing.rateLimit,
      request: call.label,
      method: call.operation.method,
      retryAfterMs: timing.retryAfter
        ? decision?.cooldownMs && Math.max(timing.retryAfter.ms, BACKOFF_FLOOR_MS)
        : timing.retryAfterTooFar || !decision?.tooLong
          ? undefined
          : decision.cooldownMs,
      tooLongToWait: decision?.tooLong === true,
      guessed: !timing.retryAfter && !timing.retryAfterTooFar,
      maxRetryDelayMs: ctx.maxRetryDelayMs,
      retriesSpent: call.attempts > call.maxRetries ? call.maxRetries : undefined,
    });
  } finally {
    exchange.close();
    // Failed before its response was told (a response-like object that broke
    // on reading): counted, since the request may have reached the service.
    if (!ended) void observe({ status: 0 });
    // The store learns of the response while its body is read, and has
    // learnt before the call goes on (to a retry, say), unless the caller
    // aborts meanwhile.
    await (call.signal ? untilAborted(observed, call.signal) : observed);
  }
}

const situation = (ctx: CallContext, call: Call, lease = '') => ({
  resend: call.operation.resend,
  attempt: call.attempts,
  strikes: ctx.quota.strikes(lease),
  maxRetryDelayMs: ctx.maxRetryDelayMs,
  random: ctx.random,
});

// `.example` is reserved (RFC 2606): the built-in environments' hosts are
// placeholders until the interface names real ones.
const placeholderHost = (baseUrl: string) => /\.example\.?$/i.test(new URL(baseUrl).hostname);
const PLACEHOLDER_ADVICE =
  'This host is a placeholder: pass baseUrl (or ANIMAL_STORE_BASE_URL) with the address your account was given.';

/**
 * The error for an attempt that got no response, or (`status`) whose body
 * did not arrive; the decision on it is kept on the call.
 */
function noResponse(
  ctx: CallContext,
  call: Call,
  exchange: Exchange,
  error: unknown,
  status?: number,
): unknown {
  if (call.signal?.aborted) return call.signal.reason;
  if (error instanceof AnimalStoreError) return error;
  const { timedOut } = exchange;
  // Nothing answers at a placeholder: retrying it only delays the advice.
  const placeholder = !timedOut && status === undefined && placeholderHost(ctx.baseUrl);
  if (!placeholder) {
    call.decision = decide({ kind: 'no-response', timedOut, status }, situation(ctx, call));
  }
  const cause = ctx.scrubError(error);
  if (timedOut) {
    return new TimeoutError(
      `${call.label} timed out after ${call.timeoutMs} ms (timeoutMs), reading the body included. Raise timeoutMs if the service is slow.`,
      { cause },
    );
  }
  const why = (
    cause instanceof Error ? ctx.scrub(describeFailure(cause)) : 'unknown failure'
  ).replace(/\.+$/, '');
  const what =
    status === undefined
      ? `got no response from ${ctx.baseUrl}: ${why}. ${placeholder ? PLACEHOLDER_ADVICE : 'Check the network and baseUrl.'}`
      : `got HTTP ${status}, but its body broke off: ${why}.${call.operation.resend ? '' : ' The service may have acted on the request: check before sending it again.'}`;
  return new ConnectionError(`${call.label} ${what}`, { cause });
}

/**
 * An error response's body, when it is the spec's `Error` JSON, and its text
 * without the key (JSON re-serialised, so that an escaped key is redacted
 * too) for the message and `rawBody`. JSON nested deeper than anyone's code
 * walks safely (`JSON.stringify` must not overflow the stack) is dropped.
 */
function errorBody(
  ctx: CallContext,
  raw: string | undefined,
): { body: ErrorBody | undefined; text?: string; rawBody?: string } {
  if (raw === undefined || raw === '') {
    return { body: undefined, ...(raw === '' && { text: '', rawBody: '' }) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    const clean = ctx.scrub(raw);
    return { body: undefined, text: clean, rawBody: clean };
  }
  if (nestedDeeperThan(parsed, 64))
    return { body: undefined, text: '(JSON nested too deep to show)' };
  const clean = ctx.scrubJson(parsed);
  const text = JSON.stringify(clean);
  const body = checkErrorBody(clean);
  return { body: body === REJECT ? undefined : body, text, rawBody: text };
}

function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

function tooLarge(call: Call, error: BodyTooLarge, status: number): ResponseValidationError {
  return new ResponseValidationError(
    `The service's response to ${call.label} (HTTP ${status}): ${error.message}. Raise maxResponseBytes if the service's answers are this large.`,
    { issues: [{ path: [], code: 'too_big', message: error.message }], status },
  );
}

function parseBody(call: Call, text: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const excerpt = call.ctx.scrub(text).slice(0, 80);
    throw new ResponseValidationError(
      `The service's response to ${call.label} (HTTP ${status}) is not JSON: ${text ? JSON.stringify(excerpt) : 'the body is empty'}.`,
      {
        issues: [{ path: [], code: 'invalid_json', message: 'the body is not valid JSON' }],
        status,
        // JSON.parse quotes the start of the body in its message.
        cause: call.ctx.scrubError(cause),
      },
    );
  }
}

// undici says only "fetch failed" and keeps the reason (ECONNREFUSED…) in `cause`.
function describeFailure(error: Error): string {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause?.code ?? cause?.message;
  return typeof detail === 'string' && detail ? `${error.message} (${detail})` : error.message;
}

/** `promise`, settled early (resolved) when `signal` aborts. */
function untilAborted(promise: Promise<void> | undefined, signal: AbortSignal): Promise<void> {
  if (!promise || signal.aborted) return Promise.resolve();
  let stop: (() => void) | undefined;
  const aborted = new Promise<void>((resolve) => {
    stop = onAbort(signal, resolve);
  });
  return Promise.race([promise, aborted]).finally(() => stop?.());
}

/** Resolves after `ms` (a back-off: at most 8 s); rejects with the signal's reason as soon as `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const stop = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(signal.reason);
        })
      : undefined;
    const timer = setTimeout(() => {
      stop?.();
      resolve();
    }, ms);
  });
}
