// One call: check the input → attempts under p-retry (see `attempt`) → check the output.
import pRetry from 'p-retry';
import type { CallContext } from './client.js';
import { PLACEHOLDER_ADVICE, placeholderHost } from './environments.js';
import {
  AnimalStoreError,
  ConnectionError,
  describeThrown,
  errorFromResponse,
  POSSIBLY_ACTED,
  RateLimitError,
  TimeoutError,
} from './errors.js';
import { readTiming } from './headers.js';
import type { ResponseInfo, RetryInfo, WithResponse } from './observe.js';
import { canonical, type Operation, validateInput, validateOutput } from './operations.js';
import type { RequestOptions } from './options.js';
import {
  BACKOFF_FLOOR_MS,
  type Decision,
  decide,
  type HoldRequest,
  type Lost,
} from './quota/Quota.js';
import { HOLDS, type HoldReason, type Observation } from './quota/store.js';
import { readCallOptions, reservedHeader } from './settings.js';
import { sleep, untilAborted } from './timers.js';
import type { AttemptTrace, CallTrace } from './tracing/otel.js';
import {
  BodyTooLarge,
  describeFailure,
  type Exchange,
  errorBody,
  LeaseLapsed,
  type PrepareHeaders,
  parseBody,
  tooLarge,
} from './transport.js';
import type { Output, SchemaName } from './validation/verdict.js';

type Answer = Omit<ResponseInfo, 'attempts'> & { readonly body: unknown };

/** One call of an operation, across its attempts; also what the quota holds. */
class Call<In extends SchemaName = SchemaName, Out extends SchemaName = SchemaName>
  implements HoldRequest
{
  attempts = 0; // p-retry's number of the last one that left
  unanswered = false; // the last one got no response
  trace: CallTrace | undefined;
  decision: Decision | undefined; // on the last failed attempt
  lapsedSince: number | undefined; // when a lease of this call first lapsed before it was used
  told: number | undefined; // the wait after a 429 told already, which the cooldown's hold repeats

  constructor(
    readonly ctx: CallContext,
    readonly operation: Operation<In, Out>,
    readonly input: Output<In>,
    readonly timeoutMs: number,
    readonly maxRetries: number,
    readonly signal: AbortSignal | undefined,
    readonly headers: Record<string, string> | undefined,
  ) {}

  get maxRetryDelayMs(): number {
    return this.ctx.settings.maxRetryDelayMs;
  }

  /** `"GET https://…/pets?limit=5"`, and `(attempt 2)` from the second on, for messages and log lines. */
  get label(): string {
    const { method, path } = this.operation;
    const { input } = this;
    let query = '';
    if (method === 'GET' && typeof input === 'object' && input !== null) {
      const defined = Object.entries(input).filter(([, value]) => value !== undefined);
      if (defined.length > 0)
        query = `?${new URLSearchParams(defined.map(([k, v]) => [k, String(v)]))}`;
    }
    const attempt = this.attempts > 1 ? ` (attempt ${this.attempts})` : '';
    return `${method} ${this.ctx.baseUrl}${path.replace('{petId}', String(input))}${query}${attempt}`;
  }

  /** What it sends, the same for each of its attempts: its client's, its operation and headers, a line, its input. */
  get sends(): string {
    return `${this.ctx.id} ${this.operation.name} ${canonical(this.headers)}\n${canonical(this.input)}`;
  }

  outage(lost: number, cause: unknown, timedOut: boolean, same: boolean): Error {
    const what = `${same ? 'the same request' : `${this.operation.name} requests, after its own got none,`} got no response ${lost > 1 ? `${lost} times in a row` : 'once'} while it waited, as often as it would have tried alone`;
    return new (timedOut ? TimeoutError : ConnectionError)(
      `${this.operation.name} was not sent${this.attempts ? ` again after attempt ${this.attempts}` : ''}: ${what}. ${timedOut ? 'Raise timeoutMs if the service is slow' : 'Check the network and baseUrl'}.`,
      { cause },
    );
  }

  notify(info: RetryInfo): void {
    this.ctx.notify(info);
    this.trace?.wait(info);
  }

  onHold(reason: HoldReason, delayMs: number, untimed: boolean, held: number): void {
    const name = this.operation.name;
    const told = this.told;
    this.told = undefined;
    if (reason === 'cooldown' && told !== undefined && delayMs <= told) return;
    if (held > 0) {
      const how = untimed ? `(at most ${delayMs} ms)` : `for ${delayMs} ms`;
      const who =
        held > 1 ? `${name} and ${held - 1} more call${held > 2 ? 's' : ''} are` : `${name} is`;
      this.ctx.log.log('info', `${who} held ${how} before sending: ${HOLDS[reason]}.`);
    }
    this.notify({ operation: name, attempt: this.attempts, delayMs, reason });
  }

  tooLong(reason: HoldReason, waitMs: number | undefined): Error {
    const when =
      waitMs === undefined
        ? `, with no end in sight within maxRetryDelayMs (${this.maxRetryDelayMs} ms). Retry once the service, or the quota store, answers again.`
        : `, for ${waitMs} ms more, longer than maxRetryDelayMs (${this.maxRetryDelayMs} ms). Retry after ${new Date(Date.now() + waitMs).toISOString()}.`;
    if (reason === 'no-response') {
      return new ConnectionError(
        `${this.operation.name} was not sent: ${HOLDS[reason]}${when} Check the network and baseUrl.`,
        { cause: this.ctx.lostCause },
      );
    }
    // Nothing came back: a first request slower than the hold allows, or a store that is down.
    const unknown =
      reason !== 'budget-unknown'
        ? ''
        : this.ctx.quota.remote
          ? ' Check the quota store (a RedisQuotaStore logs losing Redis), or raise maxRetryDelayMs.'
          : ' The service is slower than that: raise maxRetryDelayMs.';
    return new RateLimitError(
      `${this.operation.name} was not sent: ${HOLDS[reason]}${when}${unknown}`,
      {
        status: 429,
        code: 'rate_limit_hold',
        headers: new Headers(),
        rateLimit: this.ctx.rateLimit,
        retryAfterMs: waitMs,
      },
    );
  }
}

/** Runs one call of `operation`; `withResponse` also gives the response the data came from. */
export async function runCall<In extends SchemaName, Out extends SchemaName, R extends boolean>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  raw: unknown,
  options: RequestOptions | undefined,
  withResponse: R,
): Promise<R extends true ? WithResponse<Output<Out>> : Output<Out>> {
  type Result = R extends true ? WithResponse<Output<Out>> : Output<Out>;
  let call: Call<In, Out> | undefined;
  try {
    const input = validateInput(operation, raw);
    call = prepare(ctx, operation, input instanceof Promise ? await input : input, options);
    const tracing = ctx.tracing();
    if (tracing) {
      const { name, method, path } = operation;
      call.trace = await tracing
        .then((traced) => traced.start(name, method, path))
        .catch((error: unknown) => void ctx.tracingFailed(error));
    }
    call.signal?.throwIfAborted();
    const answer = await withRetries(ctx, call);
    call.signal?.throwIfAborted();
    const { status, headers, rateLimit } = answer;
    const output = validateOutput(operation, call.input, answer.body, status);
    const data = output instanceof Promise ? await output : output;
    call.trace?.end();
    if (!withResponse) return data as Result;
    const { attempts } = call;
    return {
      data,
      response: { status, headers: ctx.redact.headers(headers), rateLimit, attempts },
    } as Result;
  } catch (thrown) {
    const error = settled(ctx, operation.name, call, thrown);
    call?.trace?.end(error);
    ctx.run('hooks.onError', ctx.settings.hooks.onError, {
      operation: operation.name,
      attempt: call?.attempts ?? 0,
      error,
    });
    throw error;
  }
}

/** What a call rejects with: the caller's abort reason, or an `AnimalStoreError` without the key. */
function settled(ctx: CallContext, name: string, call: Call | undefined, thrown: unknown): unknown {
  try {
    if (call?.signal?.aborted && thrown === call.signal.reason) return thrown;
  } catch {}
  if (thrown instanceof AnimalStoreError) return ctx.redact.thrown(thrown);
  return new AnimalStoreError(ctx.redact.text(`${name} failed: ${describeThrown(thrown)}`), {
    cause: ctx.redact.error(thrown),
  });
}

function prepare<In extends SchemaName, Out extends SchemaName>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  input: Output<In>,
  options: RequestOptions | undefined,
): Call<In, Out> {
  const { name } = operation;
  const { settings, unknown } =
    options === undefined ? { settings: {}, unknown: [] } : readCallOptions(options, name);
  if (unknown.length > 0)
    ctx.warnOnce(`Unknown ${name} options were ignored: ${unknown.join(', ')}.`);
  return new Call(
    ctx,
    operation,
    input,
    settings.timeoutMs ?? ctx.settings.timeoutMs,
    settings.maxRetries ?? ctx.settings.maxRetries,
    settings.signal,
    settings.headers,
  );
}

/** The attempts, counted by p-retry; each failure is decided once, in {@link attempt}. */
async function withRetries(ctx: CallContext, call: Call): Promise<Answer> {
  try {
    return await pRetry((attemptNumber) => attempt(ctx, call, attemptNumber), {
      retries: call.maxRetries,
      minTimeout: 0,
      maxTimeout: 0,
      onFailedAttempt: ({ error, retriesLeft }) =>
        retriesLeft > 0 ? backOff(ctx, call, error) : undefined,
      shouldRetry: () => call.decision?.retry !== undefined,
      // Given all, p-retry adds none to its copy: 0.2 µs a call against 4.3 µs (p-retry 7.1).
      factor: 1,
      maxRetryTime: Number.POSITIVE_INFINITY,
      randomize: false,
      shouldConsumeRetry: () => true,
    });
  } catch (error) {
    if (call.signal?.aborted) throw call.signal.reason;
    throw error;
  }
}

/** Waits what was decided before the next attempt, telling the logs and `onRetry`. */
async function backOff(ctx: CallContext, call: Call, error: Error): Promise<void> {
  const retry = call.decision?.retry;
  if (!retry) return;
  const { delayMs, reason } = retry;
  const status = 'status' in error ? ` (HTTP ${String(error.status)})` : '';
  const { name } = call.operation;
  const line = `${name} attempt ${call.attempts} failed with ${error.name}${status}; retrying in ${delayMs} ms (${reason}).`;
  ctx.log.log('info', line);
  call.notify({ operation: name, attempt: call.attempts, delayMs, reason, error });
  // A 429's wait is the key's cooldown: the quota holds the next attempt for it.
  if (retry.held) call.told = retry.delayMs;
  else await sleep(retry.delayMs, call.signal);
}

/** The headers of one attempt: the client's, the call's own, then `hooks.beforeRequest`'s (never `authorization`). */
function attemptHeaders(
  ctx: CallContext,
  call: Call,
  url: string,
  method: 'GET' | 'POST',
): Record<string, string> {
  const { authorization: _, ...client } = ctx.transport.headers;
  const hook = ctx.settings.hooks.beforeRequest;
  if (!call.headers && !hook) return client;
  const given = { ...client, ...call.headers };
  const headers = new Headers(given);
  ctx.run('hooks.beforeRequest', hook, {
    operation: call.operation.name,
    attempt: call.attempts,
    method,
    url,
    headers,
  });
  // The client's own were checked when it was made; a call's, and a hook's, as they leave.
  let pairs: [string, string][] = [];
  try {
    // As a Headers reads, whatever the hook did to the object's own methods.
    Headers.prototype.forEach.call(headers, (value, name) => pairs.push([name, value]));
  } catch {
    const why = 'hooks.beforeRequest broke the Headers it was given (its prototype)';
    ctx.log.log('error', `${why}: the request leaves with the headers it had before the hook.`);
    pairs = Object.entries(given);
  }
  const sent: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const holds = ctx.redact.holds(name) || ctx.redact.holds(value);
    const reserved = reservedHeader(name) ?? (holds ? 'it holds the API key' : undefined);
    if (!reserved) sent[name.toLowerCase()] = value;
    else ctx.log.log('error', `Header ${JSON.stringify(name)} was left out: ${reserved}.`);
  }
  return sent;
}

/**
 * One attempt: admitted by the quota → sent through openapi-fetch → status and headers observed
 * by the quota → body read → the parsed 2xx body, or a typed error (its decision kept on the call).
 */
async function attempt(ctx: CallContext, call: Call, attemptNumber: number): Promise<Answer> {
  call.decision = undefined;
  const lease = await ctx.quota.admit(call);
  call.told = undefined;
  // Every way out of the attempt ends the lease: one left open would hold the key's budget.
  let ended = false;
  const observe = (observation: Observation, failure?: Lost) => {
    ended = true;
    const { timeoutMs, signal } = call;
    return ctx.quota.observe(lease, observation, timeoutMs, signal?.aborted === true, failure);
  };
  let exchange: Exchange;
  try {
    exchange = ctx.transport.open(call.timeoutMs, call.signal);
  } catch (error) {
    await ctx.quota.release(lease);
    throw error;
  }
  if (ctx.quota.checksLeases) exchange.holds = () => ctx.quota.holds(lease);
  call.attempts = attemptNumber;
  const { hooks } = ctx.settings;
  const seen = hooks.afterResponse !== undefined;
  const timed = seen || ctx.log.enabled('debug');
  const started = timed ? performance.now() : 0;
  // Only a call's own headers, a beforeRequest hook or spans make headers per attempt.
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
        // Nothing left: the turn is asked for again, 100 ms on, for at most maxRetryDelayMs.
        span?.end(undefined, error);
        ended = true;
        await ctx.quota.release(lease);
        exchange.close();
        call.lapsedSince ??= Date.now();
        if (Date.now() - call.lapsedSince > call.maxRetryDelayMs) {
          const why = `every lease lapsed before the request could leave (the quota store's holds() said so) for longer than maxRetryDelayMs (${call.maxRetryDelayMs} ms)`;
          throw new AnimalStoreError(
            `${call.operation.name} was not sent: ${why}. Check the store.`,
          );
        }
        await sleep(BACKOFF_FLOOR_MS, call.signal);
        return await attempt(ctx, call, attemptNumber);
      }
      // No response: it may still have reached the service, so it is counted (and holds the key).
      ctx.lostCause = ctx.redact.error(error);
      call.unanswered = true;
      const timedOutAfter = exchange.timedOut ? call.timeoutMs : undefined;
      await observe({ status: 0 }, { cause: ctx.lostCause, sent: call.sends, timedOutAfter });
      const failure = noResponse(ctx, call, exchange, error);
      if (timed) {
        const why = failure instanceof Error ? failure.name : 'aborted';
        const ms = Math.round(performance.now() - started);
        ctx.log.log('debug', `${call.label} -> no response (${why}) in ${ms} ms`);
      }
      span?.end(undefined, failure);
      throw failure;
    }
    call.unanswered = false;
    const { status } = response;
    // What the response says is recorded before anything else of it is read.
    const timing = readTiming(response.headers, status, Date.now(), sentAt, ctx.clock);
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
    span?.end(status);
    if (timed) {
      const durationMs = performance.now() - started;
      ctx.log.log('debug', `${call.label} -> ${status} in ${Math.round(durationMs)} ms`);
      const info = { operation: call.operation.name, attempt: call.attempts, status, durationMs };
      // A copy of the headers: the hook must not change what the client reads next.
      ctx.run(
        'hooks.afterResponse',
        (given: typeof info) =>
          hooks.afterResponse?.({ ...given, headers: ctx.redact.headers(response.headers, true) }),
        info,
      );
    }
    ctx.saw(timing);
    if (ok) {
      let text: string;
      try {
        text = await ctx.transport.read(exchange, response, ctx.settings.maxResponseBytes);
      } catch (error) {
        if (error instanceof BodyTooLarge) throw tooLarge(call.label, error, status);
        throw noResponse(ctx, call, exchange, error, status);
      }
      const body = parseBody(ctx.redact, call, text, status);
      // Parsing counts against the time limit too.
      if (exchange.timedOut) throw noResponse(ctx, call, exchange, undefined, status);
      return { body, status, headers: response.headers, rateLimit: timing.rateLimit };
    }
    // The status decides the error; a body that breaks off only loses its detail.
    const read: unknown = await ctx.transport
      .read(exchange, response, ctx.settings.maxResponseBytes)
      .catch((error: unknown) => error);
    if (call.signal?.aborted) throw call.signal.reason;
    call.decision = decision;
    throw errorFromResponse({
      status,
      statusText: ctx.redact.text(
        typeof response.statusText === 'string' ? response.statusText : '',
      ),
      headers: ctx.redact.headers(response.headers),
      ...errorBody(ctx.redact, typeof read === 'string' ? read : undefined),
      unread: read instanceof BodyTooLarge ? read.message : undefined,
      rateLimit: timing.rateLimit,
      request: call.label,
      method: call.operation.method,
      // The key's real wait: what was asked, or more after 429s in a row.
      retryAfterMs: timing.retryAfter
        ? decision?.cooldownMs
        : timing.retryAfterTooFar || !decision?.tooLong
          ? undefined
          : decision.cooldownMs,
      askedMs: timing.retryAfter && Math.max(timing.retryAfter.ms, BACKOFF_FLOOR_MS),
      tooLongToWait: decision?.tooLong === true,
      guessed: !timing.retryAfter && !timing.retryAfterTooFar,
      maxRetryDelayMs: ctx.settings.maxRetryDelayMs,
      retriesSpent: call.attempts > call.maxRetries ? call.maxRetries : undefined,
    });
  } finally {
    exchange.close();
    // Failed before its response was told: counted, since the request may have reached the service.
    if (!ended) void observe({ status: 0 });
    await (call.signal ? untilAborted(observed, call.signal) : observed);
  }
}

const situation = (ctx: CallContext, call: Call, lease = '') => ({
  resend: call.operation.resend,
  attempt: call.attempts,
  strikes: ctx.quota.strikes(lease),
  maxRetryDelayMs: ctx.settings.maxRetryDelayMs,
});

/** The error for an attempt without a response, or whose body broke off (`status`); decided on the call. */
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
  if (!placeholder)
    call.decision = decide({ kind: 'no-response', timedOut, status }, situation(ctx, call));
  const cause = ctx.redact.error(error);
  const acted = call.operation.resend ? '' : POSSIBLY_ACTED;
  if (timedOut) {
    return new TimeoutError(
      `${call.label} timed out after ${call.timeoutMs} ms (timeoutMs), reading the body included. Raise timeoutMs if the service is slow.${acted}`,
      { cause },
    );
  }
  const why = (
    cause instanceof Error ? ctx.redact.text(describeFailure(cause)) : 'unknown failure'
  ).replace(/\.+$/, '');
  // A connection never made (refused, a name that does not resolve) carried nothing.
  const sent = !/\((?:ECONNREFUSED|ENOTFOUND|EAI_AGAIN)\)$/.test(why);
  const what =
    status === undefined
      ? `got no response from ${ctx.baseUrl}: ${why}. ${placeholder ? PLACEHOLDER_ADVICE : `Check the network and baseUrl${ctx.inBrowser ? ", and that the service (or your proxy) allows this page's origin (CORS)" : ''}.`}${sent ? acted : ''}`
      : `got HTTP ${status}, but its body broke off: ${why}.${acted}`;
  return new ConnectionError(`${call.label} ${what}`, { cause });
}
