import { describe, expect, it } from 'vitest';
import { HORIZON_MS, parseRetryAfter, readTiming, serviceClock } from '../src/headers.js';

// The test's own clock, in whole seconds: every time below is relative to it.
const now = Math.floor(Date.now() / 1000) * 1000;
const httpDate = (offsetMs: number) => new Date(now + offsetMs).toUTCString();
/** An HTTP-date in asctime's form (`Sun Nov  6 08:49:37 1994`): no zone, meaning GMT. */
const asctime = (offsetMs: number) => {
  const [day, date, month, year, time] = new Date(now + offsetMs).toUTCString().split(' ');
  return `${day?.slice(0, 3)} ${month} ${String(Number(date)).padStart(2, ' ')} ${time} ${year}`;
};
const seconds = (offset: number) => String(now / 1000 + offset);
const window = (remaining: number, resetIn: number) => ({
  'x-ratelimit-limit': '60',
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': seconds(resetIn),
});

describe('parseRetryAfter', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 7 ', 7000],
    ['1.5', 1500],
    ['0.0001', 1],
    [httpDate(30_000), 30_000],
    [asctime(30_000), 30_000],
    ['5, 5', 5000],
    ['2, 9', 9000],
    [`${httpDate(10_000)}, ${httpDate(20_000)}`, 20_000],
  ])('reads %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it('gives a wait until an HTTP-date in whole milliseconds, rounded up, on a clock read to a fraction', () => {
    expect(parseRetryAfter(httpDate(3000), now + 0.989990234375)).toBe(3000);
  });

  it("reads RFC 850's form of an HTTP-date, the third that RFC 9110 accepts", () => {
    const at = Date.UTC(1994, 10, 6, 8, 49, 7);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', at)).toBe(30_000);
  });

  it('reads an asctime date as GMT, whatever the local time zone', () => {
    const zone = process.env.TZ;
    try {
      for (const tz of ['Asia/Tokyo', 'America/Los_Angeles', 'UTC']) {
        process.env.TZ = tz;
        expect(parseRetryAfter(asctime(30_000), now), tz).toBe(30_000);
        const headers = new Headers({ date: asctime(0), ...window(0, 5) });
        expect(readTiming(headers, 429, now).retryAfter?.ms, tz).toBe(5000);
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it.each([
    null,
    '',
    '-1',
    '-5',
    'soon',
    'NaN',
    '1e3',
    'Infinity',
    '2026-01-01',
    '12:00:30',
    httpDate(-3_600_000),
    httpDate(0),
    // Not HTTP-dates, though Date.parse reads them (the first on the local zone).
    httpDate(30_000).replace('GMT', '(GMT'),
    httpDate(30_000).replace(/\d\d (\w{3}) (\d{4})/, '31 Nov $2'),
    '5:30 pm GMT',
  ])('finds %j unusable', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('readTiming', () => {
  it('reads all three rate-limit headers, and nothing usable unless all three are', () => {
    const full = new Headers({
      'X-RateLimit-Limit': '300',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': seconds(30),
    });
    const timing = readTiming(full, 200, now);
    expect(timing.rateLimit).toEqual({
      limit: 300,
      remaining: 0,
      resetAt: new Date(now + 30_000),
    });
    expect(timing.window).toEqual({
      limit: 300,
      remaining: 0,
      resetId: now / 1000 + 30,
      resetInMs: 30_000,
    });
    full.set('x-ratelimit-remaining', '-1');
    expect(readTiming(full, 200, now).rateLimit).toBeUndefined();
    expect(readTiming(full, 200, now).unusable).toBe('X-RateLimit-Remaining "-1"');
    expect(readTiming(new Headers(), 200, now)).toEqual({
      rateLimit: undefined,
      window: undefined,
      reading: undefined,
      unusable: undefined,
      retryAfter: undefined,
      ignored: [],
      retryAfterTooFar: false,
    });
  });

  it('asks a 429 to wait Retry-After first, then a future X-RateLimit-Reset, else nothing', () => {
    const both = new Headers({ 'retry-after': '3', ...window(0, 8) });
    expect(readTiming(both, 429, now).retryAfter).toEqual({ ms: 3000, source: 'retry-after' });
    both.delete('retry-after');
    expect(readTiming(both, 429, now).retryAfter).toEqual({
      ms: 8000,
      source: 'rate-limit-reset',
    });
    expect(readTiming(new Headers(window(0, -8)), 429, now).retryAfter).toBeUndefined();
  });

  it('asks a 429 to wait for a reset sent without the rest of its form, in any unit', () => {
    const wait = (fields: Record<string, string>) =>
      readTiming(new Headers(fields), 429, now).retryAfter;
    const at = String((now + 3000) / 1000);
    expect(wait({ 'x-ratelimit-reset': at })).toEqual({ ms: 3000, source: 'rate-limit-reset' });
    expect(wait({ 'x-ratelimit-reset': String(now + 3000), 'retry-after': 'soon' })).toEqual({
      ms: 3000,
      source: 'rate-limit-reset',
    });
    expect(wait({ 'ratelimit-reset': '3' })?.ms).toBe(4000);
    expect(wait({ ratelimit: '"d";t=3' })?.ms).toBe(4000);
    // Of two, the later; none past, none without a number.
    expect(wait({ 'x-ratelimit-reset': at, 'ratelimit-reset': '5' })?.ms).toBe(6000);
    expect(wait({ 'x-ratelimit-reset': String((now - 9000) / 1000) })).toBeUndefined();
    expect(wait({ 'x-ratelimit-limit': '5' })).toBeUndefined();
    expect(
      readTiming(new Headers({ 'x-ratelimit-reset': at }), 200, now).retryAfter,
    ).toBeUndefined();
  });

  it("reads a 5xx's Retry-After, but no wait from a 2xx or 4xx other than 429", () => {
    const headers = new Headers({ 'retry-after': '3', 'x-ratelimit-reset': '9' });
    expect(readTiming(headers, 503, now).retryAfter).toEqual({ ms: 3000, source: 'retry-after' });
    headers.delete('retry-after');
    expect(readTiming(headers, 503, now).retryAfter).toBeUndefined();
    headers.set('retry-after', '3');
    for (const status of [200, 404])
      expect(readTiming(headers, status, now).retryAfter).toBeUndefined();
  });

  it('measures X-RateLimit-Reset and HTTP-date Retry-After against the server’s Date when the clocks disagree', () => {
    const serverTime = now + 3_600_000;
    const headers = new Headers({
      date: new Date(serverTime).toUTCString(),
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(serverTime / 1000 + 5),
    });
    expect(readTiming(headers, 429, now).retryAfter).toEqual({
      ms: 5000,
      source: 'rate-limit-reset',
    });
    headers.set('retry-after', new Date(serverTime + 7000).toUTCString());
    expect(readTiming(headers, 429, now).retryAfter).toEqual({ ms: 7000, source: 'retry-after' });
  });

  it.each([
    ['behind, unset (1972)', -20_000],
    ['two days behind', -2],
  ])('waits an HTTP-date Retry-After from its Date on a server whose clock is %s', (_, days) => {
    const serverTime = now + days * 86_400_000;
    const headers = new Headers({
      date: new Date(serverTime).toUTCString(),
      'retry-after': new Date(serverTime + 5000).toUTCString(),
    });
    const timing = readTiming(headers, 429, now);
    expect(timing.retryAfter).toEqual({ ms: 5000, source: 'retry-after' });
    expect(timing.retryAfterTooFar).toBe(false);
  });

  it('waits the longer reading when the Date runs ahead of the Date before it', () => {
    const clock = serviceClock();
    readTiming(new Headers({ date: new Date(now).toUTCString() }), 200, now, now, clock);
    const headers = new Headers({
      date: new Date(now + 3000).toUTCString(),
      'retry-after': new Date(now + 5000).toUTCString(),
    });
    expect(readTiming(headers, 429, now, now, clock).retryAfter?.ms).toBe(5000);
  });

  it.each([
    ['two days ahead of the local clock', { date: new Date(now + 2 * 86_400_000).toUTCString() }],
    ['none', {}],
    ['unreadable', { date: 'yesterday' }],
    ['at the Retry-After', { date: new Date(now + 2 * 86_400_000 + 5000).toUTCString() }],
  ])(
    'refuses a Retry-After date more than a day ahead on the local clock, its Date %s',
    (_, date) => {
      const retryAfter = new Date(now + 2 * 86_400_000 + 5000).toUTCString();
      const timing = readTiming(new Headers({ ...date, 'retry-after': retryAfter }), 429, now);
      expect(timing.retryAfter).toBeUndefined();
      expect(timing.retryAfterTooFar).toBe(true);
    },
  );

  it('refuses a Retry-After date a day ahead of the clock learnt, whose Date runs as far ahead', () => {
    const clock = serviceClock();
    readTiming(new Headers({ date: new Date(now).toUTCString() }), 200, now, now, clock);
    const ahead = now + 25 * 3_600_000;
    const headers = new Headers({
      date: new Date(ahead).toUTCString(),
      'retry-after': new Date(ahead + 1000).toUTCString(),
    });
    expect(readTiming(headers, 429, now, now, clock).retryAfterTooFar).toBe(true);
  });

  it('still refuses an HTTP-date Retry-After more than a day past both clocks', () => {
    const headers = new Headers({
      date: new Date(now).toUTCString(),
      'retry-after': new Date(now + 2 * 86_400_000).toUTCString(),
    });
    const timing = readTiming(headers, 429, now);
    expect(timing.retryAfter).toBeUndefined();
    expect(timing.retryAfterTooFar).toBe(true);
  });

  it('reads the reset on the service’s clock when the local clock runs ahead of it', () => {
    const serverTime = now - 3_600_000;
    const headers = new Headers({
      date: new Date(serverTime).toUTCString(),
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(serverTime / 1000 + 5),
    });
    expect(readTiming(headers, 200, now).window?.resetInMs).toBe(5000);
  });

  it('reads the names of a Headers-like object in any case, repeated ones together', () => {
    const pairs = [
      ['X-RateLimit-Limit', '60'],
      ['X-RateLimit-Remaining', '2'],
      ['x-ratelimit-remaining', '5'],
      ['X-RateLimit-Reset', seconds(30)],
    ];
    const like = {
      get: (name: string) =>
        pairs
          .filter(([n]) => n!.toLowerCase() === name)
          .map(([, v]) => v)
          .join(', ') || null,
      forEach: (each: (value: string, name: string) => void) => {
        for (const [name, value] of pairs) each(value!, name!);
      },
    };
    expect(readTiming(like as unknown as Headers, 200, now).window).toMatchObject({
      limit: 60,
      remaining: 2,
    });
  });

  it('shows the reset as the service said it, whatever its clock is read as', () => {
    const headers = new Headers({ date: httpDate(-700), ...window(3, 30) });
    expect(readTiming(headers, 200, now).rateLimit?.resetAt).toEqual(new Date(now + 30_000));
  });

  it('never reads the service’s clock ahead of its Date, however little the clocks differ', () => {
    // Arriving a second after the second its Date names: read on the local clock, the reset
    // would come up to a second early.
    const headers = new Headers({ date: httpDate(-1000), ...window(0, 5) });
    expect(readTiming(headers, 429, now).retryAfter?.ms).toBe(6000);
    // Without a Date, the local clock is all there is.
    headers.delete('date');
    expect(readTiming(headers, 429, now).retryAfter?.ms).toBe(5000);
  });

  it('takes the least lead of the local clock over recent answers, growing 10 ms a second', () => {
    const clock = serviceClock();
    // An answer whose Date names second `at` of the service, arriving `lead` ms after it.
    const until = (at: number, lead: number) => {
      const headers = new Headers({ date: httpDate(at), ...window(0, 60) });
      return readTiming(headers, 200, now + at + lead, now + at + lead, clock).window?.resetInMs;
    };
    expect(until(0, 900)).toBe(60_000);
    expect(until(0, 200)).toBe(60_000);
    // 600 ms after second 1: the lead of 200 ms, grown by 14 ms since, binds.
    expect(until(1000, 600)).toBe(60_000 - 1000 - 386);
    // A lead more than a second beyond it proves it stale (the local clock was set forward).
    expect(until(2000, 3000)).toBe(60_000 - 2000);
  });

  it('lets no 429 whose Date runs ahead of the others shorten its HTTP-date Retry-After', () => {
    const clock = serviceClock();
    const answer = (date: number, status: number, retryAfter = '') =>
      readTiming(
        new Headers({ date: httpDate(date), 'retry-after': retryAfter }),
        status,
        now + 100,
        now + 100,
        clock,
      ).retryAfter?.ms;
    answer(0, 200);
    // Its Date says 5 s later than the answer before, at the same moment: read against that
    // one's clock, 10 s; against its own Date, it would be 5 s.
    expect(answer(5000, 429, httpDate(10_000))).toBe(10_000);
    // The next one reads by the clock as that Date set it.
    expect(answer(5000, 429, httpDate(10_000))).toBe(5000);
  });
});

describe('the credible horizon (a day)', () => {
  it('ignores a Retry-After beyond a day, and falls back to the reset', () => {
    const headers = new Headers({ 'retry-after': '99999999999999999999', ...window(0, 4) });
    const timing = readTiming(headers, 429, now);
    expect(timing.retryAfter).toEqual({ ms: 4000, source: 'rate-limit-reset' });
    expect(timing.ignored).toEqual([expect.stringMatching(/^Retry-After .*more than a day/)]);
    // The reset gave a wait: the call may be retried at it.
    expect(timing.retryAfterTooFar).toBe(false);
    const alone = readTiming(new Headers({ 'retry-after': '99999999999' }), 429, now);
    expect(alone.retryAfter).toBeUndefined();
    expect(alone.retryAfterTooFar).toBe(true);
  });

  it("reads an X-RateLimit-Reset written as an HTTP-date (a Date object's UTC string), not as a list", () => {
    const at = now + 7_000;
    const timing = readTiming(
      new Headers({ ...window(0, 0), 'x-ratelimit-reset': new Date(at).toUTCString() }),
      200,
      now,
    );
    expect(timing.unusable).toBeUndefined();
    expect(timing.window).toMatchObject({ remaining: 0, resetInMs: 7_000 });
    expect(timing.rateLimit?.resetAt).toEqual(new Date(at));
    // Not a date by the grammar (Date.parse would take it, on the local zone): still unusable.
    const local = new Headers({ ...window(0, 0), 'x-ratelimit-reset': new Date(at).toString() });
    expect(readTiming(local, 200, now).unusable).toMatch(/X-RateLimit-Reset/);
  });

  it('takes a reset more than a day ahead, in whatever unit, as a day, and shows it as said', () => {
    for (const [reset, saidMs] of [
      [seconds(90_000), 90_000_000],
      [String(now + 90_000_000), 90_000_000],
      ['90000', 90_000_000],
    ] as const) {
      const timing = readTiming(
        new Headers({ ...window(0, 0), 'x-ratelimit-reset': reset }),
        429,
        now,
      );
      expect(timing.window?.resetInMs).toBe(HORIZON_MS);
      expect(timing.retryAfter).toEqual({ ms: HORIZON_MS, source: 'rate-limit-reset' });
      expect(timing.unusable).toBeUndefined();
      expect(timing.rateLimit?.resetAt).toEqual(new Date(now + saidMs));
    }
  });

  it('finds a reset more than two seconds in the past unusable', () => {
    const timing = readTiming(new Headers(window(0, -3)), 429, now);
    expect(timing.window).toBeUndefined();
    expect(timing.retryAfter).toBeUndefined();
    expect(timing.unusable).toMatch(/^X-RateLimit-Reset .*in the past/);
  });

  it('reads a reset now, or just past, as a window that ends in a second', () => {
    for (const offset of [0, -1, -2]) {
      const timing = readTiming(new Headers(window(100, offset)), 200, now);
      expect(timing.window).toMatchObject({ remaining: 60, resetInMs: 1000 });
    }
  });

  it('takes the least of repeated Remaining values, and never more than the limit', () => {
    const twice = readTiming(
      new Headers({ ...window(5, 30), 'x-ratelimit-remaining': '5, 0' }),
      200,
      now,
    );
    expect(twice.window?.remaining).toBe(0);
    expect(readTiming(new Headers(window(1000, 30)), 200, now).window?.remaining).toBe(60);
  });

  it('ignores a Date decades away instead of correcting the clock by it', () => {
    const headers = new Headers({ date: 'Thu, 01 Jan 1970 00:00:00 GMT', ...window(0, 5) });
    const timing = readTiming(headers, 429, now);
    expect(timing.retryAfter).toEqual({ ms: 5000, source: 'rate-limit-reset' });
    expect(timing.ignored).toEqual([expect.stringMatching(/^Date .*more than a day/)]);
  });

  it('accepts a wait of exactly a day', () => {
    const timing = readTiming(new Headers({ 'retry-after': String(HORIZON_MS / 1000) }), 429, now);
    expect(timing.retryAfter?.ms).toBe(HORIZON_MS);
  });
});

describe('rate-limit header dialects', () => {
  const read = (headers: Record<string, string>, status = 200) =>
    readTiming(new Headers(headers), status, now);

  it('reads a small X-RateLimit-Reset as seconds until the reset, and says so', () => {
    const timing = read({ ...window(7, 0), 'x-ratelimit-reset': '60' });
    expect(timing.window).toEqual({
      limit: 60,
      remaining: 7,
      resetId: now / 1000 + 60,
      resetInMs: 61_000,
      approximate: true,
    });
    // The service's reset as said; the quota takes the window to last a second longer.
    expect(timing.rateLimit?.resetAt).toEqual(new Date(now + 60_000));
    expect(timing.reading).toBe('X-RateLimit-Reset "60" was read as seconds until the reset');
    expect(timing.unusable).toBeUndefined();
  });

  it('reads an X-RateLimit-Reset in milliseconds, and a fractional one', () => {
    const ms = read({ ...window(7, 0), 'x-ratelimit-reset': String(now + 5000) });
    expect(ms.window?.resetInMs).toBe(5000);
    expect(ms.reading).toMatch(/was read as a Unix time in milliseconds$/);
    const fraction = read({ ...window(7, 0), 'x-ratelimit-reset': `${seconds(9)}.5` });
    expect(fraction.window?.resetInMs).toBe(9500);
    expect(fraction.reading).toBeUndefined();
  });

  it.each([
    [{ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '5' }, 'X-RateLimit-Reset missing'],
    [{ 'x-ratelimit-limit': '60', 'x-ratelimit-reset': '30' }, 'X-RateLimit-Remaining missing'],
    [{ ...window(5, 30), 'x-ratelimit-reset': 'soon' }, 'X-RateLimit-Reset "soon" (not a number)'],
    [{ ...window(5, 30), 'x-ratelimit-limit': 'many' }, 'X-RateLimit-Limit "many"'],
  ])('finds nothing usable in %j, and names why', (headers, why) => {
    const timing = read(headers);
    expect(timing.window).toBeUndefined();
    expect(timing.unusable).toBe(why);
  });

  it('reads draft-11 RateLimit with RateLimit-Policy, the tightest policy first', () => {
    const timing = read({
      RateLimit: '"default";r=50;t=30, "day";r=900;t=3000',
      'RateLimit-Policy': '"default";q=100;w=60, "day";q=1000;w=86400',
    });
    expect(timing.window).toEqual({
      limit: 100,
      remaining: 50,
      resetId: now / 1000 + 30,
      resetInMs: 31_000,
      approximate: true,
      windowMs: 60_000,
    });
    const tight = read({
      RateLimit: '"default";r=50;t=30, "day";r=9;t=3000',
      'RateLimit-Policy': '"default";q=100;w=60, "day";q=1000;w=86400',
    });
    expect(tight.window).toMatchObject({ limit: 1000, remaining: 9, resetInMs: 3_001_000 });
  });

  it.each([
    [{ RateLimit: '"default";r=50;t=30' }, /no policy with r, t and a RateLimit-Policy quota q/],
    [
      { RateLimit: '"default";r=50', 'RateLimit-Policy': '"default";q=100;w=60' },
      /no policy with r, t/,
    ],
    [{ RateLimit: 'default;r=50;t=30,', 'RateLimit-Policy': 'default;q=9' }, /not a structured/],
    [
      { RateLimit: '"default";r=-1;t=30', 'RateLimit-Policy': '"default";q=100' },
      /no policy with r, t/,
    ],
  ])('ignores a malformed RateLimit field %j', (headers, why) => {
    const timing = read(headers);
    expect(timing.window).toBeUndefined();
    expect(timing.unusable).toMatch(why);
  });

  it('reads draft-06 RateLimit-Limit, -Remaining and -Reset (seconds until the reset)', () => {
    const timing = read({
      'RateLimit-Limit': '10, 10;w=1, 1000;w=3600',
      'RateLimit-Remaining': '4',
      'RateLimit-Reset': '2',
    });
    expect(timing.window).toEqual({
      limit: 10,
      remaining: 4,
      resetId: now / 1000 + 2,
      resetInMs: 3000,
      approximate: true,
    });
    expect(timing.reading).toBeUndefined();
  });

  it('binds the tightest budget of every form, since stacked limiters may each send another', () => {
    const fields = { RateLimit: '"default";r=3;t=30', 'RateLimit-Policy': '"default";q=10' };
    const draft06 = { 'RateLimit-Limit': '20', 'RateLimit-Remaining': '2', 'RateLimit-Reset': '5' };
    expect(read({ ...window(7, 30), ...fields }).window).toMatchObject({ limit: 10, remaining: 3 });
    expect(read({ ...window(1, 30), ...fields }).window).toMatchObject({ remaining: 1 });
    expect(read({ ...window(7, 30), ...fields, ...draft06 }).window).toMatchObject({
      limit: 20,
      remaining: 2,
    });
    // One that cannot be used leaves the others.
    const unusable = { ...window(0, 30), 'x-ratelimit-reset': 'x' };
    expect(read({ ...unusable, ...fields }).window?.remaining).toBe(3);
    expect(read({ ...unusable, ...fields }).unusable).toBeUndefined();
    expect(read(draft06).window?.remaining).toBe(2);
  });

  it('reads X-RateLimit-* sent by each of stacked limiters as a budget each: the tightest binds', () => {
    const stacked = new Headers([
      ['x-ratelimit-limit', '100'],
      ['x-ratelimit-remaining', '40'],
      ['x-ratelimit-reset', seconds(60)],
      ['x-ratelimit-limit', '5'],
      ['x-ratelimit-remaining', '0'],
      ['x-ratelimit-reset', seconds(2)],
    ]);
    expect(readTiming(stacked, 200, now).window).toMatchObject({
      limit: 5,
      remaining: 0,
      resetInMs: 2000,
    });
    // Not as many of each field: the least left holds until the latest reset, in whatever unit.
    const uneven = { ...window(0, 2), 'x-ratelimit-reset': `${seconds(2)}, ${seconds(60)}` };
    expect(read(uneven).window).toMatchObject({ limit: 60, remaining: 0, resetInMs: 60_000 });
    const units = { ...window(0, 2), 'x-ratelimit-reset': `5, ${seconds(1)}` };
    expect(read(units).window).toMatchObject({ remaining: 0, resetInMs: 6000 });
  });

  it('binds, of budgets with as little left, the one that resets last, whichever comes first', () => {
    const tied = (resets: string) =>
      read({
        'x-ratelimit-limit': '5, 100',
        'x-ratelimit-remaining': '0, 0',
        'x-ratelimit-reset': resets,
      });
    expect(tied('1, 5').window).toMatchObject({ remaining: 0, resetInMs: 6000 });
    expect(tied('5, 1').window).toMatchObject({ remaining: 0, resetInMs: 6000 });
    // Draft-07's field sent by two limiters: its members repeated, a budget each.
    const twice = new Headers([
      ['ratelimit', 'limit=100, remaining=0, reset=5'],
      ['ratelimit', 'limit=5, remaining=3, reset=1'],
    ]);
    expect(readTiming(twice, 200, now).window).toMatchObject({ limit: 100, remaining: 0 });
  });

  it('lets Retry-After take precedence over the fields on a 429, and waits for their reset without one', () => {
    const fields = { RateLimit: '"default";r=0;t=12', 'RateLimit-Policy': '"default";q=10' };
    expect(read({ ...fields, 'retry-after': '3' }, 429).retryAfter).toEqual({
      ms: 3000,
      source: 'retry-after',
    });
    expect(read(fields, 429).retryAfter).toEqual({ ms: 13_000, source: 'rate-limit-reset' });
  });

  it.each([
    [
      "draft-07's dictionary",
      { RateLimit: 'limit=5, remaining=4, reset=2', 'RateLimit-Policy': '5;w=2' },
    ],
    [
      "draft-07's dictionary, its members in another order",
      { RateLimit: 'remaining=4, Reset=2, limit=5', 'RateLimit-Policy': '5;w=2' },
    ],
    [
      "draft-08's named policy",
      {
        RateLimit: '"5-in-2sec"; r=4; t=2',
        'RateLimit-Policy': '"5-in-2sec"; q=5; w=2; pk=:ZGVhZGJlZWY=:',
      },
    ],
    [
      "draft-06's fields with a policy",
      {
        'RateLimit-Limit': '5',
        'RateLimit-Remaining': '4',
        'RateLimit-Reset': '2',
        'RateLimit-Policy': '5;w=2',
      },
    ],
  ])('reads %s into the same window, with the length the policy states', (_, headers) => {
    expect(read(headers).window).toEqual({
      limit: 5,
      remaining: 4,
      resetId: now / 1000 + 2,
      resetInMs: 3000,
      approximate: true,
      windowMs: 2000,
    });
  });

  it('names a draft-07 dictionary that lacks a member', () => {
    const timing = read({ RateLimit: 'limit=5, reset=2' });
    expect(timing.window).toBeUndefined();
    expect(timing.unusable).toMatch(/RateLimit "limit=5, reset=2"/);
  });
});
