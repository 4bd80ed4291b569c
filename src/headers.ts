import { parseList } from './structured-fields.js';

// Everything the SDK reads about time from a response, as pure functions of
// the headers and a clock reading: the rate-limit window in any dialect,
// Retry-After and the server's clock (Date). Nothing here keeps state.

/**
 * The rate-limit state a response reported: through its `X-RateLimit-*`
 * headers, or the IETF `RateLimit` fields where those are absent.
 */
export interface RateLimitInfo {
  /** Request limit that applies (`X-RateLimit-Limit`). */
  readonly limit: number;
  /** Requests left (`X-RateLimit-Remaining`). */
  readonly remaining: number;
  /** When the limit resets (`X-RateLimit-Reset`), on this machine's clock. */
  readonly resetAt: Date;
}

/** A rate-limit window as the quota needs it: clock-free, so that any process can adopt it. */
export interface WindowReport {
  readonly limit: number;
  readonly remaining: number;
  /** The reset as a Unix time in whole seconds: with `limit`, it names the window. */
  readonly resetId: number;
  /**
   * The reset was sent as seconds until it, so `resetId` is an estimate: the
   * report belongs to the window of its limit still known, if any.
   */
  readonly approximate?: boolean | undefined;
  /** Milliseconds from the response to the reset, on the service's clock. */
  readonly resetInMs: number;
}

/**
 * How a reported window stands to a known one of the same limit that has not
 * ended: older, the same window, or newer. An approximate reset (sent as
 * seconds until it, so estimated from when the response arrived) names the
 * window still known: a late response can never loosen the budget, and a new
 * window is learnt once the known one has ended. The Redis store's scripts
 * keep the same rule.
 */
export function windowOrder(knownId: number, reported: WindowReport): -1 | 0 | 1 {
  if (reported.approximate) return 0;
  const id = reported.resetId;
  return id > knownId ? 1 : id < knownId ? -1 : 0;
}

/** Why a 429 asks for the wait it does. */
export type RateLimitWaitSource = 'retry-after' | 'rate-limit-reset';

/** What one response says about time, read once. */
export interface ResponseTiming {
  /** The budget the response reported, in any dialect read, when complete and credible. */
  readonly rateLimit: RateLimitInfo | undefined;
  /**
   * The same window, for the quota; `undefined` is "nothing usable", whether
   * no rate-limit header came or none could be used.
   */
  readonly window: WindowReport | undefined;
  /** How a value was read in another unit than its header's own (for a `warn` line). */
  readonly reading: string | undefined;
  /** Rate-limit headers that came but could not be used, in words (for a `warn` line). */
  readonly unusable: string | undefined;
  /** For a 429: the wait the service asks for, when it says. */
  readonly retryAfter: { readonly ms: number; readonly source: RateLimitWaitSource } | undefined;
  /** A 429's `Retry-After` asked for more than a day (and no reset gave a wait instead). */
  readonly retryAfterTooFar: boolean;
  /** Header values that were present but not believed, in words (for the `info` log). */
  readonly ignored: readonly string[];
}

/**
 * The longest wait or clock difference believed: the longest window the
 * interface knows is a day. Anything further away is a unit mistake (a reset
 * in milliseconds), a broken clock or an attack, and is ignored.
 */
export const HORIZON_MS = 86_400_000;

// Below this, a difference between the response's Date and the local clock is
// latency or rounding (Date has whole seconds), not skew.
const SKEW_TOLERANCE_MS = 2_000;

// Quoted whole: the caller redacts the key before it shortens anything.
const excerpt = (value: string) => JSON.stringify(value);

/**
 * The service's "now" in local milliseconds: the response's `Date` when it
 * differs from the local clock by more than two seconds but less than the
 * horizon (the clocks are skewed, and `X-RateLimit-Reset` or an HTTP-date
 * `Retry-After` are in the server's time), else the local clock.
 */
function serverNow(headers: Headers, nowMs: number, ignored: string[]): number {
  const date = headers.get('date');
  if (date === null) return nowMs;
  const at = Date.parse(date);
  if (Number.isNaN(at)) return nowMs;
  const skew = Math.abs(at - nowMs);
  if (skew <= SKEW_TOLERANCE_MS) return nowMs;
  if (skew > HORIZON_MS) {
    ignored.push(`Date ${excerpt(date)} (more than a day from the local clock)`);
    return nowMs;
  }
  return at;
}

const DELTA_SECONDS = /^\s*(\d+(?:\.\d+)?)\s*$/;

function parseOne(value: string, serverMs: number): number | undefined {
  const delta = DELTA_SECONDS.exec(value);
  if (delta) return Math.ceil(Number(delta[1]) * 1000);
  // An HTTP-date always names a weekday and GMT; Date.parse alone accepts far too much.
  if (!/GMT\s*$/i.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - serverMs);
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

/**
 * Milliseconds to wait according to a `Retry-After` value, given as
 * delta-seconds (`"120"`, also fractional) or an HTTP-date, against the
 * server's clock `serverMs`. `undefined` when the value is missing or unusable
 * (negative, garbage): the caller then falls back to other signals instead of
 * giving up retrying. When the header was sent more than once (values joined
 * by commas), the longest wait wins. Not bounded: see {@link readTiming}.
 */
export function parseRetryAfter(value: string | null, serverMs: number): number | undefined {
  if (value === null) return undefined;
  const whole = parseOne(value, serverMs);
  if (whole !== undefined) return whole;
  let longest: number | undefined;
  for (const part of splitValues(value)) {
    const ms = parseOne(part, serverMs);
    if (ms !== undefined && (longest === undefined || ms > longest)) longest = ms;
  }
  return longest;
}

/** A reset read from a header, in milliseconds from the server's now, with its window's name. */
interface Reset {
  readonly inMs: number;
  /** The reset as a Unix time in whole seconds: with the limit, it names the window. */
  readonly id: number;
  /** The reset as the service said it, from its now, for `client.rateLimit`. */
  readonly saidInMs: number;
  /** Sent as seconds until the reset: `id` is an estimate. */
  readonly approximate: boolean;
  /** How a value in another unit than the header's own was read, for the `warn` log. */
  readonly note?: string;
}

const NUMBER = /^\s*(\d{1,16}(?:\.\d{1,6})?)\s*$/;
// Below this a reset cannot be a Unix time in seconds (2001-09-09): it counts
// seconds until the reset. From 1e11 on (in seconds, the year 5138) it is in milliseconds.
const SECONDS_UNTIL_BELOW = 1e9;
const MILLISECONDS_FROM = 1e11;

/**
 * A reset field's value, whatever its unit: a Unix time in seconds (the
 * interface's), seconds until the reset (draft-06's, and many gateways'), or
 * a Unix time in milliseconds; told apart by size. `undefined` when it is no
 * number, or not within a day of the server's clock.
 */
function readReset(
  name: string,
  raw: string,
  server: number,
  own: 'unix' | 'delta',
  problems: string[],
): Reset | undefined {
  const match = NUMBER.exec(raw);
  if (!match) {
    problems.push(`${name} ${excerpt(raw)} (not a number)`);
    return undefined;
  }
  const value = Number(match[1]);
  const unit =
    value < SECONDS_UNTIL_BELOW ? 'delta' : value < MILLISECONDS_FROM ? 'unix' : 'unix-ms';
  const atMs = unit === 'delta' ? server + value * 1000 : unit === 'unix' ? value * 1000 : value;
  const inMs = Math.ceil(atMs - server);
  if (inMs < -SKEW_TOLERANCE_MS) {
    problems.push(`${name} ${excerpt(raw)} (in the past on the service's clock)`);
    return undefined;
  }
  const words = {
    delta: 'seconds until the reset',
    unix: 'a Unix time in seconds',
    'unix-ms': 'a Unix time in milliseconds',
  };
  const note = unit === own ? undefined : `${name} ${excerpt(raw)} was read as ${words[unit]}`;
  return {
    // A reset now or just past (a full token bucket, or a response that
    // crossed the window's end) is a window that ends in a second; one
    // beyond the horizon is believed up to a day.
    inMs: inMs <= 0 ? 1000 : Math.min(inMs, HORIZON_MS),
    saidInMs: inMs,
    id: Math.round(atMs / 1000),
    approximate: unit === 'delta',
    ...(note && { note }),
  };
}

/**
 * A header holding non-negative integers: one, or a list (`10, 10;w=1`, or
 * the same header sent twice); `pick` chooses among them.
 */
function integers(raw: string | null, pick: (...values: number[]) => number): number | undefined {
  if (raw === null) return undefined;
  if (/^\d{1,15}$/.test(raw)) return Number(raw);
  const values: number[] = [];
  for (const part of raw.split(',')) {
    const match = /^\s*(\d{1,15})\s*(?:;.*)?$/.exec(part);
    if (!match) return undefined;
    values.push(Number(match[1]));
  }
  return pick(...values);
}

// The limit is the first of a list (its policy); what remains, the least said.
const first = (...values: number[]) => values[0] ?? Number.NaN;

interface Read {
  readonly info: RateLimitInfo;
  readonly window: WindowReport;
  readonly note: string | undefined;
}

function read(limit: number, said: number, reset: Reset, nowMs: number): Read {
  // More left than the limit is not believed.
  const remaining = Math.min(said, limit);
  return {
    info: Object.freeze({ limit, remaining, resetAt: new Date(nowMs + reset.saidInMs) }),
    // Seconds-until may be rounded either way: the quota takes the window to
    // last a second longer, so that it never reads it as over too soon.
    window: {
      limit,
      remaining,
      resetId: reset.id,
      resetInMs: Math.min(HORIZON_MS, reset.inMs + (reset.approximate ? 1000 : 0)),
      ...(reset.approximate && { approximate: true }),
    },
    note: reset.note,
  };
}

/** `X-RateLimit-*` (the interface's), or draft-06's `RateLimit-Limit` / `-Remaining` / `-Reset`. */
const INTERFACE = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;
const DRAFT_06 = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const;

function readTriple(
  headers: Headers,
  [limitName, remainingName, resetName]: typeof INTERFACE | typeof DRAFT_06,
  own: 'unix' | 'delta',
  server: number,
  nowMs: number,
  problems: string[],
): Read | undefined {
  const rawLimit = headers.get(limitName);
  const rawRemaining = headers.get(remainingName);
  const rawReset = headers.get(resetName);
  if (rawLimit === null && rawRemaining === null && rawReset === null) return undefined;
  const limit = integers(rawLimit, first);
  const remaining = integers(rawRemaining, Math.min);
  const reset =
    rawReset === null ? undefined : readReset(resetName, rawReset, server, own, problems);
  for (const [name, raw, value] of [
    [limitName, rawLimit, limit],
    [remainingName, rawRemaining, remaining],
  ] as const) {
    if (value === undefined) problems.push(`${name} ${raw === null ? 'missing' : excerpt(raw)}`);
  }
  if (rawReset === null) problems.push(`${resetName} missing`);
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return read(limit, remaining, reset, nowMs);
}

const integerParam = (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
const policyName = (value: unknown) =>
  typeof value === 'string'
    ? value
    : typeof value === 'object' && value !== null && 'token' in value
      ? String(value.token)
      : undefined;

/**
 * draft-ietf-httpapi-ratelimit-headers-11: `RateLimit: "default";r=50;t=30`
 * with `RateLimit-Policy: "default";q=100;w=60`. Of the policies that say
 * what is left (`r`), when (`t`) and their quota (`q`), the tightest.
 */
function readFields(
  headers: Headers,
  server: number,
  nowMs: number,
  problems: string[],
): Read | undefined {
  const raw = headers.get('ratelimit');
  if (raw === null) return undefined;
  const members = parseList(raw);
  const quotas = new Map<string, number>();
  for (const policy of parseList(headers.get('ratelimit-policy')) ?? []) {
    const name = policyName(policy.value);
    const quota = integerParam(policy.params.get('q'));
    if (name !== undefined && quota !== undefined) quotas.set(name, quota);
  }
  let best: Read | undefined;
  for (const member of members ?? []) {
    const name = policyName(member.value);
    const remaining = integerParam(member.params.get('r'));
    const seconds = integerParam(member.params.get('t'));
    const limit = name === undefined ? undefined : quotas.get(name);
    if (remaining === undefined || seconds === undefined || limit === undefined) continue;
    const reset = readReset('RateLimit t', String(seconds), server, 'delta', problems);
    if (reset && (!best || remaining < best.window.remaining))
      best = read(limit, remaining, reset, nowMs);
  }
  if (!best) {
    problems.push(
      `RateLimit ${excerpt(raw)}${members ? ' (no policy with r, t and a RateLimit-Policy quota q)' : ' (not a structured field list)'}`,
    );
  }
  return best;
}

/**
 * Reads what a response says about time: its rate-limit budget, and for a
 * 429 the wait it asks for (`Retry-After` when usable, else until the
 * window's reset when that lies ahead). The budget comes from `X-RateLimit-*`
 * (the interface's), else from the IETF fields (draft-11's `RateLimit` with
 * `RateLimit-Policy`, else draft-06's `RateLimit-Limit` / `-Remaining` /
 * `-Reset`); a dialect that is incomplete or not credible is nothing usable,
 * the same as no header at all. Nothing here can throw.
 */
export function readTiming(headers: Headers, status: number, nowMs: number): ResponseTiming {
  const ignored: string[] = [];
  const server = serverNow(headers, nowMs, ignored);
  const problems: string[] = [];
  const found =
    readTriple(headers, INTERFACE, 'unix', server, nowMs, problems) ??
    readFields(headers, server, nowMs, problems) ??
    readTriple(headers, DRAFT_06, 'delta', server, nowMs, problems);
  let retryAfter: ResponseTiming['retryAfter'];
  let tooFar = false;
  if (status === 429) {
    const raw = headers.get('retry-after');
    const ms = parseRetryAfter(raw, server);
    if (ms !== undefined && ms <= HORIZON_MS) retryAfter = { ms, source: 'retry-after' };
    else {
      if (ms !== undefined) {
        ignored.push(`Retry-After ${excerpt(raw ?? '')} (more than a day)`);
        tooFar = true;
      }
      const untilReset = found?.window.resetInMs;
      if (untilReset !== undefined && untilReset > 0) {
        retryAfter = { ms: untilReset, source: 'rate-limit-reset' };
      }
    }
  }
  return {
    rateLimit: found?.info,
    window: found?.window,
    reading: found?.note,
    unusable: found || problems.length === 0 ? undefined : problems.join(', '),
    retryAfter,
    ignored,
    retryAfterTooFar: tooFar && !retryAfter,
  };
}
