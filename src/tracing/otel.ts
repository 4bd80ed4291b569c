// OpenTelemetry tracing, a chunk loaded only when a tracer provider is passed or registered. It
// speaks to @opentelemetry/api 1.x through its globals and the provider, never importing it.
import type { OperationName, RetryInfo, TracerProviderLike } from '../observe.js';

type Attributes = Record<string, string | number | boolean>;

interface Span {
  setAttribute(key: string, value: string | number | boolean): unknown;
  addEvent(name: string, attributes?: Attributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

interface Context {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): Context;
  deleteValue(key: symbol): Context;
}

interface Tracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: Attributes },
    context?: Context,
  ): Span;
}

interface OtelGlobal {
  context?: { active(): Context; with<T>(context: Context, fn: () => T): T };
}

// Values fixed by @opentelemetry/api 1.x.
const GLOBAL = Symbol.for('opentelemetry.js.api.1');
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

function otelGlobal(): OtelGlobal | undefined {
  return (globalThis as Record<symbol, OtelGlobal | undefined>)[GLOBAL];
}

/** A context for when no context manager is registered: values in a map. */
class PlainContext implements Context {
  constructor(readonly values = new Map<symbol, unknown>()) {}
  getValue(key: symbol): unknown {
    return this.values.get(key);
  }
  setValue(key: symbol, value: unknown): Context {
    return new PlainContext(new Map(this.values).set(key, value));
  }
  deleteValue(key: symbol): Context {
    const values = new Map(this.values);
    values.delete(key);
    return new PlainContext(values);
  }
}

/** Runs `fn` with a span of the SDK's active, so that spans made inside it are its children. */
export type WithinSpan = <T>(fn: () => T) => T;

/** The tracing of one attempt: its HTTP client span, when asked for. */
export interface AttemptTrace {
  within: WithinSpan;
  end(status: number | undefined, error?: unknown): void;
}

/** The tracing of one call: its operation span and, optionally, one HTTP span per attempt. */
export interface CallTrace {
  within: WithinSpan;
  attempt(attempt: number, method: string, url: string): AttemptTrace | undefined;
  /** A retry or a hold, as an event of the operation's span. */
  wait(info: RetryInfo): void;
  end(error?: unknown): void;
}

export interface Tracing {
  start(operation: OperationName, method: string, path: string): CallTrace | undefined;
}

const errorType = (error: unknown): string =>
  error instanceof Error ? error.name : typeof error === 'object' ? 'Error' : String(typeof error);

/** `fn`, made safe: whatever it throws is reported and swallowed. */
function guarded<A extends unknown[], R>(
  report: (error: unknown) => void,
  fn: (...args: A) => R,
): (...args: A) => R | undefined {
  return (...args) => {
    try {
      return fn(...args);
    } catch (error) {
      report(error);
      return undefined;
    }
  };
}

/**
 * Runs `fn` in `context` when a context manager is registered. `fn` sends a request: it runs
 * once, and its outcome is the answer, whatever a broken manager does around it.
 */
function within(
  contexts: OtelGlobal['context'],
  context: Context,
  report: (error: unknown) => void,
): WithinSpan {
  return <T>(fn: () => T): T => {
    if (!contexts) return fn();
    let ran = false;
    let failed = false;
    let outcome: unknown;
    const once = () => {
      if (!ran) {
        ran = true;
        try {
          outcome = fn();
        } catch (error) {
          failed = true;
          outcome = error;
        }
      }
      return outcome;
    };
    try {
      contexts.with(context, once);
    } catch (error) {
      if (!ran) report(error);
    }
    if (!ran) once();
    if (failed) throw outcome;
    return outcome as T;
  };
}

/** Tracing on `provider`; `httpSpans` adds one HTTP client span per attempt; failures go to `report`. */
export function createTracing(
  provider: TracerProviderLike,
  httpSpans: boolean,
  baseUrl: string,
  version: string,
  report: (error: unknown) => void,
): Tracing {
  const tracer = provider.getTracer('@animal-store/sdk', version) as Tracer;
  const base = new URL(baseUrl);
  const port = Number(base.port) || (base.protocol === 'https:' ? 443 : 80);
  return {
    start: guarded(report, (operation, method, path) => {
      const contexts = otelGlobal()?.context;
      const parent = contexts?.active() ?? new PlainContext();
      const span = tracer.startSpan(
        operation,
        {
          kind: SPAN_KIND_INTERNAL,
          attributes: {
            'animal_store.operation': operation,
            'http.request.method': method,
            'url.template': path,
            'server.address': base.hostname,
            'server.port': port,
          },
        },
        parent,
      );
      const active = parent.setValue(SPAN_KEY, span);
      return {
        within: within(contexts, active, report),
        attempt: guarded(report, (attempt, requestMethod, url) => {
          if (!httpSpans) return undefined;
          const attributes: Attributes = {
            'http.request.method': requestMethod,
            'url.full': url,
            'url.template': path,
            'server.address': base.hostname,
            'server.port': port,
          };
          if (attempt > 1) attributes['http.request.resend_count'] = attempt - 1;
          const http = tracer.startSpan(
            `${requestMethod} ${path}`,
            { kind: SPAN_KIND_CLIENT, attributes },
            active,
          );
          return {
            within: within(contexts, active.setValue(SPAN_KEY, http), report),
            end: guarded(report, (status: number | undefined, error?: unknown) => {
              if (status !== undefined) http.setAttribute('http.response.status_code', status);
              const type =
                status !== undefined && status >= 400
                  ? String(status)
                  : error
                    ? errorType(error)
                    : undefined;
              if (type) {
                http.setAttribute('error.type', type);
                http.setStatus({ code: STATUS_ERROR });
              }
              http.end();
            }),
          };
        }),
        wait: guarded(report, (info: RetryInfo) => {
          const attributes: Attributes = {
            'animal_store.attempt': info.attempt,
            'animal_store.wait_ms': info.delayMs,
            'animal_store.reason': info.reason,
          };
          if (info.error) attributes['error.type'] = info.error.name;
          span.addEvent(info.error ? 'retry' : 'hold', attributes);
        }),
        end: guarded(report, (error?: unknown) => {
          if (error !== undefined) {
            span.setAttribute('error.type', errorType(error));
            // As recordException would, but typed by the class, not by an error's `code`.
            if (error instanceof Error) {
              const exception: Attributes = {
                'exception.type': error.name,
                'exception.message': error.message,
              };
              if (error.stack) exception['exception.stacktrace'] = error.stack;
              span.addEvent('exception', exception);
            }
            span.setStatus({
              code: STATUS_ERROR,
              message: error instanceof Error ? error.message : String(errorType(error)),
            });
          }
          span.end();
        }),
      };
    }),
  };
}
