import { type Member, parseList } from './structured-fields.js';

// Everything the SDK reads about time from a response, as pure functions of
// the headers and a clock reading: the rate-limit window in whichever form a
// limiter states it, Retry-After and the server's clock (Date). Every form is
// read into the same few facts (limit, remaining, reset, the window's length
// when stated); nothing here keeps state or throws.

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
   * report belongs to the window of its limit still known, if any. Such a
   * reset may have been rounded down, so `resetInMs` holds a second more than
   * was said: a store may take that second off when the value said is the
   * window's whole length (`windowMs`, or the longest said before), which no
   * rounding can have shortened.
   */
  readonly approximate?: boolean | undefined;
  /** Milliseconds from the response to the reset, on the service's clock. */
  readonly resetInMs: number;
  /** The window's length, when the limiter stated it (a policy's `w`). */
  readonly windowMs?: number | undefined;
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
  /** The budget the response reported, in any form read, when complete and credible. */
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
  const at = date === null ? Number.NaN : Date.parse(date);
  const skew = Math.abs(at - nowMs);
  if (Number.isNaN(at) || skew <= SKEW_TOLERANCE_MS) return nowMs;
  if (skew <= HORIZON_MS) return at;
  ignored.push(`Date ${excerpt(date ?? '')} (more than a day from the local clock)`);
  return nowMs;
}

function parseOne(value: string, serverMs: number): number | undefined {
  const delta = /^\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
  if (delta) return Math.ceil(Number(delta[1]) * 1000);
  // An HTTP-date always names a weekday and GMT; Date.parse alone accepts far too much.
  if (!/GMT\s*$/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - serverMs);
}

/**
 * Milliseconds to wait according to a `Retry-After` value, given as
 * delta-seconds (`"120"`, also fractional) or an HTTP-date, against the
 * server's clock `serverMs`. `undefined` when the value is missing or unusable
 * (negative, garbage): the caller then falls back to other signals instead of
 * giving up retrying. When the header was sent more than once (values joined
 * by commas; an HTTP-date has a comma of its own after the weekday), the
 * longest wait wins. Not bounded: see {@link readTiming}.
 */
export function parseRetryAfter(value: string | null, serverMs: number): number | undefined {
  if (value === null) return undefined;
  let longest = parseOne(value, serverMs);
  if (longest !== undefined) return longest;
  for (const [part] of value.matchAll(/(?:[A-Za-z]{3}\s*,)?[^,]+/g)) {
    const ms = parseOne(part, serverMs);
    if (ms !== undefined && (longest === undefined || ms > longest)) longest = ms;
  }
  return longest;
}

/** What a limiter stated, as text, before it is checked: one form's reading. */
interface Stated {
  /** The header that names the form, for messages. */
  readonly form: string;
  readonly limit: string | undefined;
  readonly remaining: string | undefined;
  readonly reset: string | undefined;
  /** The reset's own unit: a Unix time (the interface's) or seconds until it (the drafts'). */
  readonly unit: 'unix' | 'delta';
  /** The window's length in seconds, when stated (a policy's `w`). */
  readonly windowSec?: number | undefined;
  /** What to say, instead of each value's problem, when the form is unusable. */
  readonly summary?: string;
}

const integer = (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
const nameOf = (member: Member) =>
  typeof member.value === 'string' || typeof member.value === 'number'
    ? String(member.value)
    : typeof member.value === 'object' && 'token' in member.value
      ? member.value.token
      : undefined;

/** `RateLimit-Policy` members by name (draft-08 and -11), and the first one's `w`. */
function policies(headers: Headers): {
  quotas: Map<string, Member>;
  windowSec?: number | undefined;
} {
  const members = parseList(headers.get('ratelimit-policy')) ?? [];
  const quotas = new Map<string, Member>();
  for (const member of members) {
    const name = nameOf(member);
    if (name !== undefined) quotas.set(name, member);
  }
  return { quotas, windowSec: integer(members[0]?.params.get('w')) };
}

/**
 * The IETF `RateLimit` field: draft-07's dictionary (`limit=5, remaining=4,
 * reset=2`), or draft-08's and -11's named policies (`"default";r=4;t=2` with
 * `RateLimit-Policy: "default";q=5;w=2`), of which the one with least left.
 */
function ietf(headers: Headers, raw: string): Stated[] {
  const { quotas, windowSec } = policies(headers);
  const dictionary =
    /^\s*limit\s*=\s*(\d+)\s*,\s*remaining\s*=\s*(\d+)\s*,\s*reset\s*=\s*(\d+)\s*$/i;
  const seven = dictionary.exec(raw);
  if (seven) {
    const [, limit, remaining, reset] = seven;
    return [{ form: 'RateLimit', limit, remaining, reset, unit: 'delta', windowSec }];
  }
  const members = parseList(raw);
  const summary = `RateLimit ${excerpt(raw)} (${members ? 'no policy with r, t and a RateLimit-Policy quota q' : 'not a structured field list'})`;
  if (!members?.length)
    return [
      {
        form: 'RateLimit',
        limit: undefined,
        remaining: undefined,
        reset: undefined,
        unit: 'delta',
        summary,
      },
    ];
  const read: Stated[] = [];
  for (const member of members) {
    const name = nameOf(member);
    const policy = name === undefined ? undefined : quotas.get(name);
    const q = integer(policy?.params.get('q'));
    const r = integer(member.params.get('r'));
    const t = integer(member.params.get('t'));
    read.push({
      form: 'RateLimit',
      limit: q === undefined ? undefined : String(q),
      remaining: r === undefined ? undefined : String(r),
      reset: t === undefined ? undefined : String(t),
      unit: 'delta',
      windowSec: integer(policy?.params.get('w')),
      summary,
    });
  }
  return read;
}

/**
 * The forms a response states its budget in, most authoritative first:
 * `X-RateLimit-*`, the `RateLimit` field, draft-06's `RateLimit-*`.
 */
function stated(headers: Headers): Stated[][] {
  const triple = (prefix: string, unit: 'unix' | 'delta'): Stated[] => {
    const [limit, remaining, reset] = ['limit', 'remaining', 'reset'].map(
      (name) => headers.get(`${prefix}-${name}`) ?? undefined,
    );
    if (limit === undefined && remaining === undefined && reset === undefined) return [];
    // `RateLimit-Policy: 5;w=2`, as draft-06 and -07 limiters send it.
    const windowSec = unit === 'delta' ? policies(headers).windowSec : undefined;
    return [{ form: `${prefix}-*`, limit, remaining, reset, unit, windowSec }];
  };
  const fields = headers.get('ratelimit');
  return [
    triple('X-RateLimit', 'unix'),
    fields === null ? [] : ietf(headers, fields),
    triple('RateLimit', 'delta'),
  ];
}

/** A header holding non-negative integers: one, or a list (`10, 10;w=1`); `pick` chooses. */
function integers(raw: string | undefined, pick: (...values: number[]) => number) {
  if (raw === undefined) return undefined;
  const values: number[] = [];
  for (const part of raw.split(',')) {
    const match = /^\s*(\d{1,15})\s*(?:;.*)?$/.exec(part);
    if (!match) return undefined;
    values.push(Number(match[1]));
  }
  return pick(...values);
}

// Below this a reset cannot be a Unix time in seconds (2001-09-09): it counts
// seconds until the reset. From 1e11 on (in seconds, the year 5138) it is in milliseconds.
const SECONDS_UNTIL_BELOW = 1e9;
const MILLISECONDS_FROM = 1e11;
const UNITS = {
  delta: 'seconds until the reset',
  unix: 'a Unix time in seconds',
  ms: 'a Unix time in milliseconds',
};

interface Read {
  readonly info: RateLimitInfo;
  readonly window: WindowReport;
  readonly note: string | undefined;
}

/**
 * One form's values checked: whole numbers, a reset in whatever unit it
 * plainly is in (told apart by size) and not in the past; `undefined` with
 * the reasons in `problems` when anything is missing or not credible.
 */
function check(said: Stated, server: number, nowMs: number, problems: string[]): Read | undefined {
  const { form, unit } = said;
  const name = (field: string) =>
    form === 'RateLimit'
      ? `RateLimit ${field}`
      : `${form.slice(0, -1)}${field[0]?.toUpperCase()}${field.slice(1)}`;
  const limit = integers(said.limit, (...values) => values[0] ?? Number.NaN);
  const saidRemaining = integers(said.remaining, Math.min);
  const value = /^\s*(\d{1,16}(?:\.\d{1,6})?)\s*$/.exec(said.reset ?? '');
  const before = problems.length;
  for (const [field, raw, read] of [
    ['limit', said.limit, limit],
    ['remaining', said.remaining, saidRemaining],
    ['reset', said.reset, value],
  ] as const) {
    if (read === undefined || read === null) {
      const why =
        raw === undefined
          ? 'missing'
          : `${excerpt(raw)}${field === 'reset' ? ' (not a number)' : ''}`;
      problems.push(`${name(field)} ${why}`);
    }
  }
  if (problems.length > before || limit === undefined || saidRemaining === undefined || !value) {
    if (said.summary) problems.splice(before, Number.POSITIVE_INFINITY, said.summary);
    return undefined;
  }
  const number = Number(value[1]);
  const read = number < SECONDS_UNTIL_BELOW ? 'delta' : number < MILLISECONDS_FROM ? 'unix' : 'ms';
  const atMs = read === 'delta' ? server + number * 1000 : read === 'unix' ? number * 1000 : number;
  const inMs = Math.ceil(atMs - server);
  if (inMs < -SKEW_TOLERANCE_MS) {
    problems.push(
      `${name('reset')} ${excerpt(said.reset ?? '')} (in the past on the service's clock)`,
    );
    return undefined;
  }
  // More left than the limit is not believed.
  const remaining = Math.min(saidRemaining, limit);
  // A reset now or just past (a full token bucket, or a response that crossed
  // the window's end) is a window that ends in a second; one beyond the
  // horizon is believed up to a day.
  const untilMs = inMs <= 0 ? 1000 : Math.min(inMs, HORIZON_MS);
  const approximate = read === 'delta';
  const windowMs = said.windowSec ? said.windowSec * 1000 : undefined;
  return {
    info: Object.freeze({ limit, remaining, resetAt: new Date(nowMs + inMs) }),
    window: {
      limit,
      remaining,
      resetId: Math.round(atMs / 1000),
      // Seconds-until may be rounded down: the window is taken to last a
      // second longer, unless the store knows better (see WindowReport).
      resetInMs: Math.min(HORIZON_MS, untilMs + (approximate ? 1000 : 0)),
      ...(approximate && { approximate }),
      ...(windowMs && { windowMs }),
    },
    note:
      read === unit
        ? undefined
        : `${name('reset')} ${excerpt(said.reset ?? '')} was read as ${UNITS[read]}`,
  };
}

/**
 * Reads what a response says about time: its rate-limit budget, and for a
 * 429 the wait it asks for (`Retry-After` when usable, else until the
 * window's reset when that lies ahead). The budget comes from `X-RateLimit-*`
 * (the interface's), else from the IETF fields (`RateLimit` in draft-07's,
 * -08's or -11's form, else draft-06's `RateLimit-Limit` / `-Remaining` /
 * `-Reset`); a form that is incomplete or not credible is nothing usable,
 * the same as no header at all.
 */
export function readTiming(headers: Headers, status: number, nowMs: number): ResponseTiming {
  const ignored: string[] = [];
  const server = serverNow(headers, nowMs, ignored);
  const problems: string[] = [];
  let found: Read | undefined;
  for (const form of stated(headers)) {
    // Of the policies of one field, the one with least left.
    for (const said of form) {
      const read = check(said, server, nowMs, problems);
      if (read && (!found || read.window.remaining < found.window.remaining)) found = read;
    }
    if (found) break;
  }
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
      if (untilReset !== undefined) retryAfter = { ms: untilReset, source: 'rate-limit-reset' };
    }
  }
  return {
    rateLimit: found?.info,
    window: found?.window,
    reading: found?.note,
    unusable: found || problems.length === 0 ? undefined : [...new Set(problems)].join(', '),
    retryAfter,
    ignored,
    retryAfterTooFar: tooFar && !retryAfter,
  };
}
