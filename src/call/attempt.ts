import { AnimalStoreError } from '../errors/AnimalStoreError.js';
import { ConnectionError } from '../errors/ConnectionError.js';
import { errorFromResponse } from '../errors/from-response.js';
import { ResponseValidationError } from '../errors/ResponseValidationError.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import type { RetryReason } from '../options.js';
import { BACKOFF_FLOOR_MS, backoffDelay, readTiming } from '../timing.js';
import { waitToTake } from '../waits.js';
import type { Call, CallContext } from './context.js';
import { BodyTooLarge, type Exchange } from './transport.js';

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
        { cause: error },
      ),
      backoffFor(ctx, call, 'timeout'),
    );
  }
  const cause = ctx.scrubError(error);
  const why = cause instanceof Error ? ctx.scrub(describeFailure(cause)) : 'unknown failure';
  const what =
    status === undefined
      ? `got no response from ${ctx.baseUrl}: ${why}. Check the network and baseUrl.`
      : `got HTTP ${status}, but its body broke off: ${why}.${call.operation.resend ? '' : ' The service may have acted on the request: check before sending it again.'}`;
  return plan(
    new ConnectionError(`${call.label} ${what}`, { cause }),
    backoffFor(ctx, call, 'connection-error'),
  );
}

/**
 * One attempt, top to bottom: be admitted by the quota → send through
 * openapi-fetch → read status and headers → let the quota observe them and
 * decide whether a failure is retried → read the body → the parsed 2xx body,
 * or a typed error carrying its planned wait.
 */
export async function attempt(
  ctx: CallContext,
  call: Call,
): Promise<{ body: unknown; status: number }> {
  const lease = await ctx.quota.admit(call);
  call.attempts++;
  const exchange = ctx.transport.open(call.timeoutMs, call.signal);
  const started = ctx.log.enabled('debug') ? performance.now() : 0;
  try {
    let response: Response;
    try {
      response = await ctx.transport.send(call.operation, call.input, exchange);
    } catch (error) {
      // No response (a timeout, an abort, a connection lost): the request may
      // still have reached the service and been counted, so it is counted.
      await ctx.quota.observe(lease, { status: 0 });
      throw noResponse(ctx, call, exchange, error);
    }
    const { status } = response;
    if (started) {
      ctx.log.log(
        'debug',
        `${call.label} -> ${status} in ${Math.round(performance.now() - started)} ms`,
      );
    }
    const timing = readTiming(response.headers, status, Date.now());
    let wait: PlannedWait | undefined;
    let retryAfterMs: number | undefined;
    if (status === 429) {
      const asked = timing.retryAfter;
      retryAfterMs = asked?.ms;
      // Never sooner than the back-off floor, even for `Retry-After: 0`.
      const delayMs = Math.max(
        BACKOFF_FLOOR_MS,
        asked?.ms ?? backoffDelay(call.attempts, ctx.random),
      );
      const take = waitToTake(delayMs, asked !== undefined, ctx.maxRetryDelayMs);
      if (take !== undefined) wait = { delayMs: take, reason: asked?.source ?? 'rate-limited' };
      await ctx.quota.observe(lease, { status, window: timing.window, cooldownMs: delayMs });
    } else {
      const blind = !timing.rateLimitHeaders;
      await ctx.quota.observe(lease, { status, window: timing.window, blind });
      if (status >= 500) wait = backoffFor(ctx, call, 'server-error');
    }
    ctx.saw(timing);
    if (response.ok) {
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
      return { body, status };
    }
    // The status decides the error; a body that breaks off only loses its detail.
    const text = await ctx.transport
      .read(exchange, response, ctx.maxResponseBytes)
      .catch(() => undefined);
    if (call.signal?.aborted) throw call.signal.reason;
    throw plan(
      errorFromResponse({
        status,
        statusText: ctx.scrub(response.statusText),
        headers: ctx.scrubHeaders(response.headers),
        ...errorBody(ctx, text),
        rateLimit: timing.rateLimit,
        request: call.label,
        retryAfterMs,
        tooLongToWait: status === 429 && retryAfterMs !== undefined && wait === undefined,
        maxRetryDelayMs: ctx.maxRetryDelayMs,
      }),
      wait,
    );
  } finally {
    exchange.close();
  }
}

/**
 * An error response's body (its JSON without the key, else its redacted text)
 * and the text that messages quote. JSON nested deeper than anyone's code walks
 * safely (`JSON.stringify` of the error must not overflow the stack) is dropped.
 */
function errorBody(ctx: CallContext, raw: string | undefined): { body: unknown; text?: string } {
  if (raw === undefined || raw === '') return { body: undefined, ...(raw === '' && { text: '' }) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    const clean = ctx.scrub(raw);
    return { body: clean, text: clean };
  }
  if (nestedDeeperThan(parsed, 64))
    return { body: undefined, text: '(JSON nested too deep to show)' };
  // Quoted as parsed, so that an escaped key (\u0073k_…) is redacted too.
  const body = ctx.scrubJson(parsed);
  return { body, text: JSON.stringify(body) };
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
