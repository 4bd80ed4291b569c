import { describe, expect, it } from 'vitest';
import { MemoryQuotaStore } from '../src/index.js';
import { decide } from '../src/quota/Quota.js';
import { window } from './helpers/window.js';

// The rules every QuotaStore keeps, on the in-memory one, with an injected clock.

function storeAt(start = 1_000_000) {
  let now = start;
  const store = new MemoryQuotaStore({ now: () => now });
  return {
    store,
    advance: (ms: number) => {
      now += ms;
    },
    lease: async () => {
      const admission = await store.admit('b');
      if (!('lease' in admission)) throw new Error(`held: ${admission.reason}`);
      return admission.lease;
    },
  };
}

describe('MemoryQuotaStore', () => {
  it('admits one request while the budget is unknown, then as many as remain', async () => {
    const { store, lease } = storeAt();
    const probe = await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
    await store.observe('b', probe, { status: 200, window: window(3, 5000, 10, 100) });
    const leases = [await lease(), await lease(), await lease()];
    expect(new Set(leases).size).toBe(3);
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight', waitMs: 5000 });
  });

  it('holds until the reset once none remain, then probes the new window', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(0, 2000, 10, 100) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 2000 });
    advance(2000);
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('only tightens a window: an older window or a larger remaining for the same one is ignored', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(1, 5000, 10, 100) });
    await store.observe('b', await lease(), { status: 200, window: window(7, 5000, 10, 100) });
    await store.observe('b', await lease(), { status: 200, window: window(9, 4000, 10, 99) });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight', waitMs: 5000 });
  });

  it('takes an earlier reset still ahead as the same window (it tightens), one at its end as a late answer', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(50, 60_000, 60, 1060) });
    // A limiter that rounds its reset, or two instances a second apart: none remain until 60 s.
    await store.observe('b', await lease(), { status: 200, window: window(0, 59_000, 60, 1059) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 60_000 });

    // The same on a window of 3 s, said again 200 ms on: its earlier reset is 1.8 s ahead.
    const short = storeAt();
    await short.store.observe('b', await short.lease(), {
      status: 200,
      window: window(4, 3000, 5, 1003),
    });
    short.advance(200);
    await short.store.observe('b', await short.lease(), {
      status: 200,
      window: window(0, 1800, 5, 1002),
    });
    expect(await short.store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 2800 });

    const late = storeAt();

    await late.store.observe('b', await late.lease(), {
      status: 200,
      window: window(30, 60_000, 60, 1060),
    });
    // The last answer of the window before, whose reset is now: it says nothing of this one.
    await late.store.observe('b', await late.lease(), {
      status: 200,
      window: window(0, 1000, 60, 1000),
    });
    await late.lease();
  });

  it('keeps a minute window and a day window apart, and obeys the tighter', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(50, 30_000, 60, 100) });
    await store.observe('b', await lease(), {
      status: 200,
      window: window(1, 3_600_000, 1000, 500),
    });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight', waitMs: 3_600_000 });
  });

  it('extends a cooldown, never shortens it, and probes when it ends', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 429, cooldownMs: 5000 });
    await store.observe('b', 'late', { status: 429, cooldownMs: 1000 });
    expect(await store.admit('b')).toEqual({ reason: 'cooldown', waitMs: 5000 });
    advance(5000);
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('holds nothing while nobody states a budget, after the first answer and until a 429', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200 });
    const all = await Promise.all(Array.from({ length: 500 }, () => lease()));
    for (const one of all.slice(1)) await store.observe('b', one, { status: 200 });
    await store.observe('b', all[0]!, { status: 429, cooldownMs: 100, guessed: true });
    advance(100);
    // Then learnt: half of what went through before the 429 (and itself), the probe included.
    await store.observe('b', await lease(), { status: 200 });
    await Promise.all(Array.from({ length: 249 }, () => lease()));
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight' });
  });

  it('halves the learnt budget after a 429, and paces its rounds by a guessed wait', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200 });
    const four = [await lease(), await lease()];
    for (const one of four) await store.observe('b', one, { status: 200 });
    // A round of five meets a 429 after three answers: four went through, itself included.
    const round = await Promise.all(Array.from({ length: 5 }, () => lease()));
    for (const one of round.slice(0, 3)) await store.observe('b', one, { status: 200 });
    await store.observe('b', round[3]!, { status: 429, cooldownMs: 1000, guessed: true });
    // Answers of the same round teach nothing more.
    await store.observe('b', round[4]!, { status: 200 });
    expect(await store.admit('b')).toEqual({ reason: 'cooldown', waitMs: 1000 });
    advance(1000);
    // One goes first; then two in the round of a second that began with it.
    const probe = await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
    await store.observe('b', probe, { status: 200 });
    await store.observe('b', await lease(), { status: 200 });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 1000 });
    advance(1000);
    // A round spent whole adds one.
    const three = [await lease(), await lease(), await lease()];
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight' });
    expect(three).toHaveLength(3);
  });

  it('follows a reset said in seconds to the second once it has seen a whole window', async () => {
    const { store, lease, advance } = storeAt();
    const approx = (remaining: number, said: number, windowMs?: number) => ({
      limit: 5,
      remaining,
      resetId: 0,
      resetInMs: said + 1000,
      approximate: true,
      ...(windowMs && { windowMs }),
    });
    // The first window: a second past what it said.
    await store.observe('b', await lease(), { status: 200, window: approx(0, 2000) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 3000 });
    advance(3000);
    // The next one says the whole window again: it ends when it says.
    await store.observe('b', await lease(), { status: 200, window: approx(0, 2000) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 2000 });
    advance(2000);
    // Less than the whole window: rounding may have shortened it.
    await store.observe('b', await lease(), { status: 200, window: approx(0, 1000) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 2000 });
    advance(2000);
    // A stated length is believed at once; after a 429, never again.
    const other = storeAt();
    await other.store.observe('b', await other.lease(), {
      status: 200,
      window: approx(0, 2000, 2000),
    });
    expect(await other.store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 2000 });
    await store.observe('b', await lease(), { status: 429, cooldownMs: 100 });
    advance(100);
    await store.observe('b', await lease(), { status: 200, window: approx(0, 2000) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 3000 });
  });

  it('counts a response whose rate-limit headers it could not use against the budget it knew', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(2, 5000, 10, 100) });
    await store.observe('b', await lease(), { status: 200 });
    await store.observe('b', await lease(), { status: 200 });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 5000 });
  });

  it('still probes after an answer with no usable budget that was no answer of the service', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 503 });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('holds the key a little after a request that got no response, as no-response', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 0, cooldownMs: 400 });
    expect(await store.admit('b')).toEqual({ reason: 'no-response', waitMs: 400 });
    advance(400);
    await lease();
  });

  it('lets the next request probe when the probe gets no response, or is never sent', async () => {
    const { store, lease } = storeAt();
    const probe = await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
    await store.observe('b', probe, { status: 0 });
    const next = await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
    await store.release('b', next);
    expect(await store.admit('b')).toHaveProperty('lease');
  });

  it('does not learn the budget from a 5xx without headers (a proxy may have answered)', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 502 });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('tells watchers of every change, until they stop watching', async () => {
    const { store, lease } = storeAt();
    let calls = 0;
    const stop = store.watch('b', () => calls++);
    await store.release('b', await lease());
    stop();
    await store.release('b', await lease());
    expect(calls).toBe(1);
  });

  it('keeps buckets apart', async () => {
    const { store, lease } = storeAt();
    await lease();
    expect(await store.admit('other')).toHaveProperty('lease');
  });

  it('after a 429, learns the budget only from the request sent first, not from late answers', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(100, 60_000, 10, 100) });
    const early = await lease();
    await store.observe('b', await lease(), { status: 429, cooldownMs: 1000 });
    // A request sent before the 429 is answered during the cooldown, saying plenty is left.
    await store.observe('b', early, { status: 200, window: window(90, 60_000, 10, 100) });
    advance(1000);
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('bounds a stated budget that a 429 stating none contradicted by the learnt rounds, not a window', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(100, 60_000, 10, 100) });
    await store.observe('b', await lease(), { status: 429, cooldownMs: 1000 });
    advance(1000);
    await store.observe('b', await lease(), { status: 200, window: window(97, 60_000, 10, 100) });
    // The window says 97 are left; a round of two binds first. The 429, which may be a proxy's,
    // left no window of its own: the next round may be as large again.
    await lease();
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight' });
  });

  it('keeps a window stated only by 429s, to requests another window allowed, starting over for a day', async () => {
    const { store, lease, advance } = storeAt();
    const loose = (remaining: number) => window(remaining, 60_000, 100, 100);
    const limit = { ...window(0, 1000, 3, 40), windowMs: 1000 };
    await store.observe('b', await lease(), { status: 200, window: loose(99) });
    const burst = [await lease(), await lease(), await lease()];
    await store.observe('b', burst[0]!, { status: 200, window: loose(98) });
    await store.observe('b', burst[1]!, { status: 429, window: limit, cooldownMs: 1000 });
    await store.observe('b', burst[2]!, { status: 429, window: limit, cooldownMs: 1000 });
    const window3 = async () => {
      advance(1000);
      // The first answer after the end starts the window over: three, of which the probe is one.
      await store.observe('b', await lease(), { status: 200, window: loose(90) });
      const two = [await lease(), await lease()];
      expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight', waitMs: 1000 });
      for (const one of two) await store.observe('b', one, { status: 200, window: loose(90) });
    };
    for (let i = 0; i < 3; i++) await window3();
    // A day on, it is forgotten: the looser window is all that binds again.
    advance(86_400_000);
    await store.observe('b', await lease(), { status: 200, window: loose(90) });
    expect((await Promise.all(Array.from({ length: 10 }, () => lease()))).length).toBe(10);
  });

  it('keeps no window of limit 0 a 429 states', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(99, 60_000, 100, 100) });
    const zero = { ...window(0, 1000, 0, 40), windowMs: 1000 };
    await store.observe('b', await lease(), { status: 429, window: zero, cooldownMs: 1000 });
    advance(1000);
    await store.observe('b', await lease(), { status: 200, window: window(97, 60_000, 100, 100) });
    expect(await lease()).toBeTypeOf('string');
  });

  it('grows learnt rounds back by one, up to the size a 429 met, though the 429 said how long to wait', async () => {
    const { store, advance } = storeAt();
    const round = async (status = 200) => {
      const leases: string[] = [];
      for (let admission = await store.admit('b'); 'lease' in admission; ) {
        leases.push(admission.lease);
        admission = await store.admit('b');
      }
      for (const one of leases) {
        await store.observe('b', one, status === 429 ? { status, cooldownMs: 500 } : { status });
      }
      return leases.length;
    };
    // Reactive until the 429: the probe, then a round of 16 that meets it.
    const sizes: number[] = [await round()];
    const sixteen = await Promise.all(Array.from({ length: 16 }, () => store.admit('b')));
    expect(sixteen.every((one) => 'lease' in one)).toBe(true);
    // Fifteen answered, then the 429: met at sixteen.
    for (const [i, one] of sixteen.entries()) {
      const observation = i < 15 ? { status: 200 } : { status: 429, cooldownMs: 500 };
      if ('lease' in one) await store.observe('b', one.lease, observation);
    }
    advance(500);
    for (let i = 0; i < 5; i++) sizes.push(await round());
    // After the probe, half the size met, then one more each round: not 16 again at once.
    expect(sizes).toEqual([1, 1, 8, 9, 10, 11]);
  });

  it('takes one more off a learnt round for each 429 after the first in it', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200 });
    for (const size of [2, 4]) {
      const round = await Promise.all(Array.from({ length: size }, () => lease()));
      for (const one of round) await store.observe('b', one, { status: 200 });
    }
    const round = await Promise.all(Array.from({ length: 10 }, () => lease()));
    for (const one of round.slice(0, 7)) await store.observe('b', one, { status: 200 });
    // Three 429s: the first met at 8 (7 answered, and itself) halves it to 4, less one for each other.
    for (const one of round.slice(7))
      await store.observe('b', one, { status: 429, cooldownMs: 100, guessed: true });
    advance(100);
    await store.observe('b', await lease(), { status: 200 });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight' });
  });

  it('takes a seconds-until reset that must end after the known window as a new window', async () => {
    const { store, lease, advance } = storeAt();
    const approx = (remaining: number, tookMs?: number) => ({
      ...window(remaining, 3000, 10, 0),
      approximate: true,
      ...(tookMs && { tookMs }),
    });
    // The first window said 2 s: it is kept 3 s.
    await store.observe('b', await lease(), { status: 200, window: approx(9) });
    advance(2100);
    // Its last second is the service's next window, which says 2 s again:
    // that cannot be the window known, which ends in 0.9 s.
    await store.observe('b', await lease(), { status: 200, window: approx(0) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 2000 });
    // A report as late as that, said when the request left, is the same window.
    await store.observe('b', 'late', { status: 200, window: approx(5, 2100) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 2000 });
  });

  it('reports the key’s 429s in a row with each lease, ended only by an answer sent after them', async () => {
    const { store, lease, advance } = storeAt();
    const strikes = async () => {
      const admission = await store.admit('b');
      if (!('lease' in admission)) throw new Error(admission.reason);
      return [admission.lease, admission.strikes] as const;
    };
    const early = await lease();
    await store.observe('b', await lease().catch(() => early), { status: 429, cooldownMs: 100 });
    advance(100);
    let [one, count] = await strikes();
    expect(count).toBe(1);
    // A 5xx may be a proxy's: the count goes on.
    await store.observe('b', one, { status: 503 });
    await store.observe('b', (await strikes())[0], { status: 429, cooldownMs: 100 });
    advance(100);
    [one, count] = await strikes();
    expect(count).toBe(2);
    // An answer to a request sent before the 429s does not end them; one sent after does.
    await store.observe('b', early, { status: 200 });
    await store.observe('b', one, { status: 200 });
    expect((await strikes())[1]).toBe(0);
  });

  it('keeps at most 1,000 idle buckets, forgetting the least recently used', async () => {
    const { store } = storeAt();
    const teach = async (name: string) => {
      const admission = await store.admit(name);
      if ('lease' in admission) await store.observe(name, admission.lease, { status: 200 });
    };
    await teach('first');
    for (let i = 0; i < 1000; i++) await teach(`key ${i}`);
    // 'first' was forgotten: its budget is unknown again, so one request goes first.
    expect(await store.admit('first')).toHaveProperty('lease');
    expect(await store.admit('first')).toEqual({ reason: 'budget-unknown' });
    // The last one taught still knows: its round has room for a second request.
    expect(await store.admit('key 999')).toHaveProperty('lease');
    expect(await store.admit('key 999')).toHaveProperty('lease');
  });

  it('forgets idle buckets behind busy ones at the front: 40 requests in flight cannot stop it', async () => {
    const { store } = storeAt();
    const teach = async (name: string) => {
      const admission = await store.admit(name);
      if ('lease' in admission) await store.observe(name, admission.lease, { status: 200 });
    };
    for (let i = 0; i < 40; i++) expect(await store.admit(`busy ${i}`)).toHaveProperty('lease');
    await teach('first');
    for (let i = 0; i < 1100; i++) await teach(`key ${i}`);
    expect(await store.admit('first')).toHaveProperty('lease');
    expect(await store.admit('first')).toEqual({ reason: 'budget-unknown' });
    // The busy ones are kept: each still waits for the answer to its first request.
    expect(await store.admit('busy 0')).toEqual({ reason: 'budget-unknown' });
  });

  it('keeps the cooldown of every bucket past 10,000, and lets each go once it ends', async () => {
    const { store, advance } = storeAt();
    const cool = async (name: string) => {
      const admission = await store.admit(name);
      if (!('lease' in admission)) throw new Error(`held: ${admission.reason}`);
      await store.observe(name, admission.lease, { status: 429, cooldownMs: 60_000 });
    };
    await cool('first');
    advance(1000);
    for (let i = 0; i < 12_000; i++) await cool(`key ${i}`);
    expect(await store.admit('first')).toEqual({ reason: 'cooldown', waitMs: 59_000 });
    expect(await store.admit('key 5000')).toEqual({ reason: 'cooldown', waitMs: 60_000 });
    advance(60_000);
    expect(await store.admit('first')).toHaveProperty('lease');
    expect(await store.admit('key 5000')).toHaveProperty('lease');
  });

  it('forgets no spent window for other buckets, up to 10,000 buckets', async () => {
    const { store } = storeAt();
    const spend = async (name: string) => {
      const admission = await store.admit(name);
      if (!('lease' in admission)) throw new Error(`held: ${admission.reason}`);
      await store.observe(name, admission.lease, { status: 200, window: window(0, 60_000) });
    };
    await spend('spent');
    for (let i = 0; i < 1100; i++) await spend(`key ${i}`);
    expect(await store.admit('spent')).toEqual({ reason: 'budget-exhausted', waitMs: 60_000 });
    for (let i = 1100; i < 11_100; i++) await spend(`key ${i}`);
    // Past 10,000, the least recent goes, spent or not: memory stays bounded.
    expect(await store.admit('spent')).toHaveProperty('lease');
  });
});

/**
 * Ten callers that always have work, against a limiter that states nothing
 * and 429s past `limit` requests per `windowMs` (windows from the first
 * request, or a leaky bucket), with the back-off the client computes.
 * Simulated on the store's clock, in 10 ms steps; counts per minute.
 */
async function against(kind: 'fixed' | 'leaky', minutes: number, limit = 5, windowMs = 2000) {
  let now = 0;
  const store = new MemoryQuotaStore({ now: () => now });
  let start: number | undefined;
  let due = 0;
  const allows = (t: number) => {
    if (kind === 'leaky') {
      // nginx limit_req: 2.5 a second, a burst of 5, no delay.
      const at = Math.max(due, t);
      if (at - t > 1600) return false;
      due = at + 400;
      return true;
    }
    return fixed(t);
  };
  const windows = new Map<number, number>();
  const fixed = (t: number) => {
    start ??= t;
    const id = Math.floor((t - start) / windowMs);
    const used = windows.get(id) ?? 0;
    windows.set(id, used + 1);
    return used < limit;
  };
  const flight: { lease: string; end: number; ok: boolean; strikes: number }[] = [];
  const perMinute = Array.from({ length: minutes }, () => ({ ok: 0, tooMany: 0 }));
  for (; now < minutes * 60_000; now += 10) {
    for (const one of flight.filter((f) => f.end <= now)) {
      flight.splice(flight.indexOf(one), 1);
      const minute = perMinute[Math.floor(now / 60_000)]!;
      if (one.ok) {
        minute.ok++;
        await store.observe('b', one.lease, { status: 200 });
        continue;
      }
      minute.tooMany++;
      const { cooldownMs } = decide(
        { kind: 'response', status: 429 },
        {
          resend: true,
          attempt: 1,
          strikes: one.strikes + 1,
          maxRetryDelayMs: 60_000,
          random: () => 0.5,
        },
      );
      await store.observe('b', one.lease, { status: 429, cooldownMs, guessed: true });
    }
    while (flight.length < 10) {
      const admission = await store.admit('b');
      if (!('lease' in admission)) break;
      const ok = allows(now);
      flight.push({ lease: admission.lease, end: now + 10, ok, strikes: admission.strikes ?? 0 });
    }
  }
  return perMinute;
}

describe('MemoryQuotaStore against a limiter that states nothing', () => {
  it('learns a window longer than a round from how long the limiter stays closed', async () => {
    // 20 per 10 s: before, every window ended in a round of 429s and a few probes.
    const minutes = await against('fixed', 6, 20, 10_000);
    const late = minutes.slice(3);
    expect(late.reduce((sum, m) => sum + m.tooMany, 0)).toBeLessThanOrEqual(4);
    expect(late.reduce((sum, m) => sum + m.ok, 0) / late.length).toBeGreaterThan(60);
  });

  it.each(['fixed', 'leaky'] as const)(
    'meets a %s-window limiter by a 429 less and less often, and keeps sending',
    async (kind) => {
      const minutes = await against(kind, 10);
      const late = minutes.slice(5);
      const tooMany = late.reduce((sum, m) => sum + m.tooMany, 0);
      const ok = late.reduce((sum, m) => sum + m.ok, 0);
      // The limit is 150 a minute. In the first minute the budget is learnt.
      expect(tooMany).toBeLessThanOrEqual(5);
      expect(ok / late.length).toBeGreaterThan(60);
      expect(minutes[0]!.tooMany).toBeLessThanOrEqual(16);
    },
  );
});
