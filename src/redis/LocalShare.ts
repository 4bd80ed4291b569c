import { MemoryQuotaStore } from '../quota/MemoryQuotaStore.js';
import type { Admission, Observation } from '../quota/store.js';

interface Share {
  readonly limit: number;
  readonly resetId: number;
  /** Epoch milliseconds on this process's clock. */
  readonly resetAt: number;
  /** The least the service said remain in the window. */
  remaining: number;
  /** Requests this process may still send in the window. */
  allowance: number;
}

/**
 * What one process may spend alone while Redis cannot be reached: the rules
 * of {@link MemoryQuotaStore} on what this process sees, and at most its share
 * of each window. A window's requests are split among the processes Redis
 * last counted, by their place in that count (4 left among 3 processes: 2, 1
 * and 1), so that the shares add up to what remains; a process Redis never
 * counted takes one request per window. The split is of what remained when
 * Redis was lost, then of what remains when each new window is first seen.
 */
export class LocalShare {
  readonly #memory: MemoryQuotaStore;
  readonly #now: () => number;
  readonly #shares = new Map<string, Share>();
  /** Requests sent since the bucket's last share ended, before a window was seen. */
  readonly #unshared = new Map<string, number>();
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

  /** This process's part of `remaining` requests. */
  #part(remaining: number): number {
    const members = this.#members;
    if (members === 0) return Math.min(1, remaining);
    return Math.floor(remaining / members) + (this.#index < remaining % members ? 1 : 0);
  }

  /** Redis was just lost: from now on, only this process's part of what remains. */
  begin(): void {
    for (const share of this.#shares.values()) share.allowance = this.#part(share.remaining);
  }

  async admit(bucket: string): Promise<Admission> {
    const now = this.#now();
    const share = this.#shares.get(bucket);
    if (share && share.resetAt <= now) this.#shares.delete(bucket);
    else if (share && share.allowance <= 0) {
      return { reason: 'budget-exhausted', waitMs: share.resetAt - now };
    }
    const admission = await this.#memory.admit(bucket);
    const current = this.#shares.get(bucket);
    if ('lease' in admission) {
      if (current) current.allowance--;
      else this.#unshared.set(bucket, (this.#unshared.get(bucket) ?? 0) + 1);
    }
    return admission;
  }

  async observe(bucket: string, lease: string, observation: Observation): Promise<void> {
    await this.#memory.observe(bucket, lease, observation);
    const { window } = observation;
    if (!window) return;
    const share = this.#shares.get(bucket);
    const now = this.#now();
    if (share && share.limit === window.limit && share.resetId === window.resetId) {
      share.remaining = Math.min(share.remaining, window.remaining);
      return;
    }
    const newer =
      !share ||
      share.resetAt <= now ||
      window.limit !== share.limit ||
      window.resetId > share.resetId;
    if (!newer) return;
    // What remains is after every request counted so far, this process's
    // included; but a process Redis never counted takes one request per
    // window, the one it may have sent to learn of the window among them.
    const sent = this.#members === 0 ? (this.#unshared.get(bucket) ?? 0) : 0;
    this.#unshared.delete(bucket);
    this.#shares.set(bucket, {
      limit: window.limit,
      resetId: window.resetId,
      resetAt: now + window.resetInMs,
      remaining: window.remaining,
      allowance: this.#part(window.remaining) - sent,
    });
  }

  release(bucket: string, lease: string): Promise<void> {
    return this.#memory.release(bucket, lease);
  }

  watch(bucket: string, listener: () => void): () => void {
    return this.#memory.watch(bucket, listener);
  }
}
