import pRetry from 'p-retry';
import { AnimalStoreError } from '../errors/AnimalStoreError.js';
import { RequestValidationError } from '../errors/RequestValidationError.js';
import { ResponseValidationError } from '../errors/ResponseValidationError.js';
import { describeIssues } from '../errors/ValidationIssue.js';
import { describeThrown } from '../logger.js';
import type { WithResponse } from '../observe.js';
import {
  checkDuration,
  checkHeaders,
  checkMaxRetries,
  checkSignal,
  describeValue,
  type RequestOptions,
  unknownRequestOptions,
} from '../options.js';
import { sleep } from '../sleep.js';
import type { Tracing } from '../tracing/otel.js';
import { validateInput, validateOutput } from '../validation/validate.js';
import type { Output, SchemaName } from '../validation/verdict.js';
import { type Answer, attempt, plannedWait } from './attempt.js';
import { Call, type CallContext } from './context.js';
import type { Operation } from './operations.js';

/**
 * Runs one call of `operation`: checks the input, runs attempts until one
 * succeeds or a failure is not to be retried, and checks the output. Each
 * attempt is admitted by the key's quota ({@link attempt}); between attempts
 * it waits what the failed one planned, and tells `onRetry`.
 */
export async function runCall<In extends SchemaName, Out extends SchemaName>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  raw: unknown,
  options: RequestOptions,
): Promise<Output<Out>> {
  return (await execute(ctx, operation, raw, options)).data;
}

/** {@link runCall}, with the response the data came from. */
export async function runCallWithResponse<In extends SchemaName, Out extends SchemaName>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  raw: unknown,
  options: RequestOptions,
): Promise<WithResponse<Output<Out>>> {
  const { data, last, attempts } = await execute(ctx, operation, raw, options);
  return {
    data,
    response: {
      status: last.status,
      headers: ctx.scrubHeaders(last.headers),
      rateLimit: last.rateLimit,
      attempts,
    },
  };
}

async function execute<In extends SchemaName, Out extends SchemaName>(
  ctx: CallContext,
  operation: Operation<In, Out>,
  raw: unknown,
  options: RequestOptions,
): Promise<{ data: Output<Out>; last: Answer; attempts: number }> {
  let call: Call<In, Out> | undefined;
  try {
    call = await prepare(ctx, operation, raw, options);
    const tracing = ctx.tracing();
    if (tracing) await startTrace(ctx, call, tracing);
    call.signal?.throwIfAborted();
    const last = await withRetries(ctx, call);
    const { status } = last;
    const name = operation.name;
    const output = await validateOutput(
      operation.checkOutput,
      operation.output,
      last.body,
      name,
      status,
    );
    const issue = operation.checkAnswer?.(call.input, output);
    if (issue) {
      throw new ResponseValidationError(
        `The service's response to ${name} (HTTP ${status}) contradicts the request: ${describeIssues([issue])}.`,
        { issues: [issue], status },
      );
    }
    call.trace?.end();
    return { data: output, last, attempts: call.attempts };
  } catch (error) {
    call?.trace?.end(error);
    ctx.run('hooks.onError', ctx.hooks.onError, {
      operation: operation.name,
      attempt: call?.attempts ?? 0,
      error,
    });
    throw error;
  }
}

/** Starts the call's span; tracing that fails is logged and never fails the call. */
async function startTrace(ctx: CallContext, call: Call, tracing: Promise<Tracing>): Promise<void> {
  try {
    call.trace = (await tracing).start(
      call.operation.name,
      call.operation.method,
      call.operation.path,
    );
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
  if (typeof options !== 'object' || options === null) {
    throw new AnimalStoreError(
      `Invalid ${name} options: expected an object such as { timeoutMs: 5000 }, got ${describeValue(options)}; nothing was sent.`,
    );
  }
  try {
    const unknown = unknownRequestOptions(options);
    if (unknown.length > 0) {
      ctx.warnOnce(`Unknown ${name} options were ignored: ${unknown.join(', ')}.`);
    }
    return new Call(
      ctx,
      operation,
      input,
      options.timeoutMs === undefined
        ? ctx.timeoutMs
        : checkDuration(options.timeoutMs, `${name} option timeoutMs`, 1),
      options.maxRetries === undefined
        ? ctx.maxRetries
        : checkMaxRetries(options.maxRetries, `${name} option maxRetries`),
      checkSignal(options.signal, `${name} option signal`),
      options.headers === undefined
        ? undefined
        : Object.fromEntries(checkHeaders(options.headers, `${name} option headers`)),
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
 * Attempts under the retry policy, on p-retry. The first attempt runs without
 * it: through p-retry, a call cost 5.5–10 µs more (stub fetch, Node 20).
 */
async function withRetries(ctx: CallContext, call: Call): Promise<Answer> {
  const once = () => attempt(ctx, call);
  try {
    try {
      return await once();
    } catch (error) {
      if (!(await backOff(ctx, call, error))) throw error;
    }
    // p-retry asks only while retries are left; backOff waits what was planned.
    return await pRetry(once, {
      retries: call.maxRetries - 1,
      minTimeout: 0,
      maxTimeout: 0,
      shouldRetry: ({ error }) => backOff(ctx, call, error),
    });
  } catch (error) {
    if (call.signal?.aborted) throw call.signal.reason;
    throw error;
  }
}

/** Waits before the next attempt, or returns `false` when the failure is not retried. */
async function backOff(ctx: CallContext, call: Call, error: unknown): Promise<boolean> {
  const wait = plannedWait(error);
  if (!wait || call.attempts > call.maxRetries || !(error instanceof Error)) return false;
  const status = 'status' in error ? ` (HTTP ${String(error.status)})` : '';
  ctx.log.log(
    'info',
    `${call.operation.name} attempt ${call.attempts} failed with ${error.name}${status}; retrying in ${wait.delayMs} ms (${wait.reason}).`,
  );
  call.notify({
    operation: call.operation.name,
    attempt: call.attempts,
    delayMs: wait.delayMs,
    reason: wait.reason,
    error,
  });
  await sleep(wait.delayMs, call.signal);
  return true;
}
