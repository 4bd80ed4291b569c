// Keeping the API key out of everything the SDK says: removing it from
// whatever a server sends back, without changing the meaning of anything
// else, for any key length and any depth of input; and the logger, whose
// every line goes through that.

// A short secret counts only between characters that cannot continue a word,
// a path, a header name or a base64 run (an `=` before it, or a `.` or `,`
// that ends a sentence after it, do not).
const TOKEN_CHAR = /[A-Za-z0-9._~/+=-]/;

/** Keys this long are redacted wherever they stand; shorter ones only as whole tokens. */
export const LONG_SECRET = 12;

/**
 * `text` with `secret` replaced by `[redacted]`. A short secret is replaced
 * only where it stands as a token of its own (not inside a longer word), so
 * that the key `a` cannot turn `application/json` into nonsense.
 */
export function redact(text: string, secret: string): string {
  // Quoted as JSON (`"` and `\\` escaped), the key must go as well.
  if (/["\\]/.test(secret)) text = redactOne(text, JSON.stringify(secret).slice(1, -1));
  return redactOne(text, secret);
}

function redactOne(text: string, secret: string): string {
  if (!secret || !text.includes(secret)) return text;
  if (secret.length >= LONG_SECRET) return text.split(secret).join('[redacted]');
  let out = '';
  let from = 0;
  let at = text.indexOf(secret);
  while (at >= 0) {
    // `key=abc123` assigns it, and `abc123.` or `abc123,` ends a sentence or an
    // item: the key still stands alone there.
    const before = text[at - 1];
    const end = at + secret.length;
    const after = /[.,]/.test(text[end] ?? '') ? text[end + 1] : text[end];
    if (
      (before && before !== '=' && TOKEN_CHAR.test(before)) ||
      (after && TOKEN_CHAR.test(after))
    ) {
      at = text.indexOf(secret, at + 1);
      continue;
    }
    out += `${text.slice(from, at)}[redacted]`;
    from = at + secret.length;
    at = text.indexOf(secret, from);
  }
  return out + text.slice(from);
}

/**
 * A parsed JSON value with `secret` redacted from every string and property
 * name, walked without recursion (a body nested ten thousand deep cannot
 * overflow the stack). Returns `value` itself, changed in place.
 */
export function redactJson(value: unknown, secret: string): unknown {
  if (typeof value === 'string') return redact(value, secret);
  const pending: object[] = [];
  if (typeof value === 'object' && value !== null) pending.push(value);
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    const record = node as Record<string, unknown>;
    for (const name of Object.keys(record)) {
      let child = record[name];
      if (typeof child === 'string') child = redact(child, secret);
      else if (typeof child === 'object' && child !== null) pending.push(child);
      const clean = redact(name, secret);
      if (clean !== name) delete record[name];
      record[clean] = child;
    }
  }
  return value;
}

/**
 * `headers`, or (when it holds the key, or `copy` asks) a copy without the
 * key in any value, and without any header whose name holds it (a name can
 * hold a token only as a long key).
 */
export function redactHeaders(headers: Headers, secret: string, copy = false): Headers {
  // Header names arrive lowercased.
  const named = (name: string) =>
    secret.length >= LONG_SECRET && name.includes(secret.toLowerCase());
  let leaks = false;
  headers.forEach((value, name) => {
    if (named(name) || redact(value, secret) !== value) leaks = true;
  });
  if (!leaks && !copy) return headers;
  const clean = new Headers();
  headers.forEach((value, name) => {
    if (!named(name)) clean.append(name, redact(value, secret));
  });
  return clean;
}

/**
 * An error of the SDK's own, with the key taken out of its message, stack and
 * cause wherever a message quoted a value that held it (an option given the
 * key by mistake, say).
 */
export function scrubThrown<E>(error: E, secret: string): E {
  if (!secret || typeof error !== 'object' || error === null || isClean(error, secret)) {
    return error;
  }
  const own = error as { message?: unknown; stack?: unknown; cause?: unknown };
  for (const key of ['message', 'stack'] as const) {
    const value = own[key];
    if (typeof value === 'string') {
      Object.defineProperty(error, key, {
        value: redact(value, secret),
        writable: true,
        configurable: true,
      });
    }
  }
  if (own.cause !== undefined) {
    Object.defineProperty(error, 'cause', {
      value: redactError(own.cause, secret),
      writable: true,
      configurable: true,
    });
  }
  return error;
}

/**
 * `error`, or, when it cannot be shown free of the key (the key in any string
 * reachable from it, a property name, a function's name, a getter that
 * throws, a custom inspection, or more than can be walked), a plain `Error`
 * with the redacted message, name and code in its place.
 */
export function redactError(error: unknown, secret: string): unknown {
  if (isClean(error, secret)) return error;
  const source = error as { message?: unknown; name?: unknown; code?: unknown };
  let message: string;
  try {
    message = typeof source.message === 'string' ? source.message : 'an error';
  } catch {
    message = 'an error';
  }
  const clean = new Error(redact(message, secret));
  if (typeof source.name === 'string') clean.name = redact(source.name, secret);
  if (typeof source.code === 'string') Object.assign(clean, { code: redact(source.code, secret) });
  return clean;
}

const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const MOST_NODES = 2000;

/** Whether nothing reachable from `value` holds the key; walked without recursion. */
function isClean(value: unknown, secret: string): boolean {
  const dirty = (text: string) => redact(text, secret) !== text;
  const seen = new Set<object>();
  const pending: unknown[] = [value];
  try {
    for (let node = pending.pop(), count = 0; count < MOST_NODES; node = pending.pop(), count++) {
      if (typeof node === 'string') {
        if (dirty(node)) return false;
      } else if (typeof node === 'function') {
        if (dirty(node.name)) return false;
      } else if (typeof node === 'object' && node !== null && !seen.has(node)) {
        seen.add(node);
        if (INSPECT in node) return false;
        for (const key of Reflect.ownKeys(node)) {
          if (typeof key === 'string' ? dirty(key) : dirty(String(key.description))) return false;
          pending.push((node as Record<PropertyKey, unknown>)[key]);
        }
      }
      if (pending.length === 0) return true;
    }
  } catch {
    // A getter or a proxy that throws: nothing can be shown of it safely.
  }
  return false;
}

/** How much the client logs. Each level includes the ones before it. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/** Where log lines go; `console` fits. */
export interface Logger {
  /** Failures the call survived: a store that could not record, a hook that threw. */
  error(message: string): void;
  /** Something to fix: an unknown option, headers that could not be used. */
  warn(message: string): void;
  /** One line per retry and per hold. */
  info(message: string): void;
  /** One line per request. */
  debug(message: string): void;
}

const RANK: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 };

/** A leveled logger that prefixes its lines and scrubs `secret` from them. */
export class LevelLogger {
  readonly #rank: number;
  readonly #sink: Logger;
  readonly #secret: string;

  constructor(level: LogLevel, sink: Logger, secret: string) {
    this.#rank = RANK[level];
    this.#sink = sink;
    this.#secret = secret;
  }

  enabled(level: Exclude<LogLevel, 'off'>): boolean {
    return this.#rank >= RANK[level];
  }

  log(level: Exclude<LogLevel, 'off'>, message: string): void {
    if (!this.enabled(level)) return;
    const line = `[animal-store] ${message}`;
    try {
      this.#sink[level](redact(line, this.#secret));
    } catch {
      // A logger that throws must not break a call, nor what the call guarantees.
    }
  }
}

/** Checks a `logLevel` option. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && Object.hasOwn(RANK, value);
}

/** What was thrown, as text for a log line; never throws itself, whatever was thrown. */
export function describeThrown(thrown: unknown): string {
  try {
    return thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  } catch {
    return `a value of type ${typeof thrown}`;
  }
}
