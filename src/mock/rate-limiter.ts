import type { RateLimits } from './plans.js';

const DAY = 86_400_000;
/** Keys counted at once, at most. */
export const MOST_KEYS = 10_000;

interface Counters {
  minuteStart: number;
  minuteCount: number;
  dayStart: number;
  dayCount: number;
}

/** The state of the window that binds a caller now, as the `X-RateLimit-*` headers report it. */
export interface WindowState {
  readonly limit: number;
  readonly remaining: number;
  /** Epoch milliseconds at which the binding window resets. */
  readonly resetAt: number;
}

/**
 * Fixed-window counters per key: one window per clock minute (or `windowMs`)
 * and one per UTC day. The window with fewer requests left is the one reported and enforced.
 */
export class RateLimiter {
  readonly #limits: RateLimits;
  readonly #window: number;
  readonly #counters = new Map<string, Counters>();

  constructor(limits: RateLimits) {
    this.#limits = limits;
    this.#window = limits.windowMs ?? 60_000;
  }

  #current(key: string, now: number, keep: boolean): Counters {
    const minuteStart = now - (now % this.#window);
    const dayStart = now - (now % DAY);
    let c = this.#counters.get(key);
    if (c && keep) {
      // The key counted last is the last to be forgotten.
      this.#counters.delete(key);
      this.#counters.set(key, c);
    }
    if (!c) {
      c = { minuteStart, minuteCount: 0, dayStart, dayCount: 0 };
      if (!keep) return c;
      // Memory stays bounded whatever number of keys callers make up: the
      // key counted longest ago is forgotten first.
      if (this.#counters.size >= MOST_KEYS) {
        this.#counters.delete(this.#counters.keys().next().value as string);
      }
      this.#counters.set(key, c);
    }
    if (c.minuteStart !== minuteStart) Object.assign(c, { minuteStart, minuteCount: 0 });
    if (c.dayStart !== dayStart) Object.assign(c, { dayStart, dayCount: 0 });
    return c;
  }

  /** The binding window for `key`, without counting a request. */
  peek(key: string, now: number): WindowState {
    const c = this.#current(key, now, false);
    const minuteLeft = Math.max(0, this.#limits.perMinute - c.minuteCount);
    const dayLeft = Math.max(0, this.#limits.perDay - c.dayCount);
    // An exhausted day outlasts any minute: report the window that really ends the wait.
    return dayLeft === 0 || dayLeft < minuteLeft
      ? { limit: this.#limits.perDay, remaining: dayLeft, resetAt: c.dayStart + DAY }
      : {
          limit: this.#limits.perMinute,
          remaining: minuteLeft,
          resetAt: c.minuteStart + this.#window,
        };
  }

  /** Counts a request for `key` if one is left; `allowed` says whether it was. */
  take(key: string, now: number): { allowed: boolean; state: WindowState } {
    const before = this.peek(key, now);
    if (before.remaining === 0) {
      // Refused, but used: a key held at its limit is not the one forgotten next.
      if (this.#counters.has(key)) this.#current(key, now, true);
      return { allowed: false, state: before };
    }
    const c = this.#current(key, now, true);
    c.minuteCount++;
    c.dayCount++;
    return { allowed: true, state: this.peek(key, now) };
  }

  /** Forgets every counter. */
  reset(): void {
    this.#counters.clear();
  }
}
