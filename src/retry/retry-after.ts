const DELTA_SECONDS = /^\s*(\d+(?:\.\d+)?)\s*$/;

function parseOne(value: string, nowMs: number): number | undefined {
  const delta = DELTA_SECONDS.exec(value);
  if (delta) return Math.ceil(Number(delta[1]) * 1000);
  // An HTTP-date always names a weekday and GMT; Date.parse alone accepts far too much.
  if (!/GMT\s*$/i.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * Milliseconds to wait according to a `Retry-After` value, given as
 * delta-seconds (`"120"`, also fractional) or an HTTP-date. `undefined` when
 * the value is missing or unusable (negative, garbage): the caller then falls
 * back to other signals instead of giving up retrying. When the header was sent
 * more than once (values joined by commas), the longest wait wins.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const whole = parseOne(value, nowMs);
  if (whole !== undefined) return whole;
  let longest: number | undefined;
  for (const part of splitValues(value)) {
    const ms = parseOne(part, nowMs);
    if (ms !== undefined && (longest === undefined || ms > longest)) longest = ms;
  }
  return longest;
}

// Headers joins repeated fields with ", "; an HTTP-date has a comma of its own after the weekday.
function splitValues(value: string): string[] {
  const parts: string[] = [];
  for (const piece of value.split(',')) {
    const last = parts.length - 1;
    if (last >= 0 && /^\s*[A-Za-z]{3}\s*$/.test(parts[last]!)) parts[last] += `,${piece}`;
    else parts.push(piece);
  }
  return parts;
}
