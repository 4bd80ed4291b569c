// What a response says about time, as pure functions of its headers and a clock reading.

/** The rate-limit state a response reported (`X-RateLimit-*` or the IETF `RateLimit` fields; of several, the one with least left). */
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
  /** The reset was sent as seconds until it: `resetId` is an estimate, `resetInMs` a second more than said. */
  readonly approximate?: boolean | undefined;
  /** Milliseconds from the response to the reset, on the service's clock. */
  readonly resetInMs: number;
  /** The window's length, when the limiter stated it (a policy's `w`). */
  readonly windowMs?: number | undefined;
  /** How long the response took: an approximate reset may have been said that long before it came. */
  readonly tookMs?: number | undefined;
}

// Below this, Date and the local clock differ by latency or rounding, not skew.
const SKEW_TOLERANCE_MS = 2_000;

/**
 * How a reported window stands to a known one of the same limit: older, the same, or newer. An
 * approximate reset is newer only when it must end after the known one, however it was rounded.
 * An earlier reset is older when, placed on the known window's clock, it ends within a second (a
 * late answer of the window before, its reset rounded up); further ahead, it is the same window
 * said otherwise (a limiter that rounds, instances whose clocks differ).
 */
export function windowOrder(
  known: { readonly resetId: number; readonly resetAt: number },
  reported: WindowReport,
  now: number,
): -1 | 0 | 1 {
  if (reported.approximate) {
    const earliest = now - (reported.tookMs ?? 0) + reported.resetInMs - SKEW_TOLERANCE_MS;
    return earliest > known.resetAt ? 1 : 0;
  }
  const id = reported.resetId;
  if (id >= known.resetId) return id > known.resetId ? 1 : 0;
  return known.resetAt - (known.resetId - id) * 1000 <= now + 1000 ? -1 : 0;
}

/** What one response says about time, read once. */
export interface ResponseTiming {
  readonly rateLimit: RateLimitInfo | undefined;
  readonly window: WindowReport | undefined;
  /** For `warn` lines: a value read in another unit than its header's own; headers unusable. */
  readonly reading: string | undefined;
  readonly unusable: string | undefined;
  /** For a 429: the wait asked for; or that `Retry-After` asked for more than a day. */
  readonly retryAfter:
    | { readonly ms: number; readonly source: 'retry-after' | 'rate-limit-reset' }
    | undefined;
  readonly retryAfterTooFar: boolean;
  /** Values present but not believed, for the `info` log. */
  readonly ignored: readonly string[];
}

/** The longest wait or clock difference believed (the longest window the interface knows). */
export const HORIZON_MS = 86_400_000;

// Quoted whole: the caller redacts the key before it shortens anything.
const excerpt = (value: string) => JSON.stringify(value);

/**
 * The service's clock as read from its `Date`s, never ahead of it: a `Date` is in whole seconds,
 * written before the response left, so how far the local clock is ahead at its arrival is at
 * least how far it is ahead of the service's. The least lead of recent answers binds; it grows
 * 10 ms a second, and one answer that proves it stale (its lead more than a second and the
 * response's time beyond) replaces it.
 */
export function serviceClock() {
  let kept = Number.POSITIVE_INFINITY;
  let keptAt = 0;
  // A `Date` changes once a second: read again only when it changed.
  let seen: string | null = null;
  let seenMs = Number.NaN;
  /** The service's time at local `nowMs`, at the earliest; the local clock while no `Date` is usable. */
  const read = (date: string | null, nowMs: number, tookMs: number, ignored: string[]): number => {
    if (date !== seen) [seen, seenMs] = [date, httpDate(date)];
    const lead = nowMs - seenMs;
    let bound = kept + Math.max(0, nowMs - keptAt) / 100;
    const before = bound;
    if (Math.abs(lead) > HORIZON_MS) {
      ignored.push(`Date ${excerpt(date ?? '')} (more than a day from the local clock)`);
    } else if (lead < bound || lead - bound > 1000 + tookMs) {
      kept = bound = lead;
      keptAt = nowMs;
    }
    const server = Number.isFinite(bound) ? nowMs - bound : nowMs;
    read.earliest = Number.isFinite(before) ? Math.min(server, nowMs - before) : server;
    return server;
  };
  /** Of the readings before and after the answer just read, the earlier: it only delays waits. */
  read.earliest = 0;
  return read;
}

const MONTHS = 'janfebmaraprmayjunjulaugsepoctnovdec';
const FIXDATE = /^[a-z]{3,9}, (\d\d)[ -]([a-z]{3})[ -](\d\d|\d{4}) (\d\d):(\d\d):(\d\d) GMT$/i;
const ASCTIME = /^[a-z]{3} ([a-z]{3}) ([ \d]\d) (\d\d):(\d\d):(\d\d) (\d{4})$/i;

/**
 * An HTTP-date in epoch ms (RFC 9110: IMF-fixdate, RFC 850's or asctime's form, all in GMT), else
 * NaN. Read by the grammar: Date.parse accepts far more, and reads some of it on the local zone.
 */
function httpDate(value: string | null): number {
  const text = value?.trim() ?? '';
  const fix = FIXDATE.exec(text);
  const asc = fix ? undefined : ASCTIME.exec(text);
  const [day, month, year, ...time] = fix
    ? fix.slice(1)
    : asc
      ? [asc[2], asc[1], asc[6], asc[3], asc[4], asc[5]]
      : [];
  const index = MONTHS.indexOf(month?.toLowerCase() ?? '-');
  if (index % 3 !== 0 || !year) return Number.NaN;
  // RFC 850's two digits: the latest such year not more than 50 years ahead.
  let full = Number(year);
  if (year.length === 2) full += 2000 - (full + 2000 > new Date().getUTCFullYear() + 50 ? 100 : 0);
  const [h, m, sec] = time.map(Number);
  const at = Date.UTC(full, index / 3, Number(day), h, m, sec);
  const valid = new Date(at).getUTCDate() === Number(day) && h! < 24 && m! < 60 && sec! < 61;
  return valid ? at : Number.NaN;
}

/** A wait in delta-seconds, or until an HTTP-date; a date already past is no usable wait (the clocks may differ). */
function parseOne(value: string, serverMs: number): number | undefined {
  const delta = /^\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
  if (delta) return Math.ceil(Number(delta[1]) * 1000);
  const at = httpDate(value);
  return at > serverMs ? Math.ceil(at - serverMs) : undefined;
}

/** Milliseconds to wait for a `Retry-After` (seconds or HTTP-date); sent more than once, the longest. */
export function parseRetryAfter(value: string | null, serverMs: number): number | undefined {
  if (value === null) return undefined;
  let longest = parseOne(value, serverMs);
  if (longest !== undefined) return longest;
  for (const [part] of value.matchAll(/\s*(?:[A-Za-z]{3,9}\s*,)?[^,]+/g)) {
    const ms = parseOne(part, serverMs);
    if (ms !== undefined && (longest === undefined || ms > longest)) longest = ms;
  }
  return longest;
}

/** What one form stated, before it is checked; `summary` replaces each value's problem when unusable. */
interface Stated {
  readonly name: (field: 'limit' | 'remaining' | 'reset') => string;
  readonly limit?: string | undefined;
  readonly remaining?: string | undefined;
  readonly reset?: string | undefined;
  readonly unit: 'unix' | 'delta';
  readonly windowSec?: number | undefined;
  readonly summary?: string;
}

const integer = (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? String(value) : undefined;
const nameOf = ({ value }: Member) =>
  typeof value === 'object' && 'token' in value ? value.token : String(value);
const field = (name: string) => (part: string) => `RateLimit ${part === 'reset' ? name : part}`;

/** The IETF `RateLimit` field: draft-07's dictionary, or draft-08's and -11's named policies. */
function ietf(raw: string, policy: Member[]): Stated[] {
  // Draft-07's members in any order; the field sent by stacked limiters repeats them.
  const seven = /^\s*[a-z]+\s*=\s*\d+\s*(?:,\s*[a-z]+\s*=\s*\d+\s*)*$/i.test(raw)
    ? [...raw.matchAll(/([a-z]+)\s*=\s*(\d+)/gi)]
    : [];
  const windowSec = Number(integer(policy[0]?.params.get('w')) ?? 0);
  const [limit, remaining, reset] = ['limit', 'remaining', 'reset'].map(
    (key) => seven.flatMap(([, k, v]) => (k?.toLowerCase() === key ? [v] : [])).join() || undefined,
  );
  if (limit && remaining && reset) {
    return triples({ name: field('reset'), limit, remaining, reset, unit: 'delta', windowSec });
  }
  const members = parseList(raw);
  const summary = `RateLimit ${excerpt(raw)} (${members ? 'no policy with r, t and a RateLimit-Policy quota q' : 'not a structured field list'})`;
  if (!members?.length) return [{ name: field('t'), unit: 'delta', summary }];
  return members.map((member) => {
    const quota = policy.find((one) => nameOf(one) === nameOf(member))?.params;
    return {
      name: field('t'),
      limit: integer(quota?.get('q')),
      remaining: integer(member.params.get('r')),
      reset: integer(member.params.get('t')),
      unit: 'delta',
      windowSec: Number(integer(quota?.get('w')) ?? 0),
      summary,
    };
  });
}

/** A form's fields, each sent as often by stacked limiters: a form for each, in order. */
function triples(said: Stated): Stated[] {
  const { limit, remaining, reset } = said;
  const [ls = [], rs = [], ts = []] = reset?.includes(',')
    ? [limit, remaining, reset].map((value) => value?.split(','))
    : [];
  if (ts.length < 2 || ls.length !== ts.length || rs.length !== ts.length) return [said];
  return ts.map((one, i) => ({ ...said, limit: ls[i], remaining: rs[i], reset: one }));
}

/** A form of three fields, `<prefix>-Limit`, `-Remaining`, `-Reset`. */
const triple = (prefix: string, unit: 'unix' | 'delta') => ({
  unit,
  fields: ['limit', 'remaining', 'reset'].map((part) => `${prefix}-${part}`.toLowerCase()),
  name: (part: string) => `${prefix}-${part[0]?.toUpperCase()}${part.slice(1)}`,
});
const X_RATELIMIT = triple('X-RateLimit', 'unix');
const DRAFT_06 = triple('RateLimit', 'delta');

/** The forms a response states its budget in (stacked limiters may each send another). */
function stated(sent: Fields): Stated[] {
  let policy: Member[] | undefined;
  const policies = () => (policy ??= parseList(sent['ratelimit-policy'] ?? null) ?? []);
  const forms: Stated[] = [];
  const add = (each: Stated[]) => {
    for (const form of each) forms.push(form);
  };
  const read = ({ unit, fields, name }: typeof X_RATELIMIT) => {
    const limit = sent[fields[0]!];
    const remaining = sent[fields[1]!];
    const reset = sent[fields[2]!];
    if (limit === undefined && remaining === undefined && reset === undefined) return;
    const windowSec = unit === 'delta' ? Number(integer(policies()[0]?.params.get('w')) ?? 0) : 0;
    add(triples({ name, limit, remaining, reset, unit, windowSec }));
  };
  read(X_RATELIMIT);
  const raw = sent.ratelimit;
  if (raw !== undefined) add(ietf(raw, policies()));
  read(DRAFT_06);
  return forms;
}

/** A header holding non-negative integers: one, or a list (`10, 10;w=1`); `pick` chooses of two. */
function integers(raw: string | undefined, pick: (a: number, b: number) => number) {
  if (raw === undefined) return undefined;
  if (/^\d{1,15}$/.test(raw)) return Number(raw);
  let picked: number | undefined;
  for (const part of raw.split(',')) {
    const match = /^\s*(\d{1,15})\s*(?:;.*)?$/.exec(part);
    if (!match) return undefined;
    const value = Number(match[1]);
    picked = picked === undefined ? value : pick(picked, value);
  }
  return picked;
}

// A reset below 1e9 (2001-09-09) counts seconds until it; from 1e11 (year 5138) it is in milliseconds.
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

/** One form checked: whole numbers, a reset in the unit it plainly is in, not past. */
function check(
  said: Stated,
  server: number,
  nowMs: number,
  problems: string[],
  tookMs: number,
): Read | undefined {
  const { name, unit } = said;
  const limit = integers(said.limit, (first) => first);
  const saidRemaining = integers(said.remaining, Math.min);
  // Each reset read in the unit it plainly is in; of several (not as many of each field), the latest.
  let latest: { read: keyof typeof UNITS; atMs: number } | undefined;
  for (const one of (said.reset ?? '').split(',')) {
    if (!/^\s*\d{1,16}(?:\.\d{1,6})?\s*$/.test(one)) {
      latest = undefined;
      break;
    }
    const n = Number(one);
    const read = n < SECONDS_UNTIL_BELOW ? 'delta' : n < MILLISECONDS_FROM ? 'unix' : 'ms';
    const atMs = read === 'delta' ? server + n * 1000 : read === 'unix' ? n * 1000 : n;
    if (!latest || atMs > latest.atMs) latest = { read, atMs };
  }
  // An HTTP-date (its comma is no list's), as a limiter that writes a Date object's UTC string sends.
  const dated = latest ? Number.NaN : httpDate(said.reset ?? null);
  if (dated >= 0) latest = { read: 'unix', atMs: dated };
  const before = problems.length;
  const complain = (field: 'limit' | 'remaining' | 'reset', raw: string | undefined, why = '') =>
    problems.push(`${name(field)} ${raw === undefined ? 'missing' : `${excerpt(raw)}${why}`}`);
  if (limit === undefined) complain('limit', said.limit);
  if (saidRemaining === undefined) complain('remaining', said.remaining);
  if (!latest) complain('reset', said.reset, ' (not a number)');
  if (limit === undefined || saidRemaining === undefined || !latest) {
    if (said.summary) problems.splice(before, Number.POSITIVE_INFINITY, said.summary);
    return undefined;
  }
  const { read, atMs } = latest;
  const inMs = Math.ceil(atMs - server);
  if (inMs < -SKEW_TOLERANCE_MS) {
    complain('reset', said.reset, " (in the past on the service's clock)");
    return undefined;
  }
  const remaining = Math.min(saidRemaining, limit);
  // A reset now or just past (a full token bucket, a late response) ends in a second.
  const untilMs = inMs <= 0 ? 1000 : Math.min(inMs, HORIZON_MS);
  const approximate = read === 'delta';
  const windowMs = said.windowSec ? said.windowSec * 1000 : undefined;
  return {
    // The reset as said: an instant as it was written, seconds until it from the arrival.
    info: Object.freeze({ limit, remaining, resetAt: new Date(approximate ? nowMs + inMs : atMs) }),
    window: {
      limit,
      remaining,
      resetId: Math.round(atMs / 1000),
      resetInMs: Math.min(HORIZON_MS, untilMs + (approximate ? 1000 : 0)),
      ...(approximate && { approximate }),
      ...(approximate && tookMs > 0 && { tookMs }),
      ...(windowMs && { windowMs }),
    },
    note:
      read === unit
        ? undefined
        : `${name('reset')} ${excerpt(said.reset ?? '')} was read as ${UNITS[read]}`,
  };
}

/**
 * Reads what a response says about time: its budget, the tightest of every form and policy that is
 * complete and credible (else none at all), and for a 429 the wait it asks (`Retry-After`, else
 * the reset).
 */
export function readTiming(
  headers: Headers,
  status: number,
  nowMs: number,
  sentMs = nowMs,
  clock = serviceClock(),
): ResponseTiming {
  // Headers that cannot be read (a fetch option's that throw, more fields than a stack holds)
  // are as none: a 429 is still a 429.
  try {
    return timing(fieldsOf(headers), status, nowMs, sentMs, clock);
  } catch {
    const none = timing({}, status, nowMs, sentMs, clock);
    return { ...none, unusable: 'the response headers could not be read' };
  }
}

/** The fields read here, names lower-cased (a fetch option's may keep them as sent), values as text; one sent more than once joined by ", ". */
type Fields = Record<string, string | undefined>;

function fieldsOf(headers: Headers): Fields {
  const sent: Fields = {};
  headers.forEach((value, name) => {
    const lower = String(name).toLowerCase();
    if (lower.includes('ratelimit') || lower === 'retry-after' || lower === 'date') {
      sent[lower] = lower in sent ? `${sent[lower]}, ${value}` : String(value);
    }
  });
  return sent;
}

function timing(
  sent: Fields,
  status: number,
  nowMs: number,
  sentMs: number,
  clock: ReturnType<typeof serviceClock>,
): ResponseTiming {
  const ignored: string[] = [];
  const server = clock(sent.date ?? null, nowMs, nowMs - sentMs, ignored);
  const problems: string[] = [];
  let found: Read | undefined;
  // Of every budget stated, the one with least left binds; of as little left, the one that resets last.
  for (const said of stated(sent)) {
    const read = check(said, server, nowMs, problems, nowMs - sentMs);
    const [a, b] = [read?.window, found?.window];
    if (a && (!b || (a.remaining - b.remaining || b.resetInMs - a.resetInMs) < 0)) found = read;
  }
  let retryAfter: ResponseTiming['retryAfter'];
  let tooFar = false;
  // A 5xx's Retry-After (RFC 9110's 503) delays its retry; only a 429's makes the key wait.
  if (status === 429 || status >= 500) {
    const raw = sent['retry-after'] ?? null;
    // An HTTP-date read against the service's clock as read before this answer (a `Date` that runs
    // ahead cannot shorten the wait) and against this answer's `Date` (a clock never set, in 1970,
    // still asks its 5 s): the longer reading binds.
    const longest = Math.max(
      ...[clock.earliest, httpDate(sent.date ?? null)].map((at) => parseRetryAfter(raw, at) ?? -1),
    );
    const ms = longest < 0 ? undefined : longest;
    if (ms !== undefined && ms <= HORIZON_MS) retryAfter = { ms, source: 'retry-after' };
    else if (ms !== undefined) ignored.push(`Retry-After ${excerpt(raw ?? '')} (more than a day)`);
    if (status === 429 && !retryAfter) {
      tooFar = ms !== undefined;
      // A 429 is itself the budget spent: a reset sent without the rest of its form is its wait.
      const alone = found
        ? []
        : stated(sent).map(
            (said) =>
              check(
                { ...said, limit: said.limit ?? '0', remaining: said.remaining ?? '0' },
                server,
                nowMs,
                [],
                nowMs - sentMs,
              )?.window.resetInMs ?? 0,
          );
      const untilReset =
        found?.window.resetInMs ?? (alone.reduce((a, b) => Math.max(a, b), 0) || undefined);
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

// RFC 9651 List fields: checked whole by one pattern from the RFC's grammar (a field that does
// not match fails whole, as the RFC requires), then read member by member.

/** A bare item: integer or decimal, string or token, byte sequence (its base64 text), boolean, date. */
type BareItem = number | string | boolean | { readonly token: string };

/** A list member: an item, or an inner list of items, with its parameters. */
interface Member {
  readonly value: BareItem | readonly Member[];
  readonly params: ReadonlyMap<string, BareItem>;
}

const BARE =
  '"(?:[ !#-\\[\\]-~]|\\\\["\\\\])*"' + // string
  "|[A-Za-z*][-!#$%&'*+.^_`|~\\w:/]*" + // token
  '|-?(?:\\d{1,12}\\.\\d{1,3}|\\d{1,15})' + // decimal, integer
  '|\\?[01]|:[\\w+/=]*:|@-?\\d{1,15}'; // boolean, byte sequence, date
const PARAMS = `(?:; *[a-z*][-a-z\\d_.*]*(?:=(?:${BARE}))?)*`;
const ITEM = `(?:${BARE})${PARAMS}`;
const MEMBER = `(?:${ITEM}|\\((?: *${ITEM}(?= |\\)))* *\\)${PARAMS})`;
const LIST = new RegExp(`^ *(?:${MEMBER}(?:[ \\t]*,[ \\t]*${MEMBER})*)? *$`);
// Global ones are used through matchAll, which copies them: none keeps state between calls.
const MEMBERS = new RegExp(MEMBER, 'g');
const ITEMS = new RegExp(ITEM, 'g');
const PARAM = new RegExp(`; *([^=;]+)(?:=(${BARE}))?`, 'g');
const LEADING = new RegExp(`^(${BARE})`);

function bare(text: string): BareItem {
  const first = text[0];
  if (first === '"') return text.slice(1, -1).replace(/\\(.)/g, '$1');
  if (first === '?') return text === '?1';
  if (first === ':') return text.slice(1, -1);
  if (first === '@') return Number(text.slice(1));
  return /[-\d]/.test(first ?? '') ? Number(text) : { token: text };
}

function params(text: string): Map<string, BareItem> {
  const read = new Map<string, BareItem>();
  for (const [, key = '', value] of text.matchAll(PARAM)) {
    read.set(key, value === undefined ? true : bare(value));
  }
  return read;
}

function item(text: string): Member {
  const [, value = ''] = LEADING.exec(text) ?? [];
  return { value: bare(value), params: params(text.slice(value.length)) };
}

/** The members of a List field (RFC 9651, 4.2.1), or `undefined` when absent or unparsable. */
export function parseList(field: string | null): Member[] | undefined {
  if (field === null || !LIST.test(field)) return undefined;
  return [...field.matchAll(MEMBERS)].map(([text]) => {
    if (text[0] !== '(') return item(text);
    const end = text.lastIndexOf(')');
    const inner = [...text.slice(1, end).matchAll(ITEMS)].map(([one]) => item(one));
    return { value: inner, params: params(text.slice(end + 1)) };
  });
}
