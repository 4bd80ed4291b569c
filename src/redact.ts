// Removing the API key from whatever a server sends back, without changing
// the meaning of anything else, for any key length and any depth of input.

// A short secret counts only between characters that cannot continue a word,
// a path, a header name or a base64 run.
const TOKEN_CHAR = /[A-Za-z0-9._~/+=-]/;

/** Keys this long are redacted wherever they stand; shorter ones only as whole tokens. */
export const LONG_SECRET = 12;

/**
 * `text` with `secret` replaced by `[redacted]`. A short secret is replaced
 * only where it stands as a token of its own (not inside a longer word), so
 * that the key `a` cannot turn `application/json` into nonsense.
 */
export function redact(text: string, secret: string): string {
  if (!secret || !text.includes(secret)) return text;
  if (secret.length >= LONG_SECRET) return text.split(secret).join('[redacted]');
  let out = '';
  let from = 0;
  let at = text.indexOf(secret);
  while (at >= 0) {
    const before = text[at - 1];
    const after = text[at + secret.length];
    if ((before && TOKEN_CHAR.test(before)) || (after && TOKEN_CHAR.test(after))) {
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
 * `headers`, or a copy without the key in any value, and without any header
 * whose name holds it (a name can hold a token only as a long key).
 */
export function redactHeaders(headers: Headers, secret: string): Headers {
  const named = (name: string) => secret.length >= LONG_SECRET && name.includes(secret);
  let leaks = false;
  for (const [name, value] of headers) {
    if (named(name) || redact(value, secret) !== value) leaks = true;
  }
  if (!leaks) return headers;
  const clean = new Headers();
  for (const [name, value] of headers) {
    if (!named(name)) clean.append(name, redact(value, secret));
  }
  return clean;
}

/**
 * `error`, or, when the key shows anywhere in it (message, stack, a string
 * property such as undici's raw `data`, or its causes), a plain `Error` with
 * the redacted message, name and code in its place.
 */
export function redactError(error: unknown, secret: string): unknown {
  if (!leaks(error, secret, 0)) return error;
  const source = error as { message?: unknown; name?: unknown; code?: unknown };
  const clean = new Error(redact(String(source.message ?? error), secret));
  if (typeof source.name === 'string') clean.name = redact(source.name, secret);
  if (typeof source.code === 'string') Object.assign(clean, { code: redact(source.code, secret) });
  return clean;
}

function leaks(value: unknown, secret: string, depth: number): boolean {
  if (typeof value === 'string') return redact(value, secret) !== value;
  if (typeof value !== 'object' || value === null || depth > 4) return false;
  const record = value as Record<string, unknown>;
  for (const name of ['message', 'stack', ...Object.keys(record)]) {
    const child = record[name];
    if (
      typeof child === 'string'
        ? leaks(child, secret, depth)
        : name === 'cause' && leaks(child, secret, depth + 1)
    ) {
      return true;
    }
  }
  return leaks(record.cause, secret, depth + 1);
}
