import type { WindowReport } from '../headers.js';
import { windowOrder } from '../headers.js';
import { MemoryQuotaStore } from '../quota/MemoryQuotaStore.js';
import type { Admission, Observation } from '../quota/store.js';

interface Share {
  readonly limit: number;
  readonly resetId: number;
  /** Epoch milliseconds on this process's clock; infinite until the window is seen. */
  readonly resetAt: number;
  /** The least the service said remain in the window. */
  remaining: number;
  /** Requests this process may still send in the window. */
  allowance: number;
}

// Windows remembered for buckets nobody used lately are swept beyond this many.
const MAX_SHARES = 256;

/**
 * What one process may spend alone while Redis cannot be reached: the rules
 * of {@link MemoryQuotaStore} on what this process sees, and only its part of
 * each window. A window is split among the processes Redis last counted, by
 * each one's place in that count (4 among 3 processes: 2, 1 and 1), so that
 * the parts add up to the whole: nothing more of the window Redis was lost
 * in, then each later window's limit, this process's requests to learn of
 * the window included. A process Redis never counted takes one request per
 * window.
 */
export class LocalShare {
  readonly #memory: MemoryQuotaStore;
  readonly #now: () => number;
  /** The last window seen per bucket, kept also while Redis answers. */
  readonly #shares = new Map<string, Share>();
  #members = 0;
  #index = 0;

  constructor(now: () => number) {
    this.#now = now;
    this.#memory = new MemoryQuotaStore({ now });
  }

  /** How many processes share the key, and this one's place among them, as Redis last said. */
  counted(members: number, index: number): void {
    this.#members = members;
    this.#index = index;
  }

  /** Processes Redis last counted; 0 when it never answered. */
  get members(): number {
    return this.#members;
  }

  /** This process's part of `requests`. */
  #part(requests: number): number {
    const members = this.#members;
    if (members === 0) return Math.min(1, requests);
    return Math.floor(requests / members) + (this.#index < requests % members ? 1 : 0);
  }

  /**
   * Redis was just lost: from now on, this process keeps each window itself.
   * Of the window it was lost in, it sends nothing more: what this process
   * last saw remain may be taken already by the others' requests in flight,
   * and the parts of a remainder each process saw at another moment do not
   * add up to it. Each later window is split by its limit.
   */
  begin(): void {
    const now = this.#now();
    for (const [bucket, share] of this.#shares) {
      share.allowance = 0;
      if (share.resetAt > now) {
        const { limit, remaining, resetId } = share;
        void this.#memory.observe(bucket, '', {
          status: 200,
          window: { limit, remaining, resetId, resetInMs: share.resetAt - now },
        });
      }
    }
  }

  /**
   * Counts a request Redis admitted against this process's part, while other
   * processes may still spend theirs; a hold when nothing is left of it.
   */
  take(bucket: string): Admission | undefined {
    const held = this.#exhausted(bucket);
    if (held) return held;
    const share = this.#shares.get(bucket);
    if (share) share.allowance--;
    return undefined;
  }

  async admit(bucket: string): Promise<Admission> {
    const held = this.#exhausted(bucket);
    if (held) return held;
    const admission = await this.#memory.admit(bucket);
    const share = this.#shares.get(bucket);
    if ('lease' in admission && share) share.allowance--;
    return admission;
  }

  /** A hold when this process's part of the bucket's window is spent. */
  #exhausted(bucket: string): Admission | undefined {
    const now = this.#now();
    let share = this.#shares.get(bucket);
    if (share && share.resetAt <= now) {
      // The window is over; the next one is not seen yet, but its limit is known.
      share = {
        limit: share.limit,
        resetId: share.resetId,
        resetAt: Number.POSITIVE_INFINITY,
        remaining: share.limit,
        allowance: this.#part(share.limit),
      };
      this.#shares.set(bucket, share);
    }
    if (share && share.allowance <= 0) {
      // A window not seen yet has no known end: the hold is untimed, so a
      // call waits at most its maxRetryDelayMs for Redis to come back.
      return Number.isFinite(share.resetAt)
        ? { reason: 'budget-exhausted', waitMs: share.resetAt - now }
        : { reason: 'budget-exhausted' };
    }
    return undefined;
  }

  /**
   * Learns the windows. `local`: the request was admitted here, not by Redis;
   * `lost`: Redis cannot be reached now, so this process keeps the budget itself.
   */
  async observe(
    bucket: string,
    lease: string,
    observation: Observation,
    { local, lost }: { local: boolean; lost: boolean },
  ): Promise<void> {
    if (local || lost) await this.#memory.observe(bucket, local ? lease : '', observation);
    const { window } = observation;
    if (!window) return;
    const share = this.#shares.get(bucket);
    const now = this.#now();
    // A share started before its window was seen (resetAt unknown) takes the window.
    const known =
      share !== undefined &&
      share.limit === window.limit &&
      share.resetAt > now &&
      Number.isFinite(share.resetAt);
    const order = known ? windowOrder(share, window, now) : 1;
    if (share && order === 0) {
      share.remaining = Math.min(share.remaining, window.remaining);
      return;
    }
    if (order < 0) return;
    // A window first seen while Redis is lost, after a share of its limit was
    // started; or a window seen while Redis answers (split only once it is lost).
    const started = share && !Number.isFinite(share.resetAt) && share.limit === window.limit;
    this.#shares.set(bucket, {
      limit: window.limit,
      resetId: window.resetId,
      resetAt: now + window.resetInMs,
      remaining: window.remaining,
      allowance: started ? share.allowance : this.#part(window.limit) - (local ? 1 : 0),
    });
    if (this.#shares.size > MAX_SHARES) this.#sweep(now);
  }

  #sweep(now: number): void {
    for (const [bucket, share] of this.#shares) {
      if (share.resetAt <= now) this.#shares.delete(bucket);
    }
  }

  /** The windows this process saw that have not reset, to tell Redis once it is back. */
  reports(): Array<[bucket: string, window: WindowReport]> {
    const now = this.#now();
    const reports: Array<[string, WindowReport]> = [];
    for (const [bucket, { limit, remaining, resetId, resetAt }] of this.#shares) {
      if (Number.isFinite(resetAt) && resetAt > now) {
        reports.push([bucket, { limit, remaining, resetId, resetInMs: resetAt - now }]);
      }
    }
    return reports;
  }

  release(bucket: string, lease: string): Promise<void> {
    return this.#memory.release(bucket, lease);
  }

  watch(bucket: string, listener: () => void): () => void {
    return this.#memory.watch(bucket, listener);
  }
}
