import { AnimalStoreError } from '../errors/AnimalStoreError.js';
import { ConnectionError } from '../errors/ConnectionError.js';
import { errorFromResponse } from '../errors/from-response.js';
import { ResponseValidationError } from '../errors/ResponseValidationError.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import { describeThrown } from '../logger.js';
import type { RetryReason } from '../options.js';
import type { Observation } from '../quota/store.js';
import {
  BACKOFF_FLOOR_MS,
  backoffDelay,
  DISBELIEVED_COOLDOWN_MS,
  type RateLimitInfo,
  readTiming,
} from '../timing.js';
import type { AttemptTrace } from '../tracing/otel.js';
import { waitToTake } from '../waits.js';
import type { Call, CallContext } from './context.js';
import { BodyTooLarge, type Exchange, type PrepareHeaders } from './transport.js';

/** A wait before the next attempt, decided when an attempt failed. */
export interface PlannedWait {
  readonly delayMs: number;
  readonly reason: RetryReason;
}

// The wait each failure calls for, decided once where the failure is known.
const plans = new WeakMap<object, PlannedWait>();

/** The wait planned for a failed attempt's error; `undefined`: not to be retried. */
export function plannedWait(error: unknown): PlannedWait | undefined {
  return typeof error === 'object' && error !== null ? plans.get(error) : undefined;
}

function plan<E extends Error>(error: E, wait: PlannedWait | undefined): E {
  if (wait) plans.set(error, wait);
  return error;
}

/** A back-off wait, when the operation may be resent after this failure. */
function backoffFor(ctx: CallContext, call: Call, reason: RetryReason): PlannedWait | undefined {
  if (!call.operation.resend) return undefined;
  const delayMs = waitToTake(backoffDelay(call.attempts, ctx.random), false, ctx.maxRetryDelayMs);
  return delayMs === undefined ? undefined : { delayMs, reason };
}

/** The error for an attempt that got no response, or (`status`) whose body did not arrive. */
// `.example` is reserved (RFC 2606): the built-in environments' hosts are
// placeholders until the interface names real ones.
const placeholderHost = (baseUrl: string) => /\.example\.?$/i.test(new URL(baseUrl).hostname);
const PLACEHOLDER_ADVICE =
  'This host is a placeholder: pass baseUrl (or ANIMAL_STORE_BASE_URL) with the address your account was given.';

function noResponse(
  ctx: CallContext,
  call: Call,
  exchange: Exchange,
  error: unknown,
  status?: number,
): unknown {
  if (call.signal?.aborted) return call.signal.reason;
  if (error instanceof AnimalStoreError) return error;
  if (exchange.timedOut) {
    return plan(
      new TimeoutError(
        `${call.label} timed out after ${call.timeoutMs} ms (timeoutMs), reading the body included. Raise timeoutMs if the service is slow.`,
        { cause: ctx.scrubError(error) },
      ),
      backoffFor(ctx, call, 'timeout'),
    );
  }
  const cause = ctx.scrubError(error);
  const why = (
    cause instanceof Error ? ctx.scrub(describeFailure(cause)) : 'unknown failure'
  ).replace(/\.+$/, '');
  // Nothing answers at a placeholder: retrying it only delays the advice.
  const placeholder = status === undefined && placeholderHost(ctx.baseUrl);
  const what =
    status === undefined
      ? `got no response from ${ctx.baseUrl}: ${why}. ${placeholder ? PLACEHOLDER_ADVICE : 'Check the network and baseUrl.'}`
      : `got HTTP ${status}, but its body broke off: ${why}.${call.operation.resend ? '' : ' The service may have acted on the request: check before sending it again.'}`;
  return plan(
    new ConnectionError(`${call.label} ${what}`, { cause }),
    placeholder ? undefined : backoffFor(ctx, call, 'connection-error'),
  );
}

/** A 2xx answer: its parsed body, and what the response said besides. */
export interface Answer {
  readonly body: unknown;
  readonly status: number;
  readonly headers: Headers;
  readonly rateLimit: RateLimitInfo | undefined;
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
 * One attempt, top to bottom: be admitted by the quota → send through
 * openapi-fetch → read status and headers → let the quota observe them and
 * decide whether a failure is retried → read the body → the parsed 2xx body,
 * or a typed error carrying its planned wait.
 */
export async function attempt(ctx: CallContext, call: Call): Promise<Answer> {
  const lease = await ctx.quota.admit(call);
  // Every way out of the attempt ends the lease; one left open would hold
  // the key's budget for every client that shares it.
  let ended = false;
  const observe = (observation: Observation) => {
    ended = true;
    return ctx.quota.observe(lease, observation, call.timeoutMs);
  };
  call.attempts++;
  const exchange = ctx.transport.open(call.timeoutMs, call.signal);
  const { hooks } = ctx;
  const seen = hooks.afterResponse !== undefined;
  // Timed only when someone reads the duration (performance.now() may be 0
  // under fake timers, so it cannot say whether it was read).
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
    try {
      response = await ctx.transport.send(call.operation, call.input, exchange, prepare);
    } catch (error) {
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
    const timing = readTiming(response.headers, status, Date.now());
    let wait: PlannedWait | undefined;
    let retryAfterMs: number | undefined;
    if (status === 429) {
      const asked = timing.retryAfter;
      retryAfterMs = asked?.ms;
      // Never sooner than the back-off floor, even for `Retry-After: 0`. A
      // wait of more than a day is not believed, but the service asked for a
      // long pause: the key cools down for a minute and this call is not sent
      // again, since sending soon after such an answer risks the key.
      const delayMs = timing.retryAfterTooFar
        ? DISBELIEVED_COOLDOWN_MS
        : Math.max(BACKOFF_FLOOR_MS, asked?.ms ?? backoffDelay(call.attempts, ctx.random));
      const take = timing.retryAfterTooFar
        ? undefined
        : waitToTake(delayMs, asked !== undefined, ctx.maxRetryDelayMs);
      if (take !== undefined) wait = { delayMs: take, reason: asked?.source ?? 'rate-limited' };
      observed = observe({ status, window: timing.window, cooldownMs: delayMs });
    } else {
      observed = observe({ status, window: timing.window });
      if (status >= 500) wait = backoffFor(ctx, call, 'server-error');
    }
    ctx.saw(timing);
    if (status >= 200 && status < 300) {
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
    throw plan(
      errorFromResponse({
        status,
        statusText: ctx.scrub(typeof response.statusText === 'string' ? response.statusText : ''),
        headers: ctx.scrubHeaders(response.headers),
        ...errorBody(ctx, text),
        rateLimit: timing.rateLimit,
        request: call.label,
        method: call.operation.method,
        retryAfterMs,
        tooLongToWait:
          status === 429 &&
          (timing.retryAfterTooFar || (retryAfterMs !== undefined && wait === undefined)),
        maxRetryDelayMs: ctx.maxRetryDelayMs,
      }),
      wait,
    );
  } finally {
    exchange.close();
    // Failed before its response was told (a response-like object that broke
    // on reading): counted, since the request may have reached the service.
    if (!ended) void observe({ status: 0 });
    // The store learns of the response while its body is read, and has
    // learnt before the call goes on (to a retry, say).
    await observed;
  }
}

/**
 * An error response's body (its JSON without the key, else its redacted text)
 * and the text that messages quote. JSON nested deeper than anyone's code walks
 * safely (`JSON.stringify` of the error must not overflow the stack) is dropped.
 */
function errorBody(
  ctx: CallContext,
  raw: string | undefined,
): { body: unknown; text?: string; rawBody?: string } {
  if (raw === undefined || raw === '') {
    return { body: undefined, ...(raw === '' && { text: '', rawBody: '' }) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    const clean = ctx.scrub(raw);
    return { body: clean, text: clean, rawBody: clean };
  }
  if (nestedDeeperThan(parsed, 64))
    return { body: undefined, text: '(JSON nested too deep to show)' };
  // Quoted as parsed, so that an escaped key (\u0073k_…) is redacted too.
  const body = ctx.scrubJson(parsed);
  const text = JSON.stringify(body);
  return { body, text, rawBody: text };
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
