import { HORIZON_MS, type WindowReport, windowOrder } from '../headers.js';
import type { Admission, AdmitRequest, Observation, QuotaStore } from './store.js';

interface Window {
  remaining: number;
  resetId: number; // 0: started over by this store, where it guessed
  resetAt: number; // on this store's clock
  /** A window learnt from a 429 (no response restates it): it starts over, `span` long, until `until`; timed from the first answer after (`fresh`). */
  rolls?: { limit: number; span: number; until: number; fresh?: boolean };
}

interface Bucket {
  readonly windows: Map<number, Window>; // by limit (a minute's and a day's differ)
  readonly inFlight: Set<string>;
  probe: string | undefined; // the lease sent to learn the budget, while it is unknown
  known: boolean; // learnt (or found unstated) since the last reset or cooldown
  cooldownUntil: number;
  quietUntil: number; // the key waits after requests that got no response
  readonly learnt: Learnt;
  span: number; // the longest seconds-until reset said: a whole window
  strict: boolean; // a 429 came although the budget allowed it: windows are not trusted alone
  /** When the first request after the last 429's wait was sent (0: none yet, or no 429 before it). */
  opening: number;
  readonly listeners: Set<() => void>;
}

/**
 * The budget of a key whose limiter states none, learnt the way TCP learns a
 * path's capacity: requests go in rounds of `allow`; a round ends once all
 * its requests are answered and, after a 429, once `pace` has passed since
 * it began. Until a 429, `allow` sets no bound (the client is reactive); the
 * first counts as lost the round's requests answered before it, and itself.
 * A round spent whole doubles `allow`, and after a 429,
 * `allow` grows by one up to just below the `ceiling` it was lost at, stays
 * there, trying the ceiling once every 2^`losses` rounds: so a limiter that
 * states nothing meets a 429 less and less often. A round lost above the
 * ceiling halves `allow`; one lost below it after rounds that went through
 * means the limiter's window is longer than a round: `pace` doubles.
 */
interface Learnt {
  allow: number;
  sent: number;
  from: number;
  pace: number;
  ceiling: number; // the allow a round was last lost at (0: none yet)
  calm: number; // rounds spent whole since
  losses: number; // rounds lost at the ceiling, less those spent whole there
  strikes: number; // rounds lost in a row: the key's 429s in a row
  /** When the last of them ended, and the answers since; when the first of the next came (0: a stated wait). */
  opened: number;
  got: number;
  struck: number;
}

const MAX_WINDOWS = 4;
const MAX_BUCKETS = 1000;
const MAX_ALLOW = 1 << 20;
const MAX_LOSSES = 6;
const MAX_PACE_MS = 600_000;

const newLearnt = (): Learnt => ({
  allow: MAX_ALLOW,
  sent: 0,
  from: 0,
  pace: 0,
  ceiling: 0,
  calm: 0,
  losses: 0,
  strikes: 0,
  opened: 0,
  got: 0,
  struck: 0,
});

/** A round was spent whole without a 429: the next one's size. */
function grow(learnt: Learnt): void {
  const { allow, ceiling, losses } = learnt;
  learnt.calm++;
  if (!ceiling || allow * 2 < ceiling) learnt.allow = Math.min(allow * 2, MAX_ALLOW);
  else if (allow + 1 < ceiling) learnt.allow++;
  else if (allow >= ceiling) {
    // The ceiling went through: the next try is one above; with no loss left, rounds double again.
    learnt.losses = Math.max(0, Math.min(losses, MAX_LOSSES) - 1);
    learnt.ceiling = learnt.losses || learnt.pace ? allow + 1 : 0;
    if (!learnt.ceiling) learnt.allow = Math.min(allow * 2, MAX_ALLOW);
  } else if (learnt.calm % 2 ** Math.min(losses, MAX_LOSSES) === 0) learnt.allow++;
}

/** The next request under a learnt budget: `true` (counted), else the wait until the round ends. */
export function takeLearnt(
  learnt: Learnt,
  inFlight: number,
  now: number,
): true | number | undefined {
  if (inFlight === 0 && now >= learnt.from + learnt.pace) {
    if (learnt.sent >= learnt.allow) grow(learnt);
    learnt.sent = 0;
    learnt.from = now;
  }
  if (learnt.sent >= learnt.allow)
    return inFlight > 0 ? undefined : learnt.from + learnt.pace - now;
  learnt.sent++;
  return true;
}

/**
 * The service answered a request sent after the key's 429s in a row. A
 * limiter that said nothing and then stayed closed at least as long as it
 * had been open counts over a window longer than a round: a round lasts the
 * cycle, and is half what went through in it, growing towards all of it.
 */
function endStreak(learnt: Learnt, now: number): void {
  const { strikes, struck, opened, got } = learnt;
  if (strikes > 1 && struck && opened && now - struck >= struck - opened) {
    learnt.pace = Math.min(Math.max(learnt.pace, now - opened), MAX_PACE_MS);
    learnt.ceiling = Math.max(1, got);
    learnt.allow = Math.ceil(learnt.ceiling / 2);
  }
  if (strikes || !opened) [learnt.opened, learnt.got] = [now, 0];
  learnt.strikes = 0;
}

/**
 * A 429 ends the round and cools the key down for its wait and at least a round; returns when the
 * next round begins. The 429s of one round are one loss; a 429 that states its wait halves it.
 */
export function learnt429(
  learnt: Learnt,
  waitMs: number,
  guessed: boolean,
  now: number,
  stated: boolean,
  inFlight: number,
): number {
  if (learnt.from <= now) {
    // Until a 429, all may go (MAX_ALLOW): the limiter let through those of the round answered.
    const { allow, ceiling } = learnt;
    const lost = allow < MAX_ALLOW ? allow : Math.max(1, learnt.sent - inFlight + 1);
    if (!guessed) learnt.allow = Math.max(1, Math.floor(lost / 2));
    else {
      if (lost < ceiling && learnt.calm > 0) learnt.pace = Math.min(learnt.pace * 2, MAX_PACE_MS);
      learnt.allow = Math.max(1, !ceiling || lost > ceiling ? Math.floor(lost / 2) : lost - 1);
    }
    // Unless a window is stated, rounds grow back only to below the size it met, whatever it said.
    learnt.ceiling = guessed || !stated ? lost : 0;
    if (!guessed || (ceiling && lost >= ceiling)) learnt.losses++;
    learnt.calm = 0;
    if (!learnt.strikes++) learnt.struck = guessed ? now : 0;
  } else if (guessed) learnt.allow = Math.max(1, learnt.allow - 1);
  // The first 429 of a streak: the waits of those after it are stretched by the streak.
  if (learnt.strikes === 1 && (guessed || learnt.losses > 1))
    learnt.pace = Math.max(learnt.pace, Math.min(waitMs, MAX_PACE_MS));
  learnt.sent = 0;
  learnt.from = Math.max(learnt.from, now + waitMs, now + learnt.pace);
  return learnt.from;
}

/** The in-memory store's answer without a promise: the quota asks it so when nobody is in line. */
export let admitNow: (store: MemoryQuotaStore, name: string) => Admission;

/**
 * The quota's state in this process's memory. One instance is the default of every client, so
 * that clients with the same key and base URL share one budget; pass `new MemoryQuotaStore()` as
 * `quotaStore` to give a client a budget of its own. See {@link QuotaStore} for its rules.
 */
export class MemoryQuotaStore implements QuotaStore {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;
  #leases = 0;

  /** @param options.now The clock, in epoch milliseconds (default `Date.now`). */
  constructor(options: { now?: (() => number) | undefined } = {}) {
    this.#now = options.now ?? (() => Date.now());
  }

  /** The bucket; with `touch`, moved last (least recently used first). */
  #bucket(name: string, touch = false): Bucket {
    const found = this.#buckets.get(name);
    if (found && !touch) return found;
    const bucket = found ?? {
      windows: new Map(),
      inFlight: new Set(),
      probe: undefined,
      known: false,
      cooldownUntil: 0,
      quietUntil: 0,
      learnt: newLearnt(),
      span: 0,
      strict: false,
      opening: 0,
      listeners: new Set(),
    };
    this.#buckets.delete(name);
    this.#buckets.set(name, bucket);
    return bucket;
  }

  /** Leases here end only by `observe` or `release`: one process cannot die mid-request without them. */
  async admit(name: string, _request?: AdmitRequest): Promise<Admission> {
    return this.#admit(name);
  }

  static {
    admitNow = (store, name) => store.#admit(name);
  }

  #admit(name: string): Admission {
    const bucket = this.#bucket(name, true);
    const now = this.#now();
    if (bucket.cooldownUntil > now) {
      return { reason: 'cooldown', waitMs: bucket.cooldownUntil - now };
    }
    if (bucket.quietUntil > now) {
      return { reason: 'no-response', waitMs: bucket.quietUntil - now };
    }
    const inFlight = bucket.inFlight.size;
    let left = Number.POSITIVE_INFINITY;
    let until = Number.POSITIVE_INFINITY;
    for (const [limit, window] of bucket.windows) {
      if (window.resetAt <= now) {
        bucket.known = false;
        if (!window.rolls || window.rolls.until <= now) {
          bucket.windows.delete(limit);
          continue;
        }
        const { rolls } = window;
        Object.assign(window, { remaining: rolls.limit, resetId: 0, resetAt: now + rolls.span });
        window.rolls.fresh = true;
      }
      if (window.remaining - inFlight < left) {
        left = window.remaining - inFlight;
        until = window.resetAt;
      }
    }
    if (left <= 0) {
      const reason = inFlight > 0 ? 'budget-in-flight' : 'budget-exhausted';
      return { reason, waitMs: until - now };
    }
    if (!bucket.known) {
      if (bucket.probe !== undefined) return { reason: 'budget-unknown' };
      if (bucket.windows.size === 0 || bucket.strict) takeLearnt(bucket.learnt, 0, now);
      bucket.probe = this.#grant(bucket);
      return { lease: bucket.probe, strikes: bucket.learnt.strikes };
    }
    if (bucket.windows.size === 0 || bucket.strict) {
      const taken = takeLearnt(bucket.learnt, inFlight, now);
      if (taken === undefined) return { reason: 'budget-in-flight' };
      if (taken !== true) return { reason: 'budget-exhausted', waitMs: taken };
    }
    return { lease: this.#grant(bucket), strikes: bucket.learnt.strikes };
  }

  #grant(bucket: Bucket): string {
    if (bucket.opening < 0) bucket.opening = this.#now();
    const lease = String(++this.#leases);
    bucket.inFlight.add(lease);
    return lease;
  }

  async observe(name: string, lease: string, observation: Observation): Promise<void> {
    const bucket = this.#bucket(name);
    const now = this.#now();
    const { status, window, cooldownMs, guessed } = observation;
    // While unknown, only the probe (or a report with no lease) teaches the budget.
    const teaches = bucket.known || lease === bucket.probe || lease === '';
    const stated = bucket.windows.size > 0;
    // The request counts against every window its response does not restate, and a window
    // started over began, at the latest, as the first answer after came.
    for (const [limit, known] of bucket.windows) {
      if (limit !== window?.limit) known.remaining = Math.max(0, known.remaining - 1);
      if (known.rolls?.fresh && status !== 0) {
        known.resetAt = now + known.rolls.span;
        known.rolls.fresh = false;
      }
    }
    if (window) {
      const known = bucket.windows.get(window.limit);
      const order =
        known && known.resetAt > now && !known.rolls ? windowOrder(known, window, now) : 1;
      if (!known || order > 0) {
        bucket.windows.set(window.limit, {
          remaining: window.remaining,
          resetId: window.resetId,
          resetAt: now + resetIn(bucket, window),
        });
        // A hostile server could name a new window in every response: the soonest to end goes.
        if (bucket.windows.size > MAX_WINDOWS) {
          const soonest = [...bucket.windows].sort(([, a], [, b]) => a.resetAt - b.resetAt)[0];
          if (soonest) bucket.windows.delete(soonest[0]);
        }
      } else if (order === 0) {
        known.remaining = Math.min(known.remaining, window.remaining);
      }
      bucket.known ||= teaches;
    } else if (answered(status)) bucket.known ||= teaches;
    if (answered(status)) {
      bucket.learnt.got++;
    }
    if (teaches && answered(status)) endStreak(bucket.learnt, now);
    if (status === 0 && cooldownMs) {
      bucket.quietUntil = Math.max(bucket.quietUntil, now + cooldownMs);
    }
    if (status === 429) {
      if (!guessed) learnWindow(bucket, window, now);
      const until = learnt429(
        bucket.learnt,
        cooldownMs ?? 0,
        guessed === true,
        now,
        stated,
        bucket.inFlight.size,
      );
      bucket.cooldownUntil = Math.max(bucket.cooldownUntil, until);
      bucket.span = Number.POSITIVE_INFINITY;
      // Stated windows are not trusted alone after a 429, unless one was learnt from a 429.
      bucket.strict = ![...bucket.windows.values()].some((known) => known.rolls);
      // After a cooldown one request goes first, whatever the budget.
      bucket.known = false;
    }
    this.#end(name, bucket, lease, now);
  }

  async release(name: string, lease: string): Promise<void> {
    this.#end(name, this.#bucket(name), lease, this.#now());
  }

  #end(name: string, bucket: Bucket, lease: string, now: number): void {
    bucket.inFlight.delete(lease);
    if (bucket.probe === lease) bucket.probe = undefined;
    for (const listener of bucket.listeners) listener();
    // Bounded: an idle bucket that knows nothing goes, and past MAX_BUCKETS each idle one of the 32
    // least recent whose windows are not spent (past ten times as many, any idle one); busy ones
    // are looked at last next time, so that they cannot stop it.
    const idle = (one: Bucket) =>
      one.inFlight.size + one.listeners.size === 0 &&
      Math.max(one.cooldownUntil, one.quietUntil) <= now;
    if (idle(bucket) && bucket.windows.size + +bucket.known + +bucket.strict === 0)
      this.#buckets.delete(name);
    const spent = (one: Bucket) =>
      [...one.windows.values()].some((window) => window.remaining <= 0 && window.resetAt > now);
    let looked = 0;
    for (const [other, one] of this.#buckets) {
      if (this.#buckets.size <= MAX_BUCKETS || looked++ === 32) break;
      if (!idle(one)) {
        this.#buckets.delete(other);
        this.#buckets.set(other, one);
      } else if (this.#buckets.size > 10 * MAX_BUCKETS || !spent(one)) this.#buckets.delete(other);
    }
  }

  watch(name: string, listener: () => void): () => void {
    const bucket = this.#bucket(name);
    bucket.listeners.add(listener);
    return () => bucket.listeners.delete(listener);
  }
}

/** One value per process, shared through globalThis by the ESM and CommonJS builds (one budget per key). */
export function shared<T>(name: string, make: () => T): T {
  const all = globalThis as { [key: symbol]: unknown };
  const key = Symbol.for(`@animal-store/sdk/${name}@1`);
  all[key] ??= make();
  return all[key] as T;
}

/** The process-wide in-memory store: the default of every client. */
export const defaultQuotaStore = (): QuotaStore =>
  shared('quota-store', () => new MemoryQuotaStore());

/** Deletes ended entries (an end by key) of the 32 least recently looked at, looking at them last next time. */
export function forgetEnded(ends: Map<string, number>, now: number): void {
  let looked = 0;
  for (const [name, end] of ends) {
    if (looked++ === 32) break;
    ends.delete(name);
    if (end > now) ends.set(name, end);
  }
}

/** The service answered (a 5xx may be a proxy's, and a 429 is no answer). */
const answered = (status: number) =>
  (status >= 200 && status < 300) || (status >= 400 && status < 429);

/**
 * How long a newly seen window lasts: a seconds-until reset holds a second more for rounding,
 * taken off when the value said is the window's whole length (stated, or the longest said before;
 * never after a 429), which no rounding can have shortened.
 */
export function resetIn(bucket: { span: number }, window: WindowReport): number {
  if (!window.approximate) return window.resetInMs;
  const said = window.resetInMs - 1000;
  const whole = Math.max(bucket.span, window.windowMs ?? 0);
  bucket.span = Math.max(bucket.span, said);
  return whole > 0 && said >= whole ? said : window.resetInMs;
}

/**
 * A 429 that says when to come back and states a window of another limit than the windows known
 * (two limiters stacked in one dialect, the looser writing its headers over the other's; a day's
 * limit behind a minute's headers) shows a limit no other response states. Its window is kept,
 * starting over at the first request after each end, for a day, as if restated: as long as the
 * policy says, else from the first request after the last 429's wait (or the 429, without one)
 * to its reset.
 */
function learnWindow(bucket: Bucket, window: WindowReport | undefined, now: number) {
  const { windows, opening } = bucket;
  bucket.opening = -1;
  if (!window || window.limit < 1 || ![...windows.keys()].some((other) => other !== window.limit))
    return;
  const known = windows.get(window.limit);
  if (!known) return;
  const span = window.windowMs ?? known.resetAt - (opening > 0 ? opening : now);
  known.rolls = { limit: window.limit, span, until: now + HORIZON_MS };
}
