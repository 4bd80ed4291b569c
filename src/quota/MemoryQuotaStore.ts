import { windowOrder } from '../headers.js';
import type { Admission, AdmitRequest, Observation, QuotaStore } from './store.js';

interface Window {
  remaining: number;
  resetId: number;
  /** Epoch milliseconds on this store's clock. */
  resetAt: number;
}

interface Bucket {
  /** Known windows, by limit (a minute's and a day's differ). */
  readonly windows: Map<number, Window>;
  readonly inFlight: Set<string>;
  /** The lease sent to learn the budget, while it is unknown. */
  probe: string | undefined;
  /** The budget was learnt (or found invisible) since the last reset or cooldown. */
  known: boolean;
  cooldownUntil: number;
  /** Until then the key waits after requests that got no response. */
  quietUntil: number;
  readonly listeners: Set<() => void>;
}

// A hostile server could name a new window in every response.
const MAX_WINDOWS = 4;

/**
 * The quota's state in this process's memory. One instance, shared through
 * `globalThis`, is the default of every client, so that clients with the same
 * key and base URL share one budget; pass `new MemoryQuotaStore()` as
 * `quotaStore` to give a client a budget of its own. See {@link QuotaStore}
 * for the rules it keeps.
 */
export class MemoryQuotaStore implements QuotaStore {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;
  #leases = 0;

  /** @param options.now The clock, in epoch milliseconds (default `Date.now`). */
  constructor(options: { now?: (() => number) | undefined } = {}) {
    this.#now = options.now ?? (() => Date.now());
  }

  #bucket(name: string): Bucket {
    let bucket = this.#buckets.get(name);
    if (!bucket) {
      bucket = {
        windows: new Map(),
        inFlight: new Set(),
        probe: undefined,
        known: false,
        cooldownUntil: 0,
        quietUntil: 0,
        listeners: new Set(),
      };
      this.#buckets.set(name, bucket);
    }
    return bucket;
  }

  /** Leases here end only by `observe` or `release`: one process cannot die mid-request without them. */
  async admit(name: string, _request?: AdmitRequest): Promise<Admission> {
    const bucket = this.#bucket(name);
    const now = this.#now();
    if (bucket.cooldownUntil > now) {
      return { reason: 'cooldown', waitMs: bucket.cooldownUntil - now };
    }
    if (bucket.quietUntil > now) {
      return { reason: 'no-response', waitMs: bucket.quietUntil - now };
    }
    let left = Number.POSITIVE_INFINITY;
    let until = Number.POSITIVE_INFINITY;
    for (const [limit, window] of bucket.windows) {
      if (window.resetAt <= now) {
        bucket.windows.delete(limit);
        bucket.known = false;
      } else if (window.remaining - bucket.inFlight.size < left) {
        left = window.remaining - bucket.inFlight.size;
        until = window.resetAt;
      }
    }
    if (left <= 0) {
      const reason = bucket.inFlight.size > 0 ? 'budget-in-flight' : 'budget-exhausted';
      return { reason, waitMs: until - now };
    }
    if (!bucket.known) {
      if (bucket.probe !== undefined) return { reason: 'budget-unknown' };
      bucket.probe = this.#grant(bucket);
      return { lease: bucket.probe };
    }
    return { lease: this.#grant(bucket) };
  }

  #grant(bucket: Bucket): string {
    const lease = String(++this.#leases);
    bucket.inFlight.add(lease);
    return lease;
  }

  async observe(name: string, lease: string, observation: Observation): Promise<void> {
    const bucket = this.#bucket(name);
    const now = this.#now();
    const { status, window, cooldownMs } = observation;
    if (window) {
      const known = bucket.windows.get(window.limit);
      if (!known || known.resetAt <= now || windowOrder(known.resetId, window) > 0) {
        bucket.windows.set(window.limit, {
          remaining: window.remaining,
          resetId: window.resetId,
          resetAt: now + window.resetInMs,
        });
        if (bucket.windows.size > MAX_WINDOWS) dropSoonest(bucket.windows);
      } else if (windowOrder(known.resetId, window) === 0) {
        known.remaining = Math.min(known.remaining, window.remaining);
      }
      bucket.known = true;
    } else {
      // No usable budget: the request was likely counted all the same.
      for (const known of bucket.windows.values())
        known.remaining = Math.max(0, known.remaining - 1);
      // The service answered without a budget the client can follow: no
      // window to learn, so requests go out until a 429 (or a window's end).
      if ((status >= 200 && status < 300) || (status >= 400 && status < 429)) bucket.known = true;
    }
    if (status === 0 && cooldownMs) {
      bucket.quietUntil = Math.max(bucket.quietUntil, now + cooldownMs);
    }
    if (status === 429) {
      bucket.cooldownUntil = Math.max(bucket.cooldownUntil, now + (cooldownMs ?? 0));
      // After a cooldown one request goes first, even when the budget is invisible.
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
    // Memory stays bounded with many keys: an idle bucket that knows nothing is dropped.
    const idle = bucket.inFlight.size === 0 && bucket.listeners.size === 0;
    if (
      idle &&
      bucket.windows.size === 0 &&
      bucket.cooldownUntil <= now &&
      bucket.quietUntil <= now &&
      !bucket.known
    ) {
      this.#buckets.delete(name);
    }
  }

  watch(name: string, listener: () => void): () => void {
    const bucket = this.#bucket(name);
    bucket.listeners.add(listener);
    return () => bucket.listeners.delete(listener);
  }
}

function dropSoonest(windows: Map<number, Window>): void {
  let soonest: number | undefined;
  let at = Number.POSITIVE_INFINITY;
  for (const [limit, window] of windows) {
    if (window.resetAt < at) {
      at = window.resetAt;
      soonest = limit;
    }
  }
  if (soonest !== undefined) windows.delete(soonest);
}
