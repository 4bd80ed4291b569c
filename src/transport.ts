import createClient, { type Client, createQuerySerializer } from 'openapi-fetch';
import type { paths } from '../generated/schema.js';
import {
  ConnectionError,
  describeThrown,
  type Redactor,
  ResponseValidationError,
} from './errors.js';
import type { Operation } from './operations.js';
import { checkErrorBody, REJECT } from './operations.js';
import type { FetchInit, FetchResponse } from './options.js';
import { MAX_TIMER_MS, onAbort } from './timers.js';
import type { WithinSpan } from './tracing/otel.js';
import type { ErrorBody } from './types.js';
import type { Output, SchemaName } from './validation/verdict.js';

/** The headers of one attempt (without `authorization`), once its URL is known: openapi-fetch middleware. */
export type PrepareHeaders = (url: string, method: 'GET' | 'POST') => Record<string, string>;

interface TransportSettings {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch: ((url: string, init: FetchInit) => Promise<FetchResponse>) | undefined;
  readonly headers: Headers;
}

/** What openapi-fetch's `new Request(url, init)` produces here: its init, given the URL. */
interface PlainRequest extends RequestInit {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  prepared?: Record<string, string>;
}
function PlainRequest(url: string, init: PlainRequest): PlainRequest {
  init.url = url;
  return init;
}

/** A body longer than the client reads (`maxResponseBytes`). */
export class BodyTooLarge extends Error {
  constructor(max: number, message = `the body is larger than maxResponseBytes (${max} bytes)`) {
    super(message);
  }
}

// openapi-fetch returns a 204 without touching its body: it is handed this stand-in, and the SDK
// reads the real response itself (status and headers first, then the body, within the time limit).
let standIn: Response | undefined;
let decoder: TextDecoder | undefined;

/** The request's lease lapsed before it left (its process was frozen, say): nothing was sent. */
export class LeaseLapsed extends Error {}

// Controllers of attempts that ended with their body read, with the attempts each served, used
// again: on Node 20 a new signal costs 1.7 µs to make (a getPet on a stub fetch, medians of 10
// runs: 29.3 µs, 27.6 µs with them reused). The platform's fetch leaves a listener on the
// signal until its request is collected (a no-op once it completed), so each serves a few
// attempts only. Another fetch may keep what it adds: it always gets a new one.
const spare: [AbortController, number][] = [];

// The platform's fetch as this module found it; one put in its place since (a test double, a
// wrapper) is treated as the fetch option is.
const platformFetch = globalThis.fetch;

interface Kept {
  timer: ReturnType<typeof setTimeout>;
  made: typeof setTimeout;
  ms: number;
  fire: (() => void) | undefined;
  fired?: true;
}

// Node's timers of ended attempts, idle (unref'd: they hold no process open), restarted by
// `refresh()` before they fire: set and cleared alone in its list, a new one cost about 2 µs a
// getPet on a stub fetch (CPU time, medians of 10 alternating runs, Node 20). Only the platform's
// own (a `Timeout`: never a fake timer's, which a test counts and runs) made by the `setTimeout`
// now in place (not a real one under fake timers) is used again.
const kept: Kept[] = [];

/** Calls `fire` after `ms`; the returned function stops that (once, or more: the same). */
function alarm(ms: number, fire: () => void): () => void {
  const made = globalThis.setTimeout;
  let one = kept.pop();
  if (one && !one.fired && one.ms === ms && one.made === made) {
    one.fire = fire;
    one.timer.ref();
    one.timer.refresh();
  } else {
    // Another is left to fire idle, once.
    const slot = { made, ms, fire } as Kept;
    slot.timer = setTimeout(() => {
      slot.fired = true;
      slot.fire?.();
    }, ms);
    const { timer } = slot;
    // A browser's timer is a number, a fake timer's an object: cleared, never used again.
    const node = timer as Partial<typeof timer> | null;
    if (
      node?.constructor?.name !== 'Timeout' ||
      typeof node.refresh !== 'function' ||
      typeof node.ref !== 'function' ||
      typeof node.unref !== 'function'
    ) {
      return () => clearTimeout(timer);
    }
    one = slot;
  }
  const mine = one;
  return () => {
    if (mine.fire !== fire) return;
    mine.fire = undefined;
    if (mine.fired || kept.length >= 16) return clearTimeout(mine.timer);
    mine.timer.unref();
    kept.push(mine);
  };
}

/** One attempt's exchange: the timer that bounds it (body included), the signal, the response. */
export class Exchange {
  readonly #held: [AbortController, number];
  readonly #stopTimer: (() => void) | undefined;
  readonly #unlisten: (() => void) | undefined;
  // Any fetch may ignore the signal (a test double, a polyfill): never wait for it past an abort.
  #stop: ((reason: unknown) => void) | undefined;
  #stopped: [unknown] | undefined;
  response: Response | undefined;
  timedOut = false;
  /** Runs the fetch with the attempt's span active, when traced. */
  within: WithinSpan | undefined;
  /** Whether the attempt's lease still holds, asked as the request leaves. */
  holds: (() => boolean) | undefined;

  /** `platform`: the platform's fetch, held to a stated length, whose signals are used again. */
  constructor(
    timeoutMs: number,
    signal: AbortSignal | undefined,
    readonly platform: boolean,
  ) {
    this.#held = (platform && spare.pop()) || [new AbortController(), 0];
    // A timeout beyond what setTimeout can hold means "no timeout".
    this.#stopTimer =
      timeoutMs <= MAX_TIMER_MS
        ? alarm(timeoutMs, () => {
            this.timedOut = true;
            this.#abort(new Error(`timed out after ${timeoutMs} ms`));
          })
        : undefined;
    const aborted = () => this.#abort(signal?.reason, new DOMException('aborted', 'AbortError'));
    if (signal?.aborted) aborted();
    else if (signal) this.#unlisten = onAbort(signal, aborted);
  }

  get signal(): AbortSignal {
    return this.#held[0].signal;
  }

  /** The request is aborted with a reason of its own: the platform reads the one it is given, whose getters may throw. */
  #abort(reason: unknown, own: unknown = reason): void {
    this.#held[0].abort(own);
    this.#stopped = [reason];
    this.#stop?.(reason);
  }

  /** `promise`, or the abort of this attempt, whichever comes first. */
  race<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#stopped) reject(this.#stopped[0]);
      this.#stop = reject;
      promise.then(resolve, reject);
    });
  }

  close(): void {
    this.#stopTimer?.();
    this.#unlisten?.();
    const held = this.#held;
    // Once the platform's request is over (its body read) unaborted; once only: the response goes.
    const over = this.platform && this.response?.bodyUsed && !held[0].signal.aborted;
    if (over && ++held[1] < 8 && spare.length < 16) spare.push(held);
    this.response = undefined;
  }
}

/** The request layer: openapi-fetch builds each request and hands it to this fetch, which adds the key. */
export class Transport {
  readonly #api: Client<paths>;
  readonly #dispatch: (request: Request) => Promise<Response>;
  readonly #custom: boolean;
  readonly headers: Readonly<Record<string, string>>;

  constructor(settings: TransportSettings) {
    const authorization = `Bearer ${settings.apiKey}`;
    const custom = settings.fetch;
    this.#custom = custom !== undefined;
    // No deflate: undici inflates it without backpressure, past the size cap.
    const headers = {
      'accept-encoding': 'gzip, br',
      ...Object.fromEntries(settings.headers),
      authorization,
    };
    const jsonHeaders = { ...headers, 'content-type': 'application/json' };
    this.headers = headers;
    // Bearer injection where every request leaves; a caller's fetch gets the URL and a plain init.
    this.#dispatch = (request: Request) => {
      const plain = request as unknown as PlainRequest;
      const json = plain.body !== undefined;
      // Headers of its own: what a fetch changes in them must not reach the next request.
      plain.headers = plain.prepared
        ? {
            ...plain.prepared,
            ...(json && { 'content-type': 'application/json' }),
            authorization,
          }
        : { ...(json ? jsonHeaders : headers) };
      return custom
        ? (custom(plain.url, {
            method: plain.method,
            headers: plain.headers,
            body: plain.body ?? null,
            signal: plain.signal as AbortSignal,
            redirect: 'manual',
          }) as Promise<Response>)
        : globalThis.fetch(plain.url, plain);
    };
    this.#api = createClient<paths>({
      baseUrl: settings.baseUrl,
      // Built once: given options instead, openapi-fetch builds one per call.
      querySerializer: createQuerySerializer(),
      // A plain holder: no Request built by openapi-fetch and again by fetch().
      Request: PlainRequest as unknown as typeof Request,
      // A redirect is an answer, never followed (a POST must not be replayed elsewhere).
      redirect: 'manual',
    });
  }

  open(timeoutMs: number, signal: AbortSignal | undefined): Exchange {
    return new Exchange(timeoutMs, signal, !this.#custom && globalThis.fetch === platformFetch);
  }

  /** Sends one request; resolves to its response as soon as the headers arrived. */
  async send<In extends SchemaName, Out extends SchemaName>(
    operation: Operation<In, Out>,
    input: Output<In>,
    exchange: Exchange,
    prepare?: PrepareHeaders,
  ): Promise<Response> {
    const fetch = async (request: Request) => {
      if (exchange.holds?.() === false) throw new LeaseLapsed();
      const { within } = exchange;
      let response: Response;
      try {
        response = await (within ? within(() => this.#dispatch(request)) : this.#dispatch(request));
      } catch (error) {
        // openapi-fetch reads a property of what was thrown (a bare null would fail there), and
        // the error says what it was.
        if (error instanceof Error) throw error;
        throw new TypeError(`fetch rejected with ${describeThrown(error).slice(0, 200)}`);
      }
      // `Response.error()`, or a custom fetch that resolved something else.
      if (response?.type === 'error')
        throw new TypeError('fetch failed (a network error response)');
      const headers = (response as Partial<Response> | undefined)?.headers;
      const status = response?.status;
      if (
        !Number.isInteger(status) ||
        !(status >= 0 && status < 1000) ||
        typeof headers?.get !== 'function' ||
        typeof headers.forEach !== 'function'
      ) {
        throw new TypeError('fetch resolved something that is not a Response');
      }
      if (response.redirected === true) {
        throw new ConnectionError(
          `The fetch option followed a redirect (to ${String(response.url)}): pass init.redirect on as given. The request and the key may have reached that address.`,
        );
      }

      exchange.response = response;
      standIn ??= new Response(null, { status: 204 });
      return standIn;
    };
    const { signal } = exchange;
    const init = prepare
      ? {
          signal,
          fetch,
          middleware: [
            {
              onRequest: ({ request }: { request: Request }) => {
                const plain = request as unknown as PlainRequest;
                plain.prepared = prepare(plain.url, plain.method);
                return undefined;
              },
            },
          ],
        }
      : { signal, fetch };
    await exchange.race(operation.send(this.#api, input, init));
    return exchange.response as Response;
  }

  /** Reads the body as text within the time limit; past `maxBytes` decoded, {@link BodyTooLarge}. */
  async read(exchange: Exchange, response: Response, maxBytes: number): Promise<string> {
    // Another fetch's headers may throw, or give what is no text: read as absent.
    const header = (name: string) => {
      try {
        const value = response.headers.get(name);
        return typeof value === 'string' ? value : null;
      } catch {
        return null;
      }
    };
    const encoding = header('content-encoding');
    if (encoding !== null && /deflate/i.test(encoding)) {
      response.body?.cancel().catch(() => undefined);
      const why = 'the body was not read: it is deflate-encoded, which the client did not ask for';
      throw new BodyTooLarge(maxBytes, why);
    }
    const length = header('content-length');
    // Only the platform's fetch is held to a stated length (uncompressed); another could lie.
    if (exchange.platform && length !== null && Number(length) <= maxBytes && encoding === null) {
      return exchange.race(response.text());
    }
    const body = response.body;
    // No body, or another fetch's that is no web stream (node-fetch's).
    if (typeof body?.getReader !== 'function') {
      const text = await exchange.race(response.text());
      if (new TextEncoder().encode(text).byteLength > maxBytes) throw new BodyTooLarge(maxBytes);
      return text;
    }
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for (;;) {
        const { done, value } = await exchange.race(reader.read());
        if (done) break;
        // Another fetch's stream may give strings: counted as nothing, they would pass any cap.
        if (!ArrayBuffer.isView(value)) throw new TypeError('the body stream gave no bytes');
        size += value.byteLength;
        if (size > maxBytes) throw new BodyTooLarge(maxBytes);
        chunks.push(value);
      }
    } catch (error) {
      reader.cancel().catch(() => undefined);
      throw error;
    }
    decoder ??= new TextDecoder();
    if (chunks.length === 1) return decoder.decode(chunks[0]);
    const whole = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      whole.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return decoder.decode(whole);
  }
}

/**
 * An error response's body when it is the spec's `Error`, and its text without the key (JSON
 * re-serialised, so an escaped key is redacted too); JSON nested too deep to walk is dropped.
 */
export function errorBody(
  redact: Redactor,
  raw: string | undefined,
): { body: ErrorBody | undefined; text?: string; rawBody?: string } {
  if (raw === undefined || raw === '') {
    return { body: undefined, ...(raw === '' && { text: '', rawBody: '' }) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    const clean = redact.text(raw);
    return { body: undefined, text: clean, rawBody: clean };
  }
  if (nestedDeeperThan(parsed, 64))
    return { body: undefined, text: '(JSON nested too deep to show)' };
  const clean = redact.json(parsed);
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

export function tooLarge(
  label: string,
  error: BodyTooLarge,
  status: number,
): ResponseValidationError {
  const advice = error.message.includes('deflate')
    ? ''
    : " Reading stopped there: raise maxResponseBytes if the service's answers are this large.";
  return new ResponseValidationError(
    `The service's response to ${label} (HTTP ${status}): ${error.message}.${advice}`,
    { issues: [{ path: [], code: 'too_big', message: error.message }], status },
  );
}

/** The parsed body; `call.label` is built only for the error. */
export function parseBody(
  redact: Redactor,
  call: { readonly label: string },
  text: string,
  status: number,
): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const excerpt = redact.text(text).slice(0, 80);
    throw new ResponseValidationError(
      `The service's response to ${call.label} (HTTP ${status}) is not JSON: ${text ? JSON.stringify(excerpt) : 'the body is empty'}.`,
      {
        issues: [{ path: [], code: 'invalid_json', message: 'the body is not valid JSON' }],
        status,
        // JSON.parse quotes the start of the body in its message.
        cause: redact.error(cause),
      },
    );
  }
}

// undici says only "fetch failed" and keeps the reason (ECONNREFUSED…) in `cause`.
export function describeFailure(error: Error): string {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause?.code ?? cause?.message;
  // TLS spoken to a server that answers in plain HTTP (a local mock at https://).
  const plain = detail === 'ERR_SSL_WRONG_VERSION_NUMBER' ? ': is it http://?' : '';
  return typeof detail === 'string' && detail
    ? `${error.message} (${detail}${plain})`
    : error.message;
}
