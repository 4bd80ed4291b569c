import { MemoryQuotaStore } from '../quota/MemoryQuotaStore.js';
import type { Admission, Observation } from '../quota/store.js';

interface Share {
  readonly limit: number;
  readonly resetId: number;
  /** Epoch milliseconds on this process's clock. */
  readonly resetAt: number;
  /** Requests this process may send in the window. */
  readonly allowance: number;
  sent: number;
}

/**
 * What one process may spend alone while Redis cannot be reached: the rules
 * of {@link MemoryQuotaStore} on what this process sees, and at most its share
 * of each window: what remained when it first saw the window, divided by the
 * processes Redis last counted (1 request per window when it never counted
 * any). Shares add up to no more than the window, so a fleet cut off from
 * Redis stays under the limit as long as its size holds.
 */
export class LocalShare {
  readonly #memory: MemoryQuotaStore;
  readonly #now: () => number;
  readonly #shares = new Map<string, Share>();
  /** Requests sent since the bucket's last share ended, counted into the next. */
  readonly #unshared = new Map<string, number>();
  /** Processes sharing the key, as Redis last counted them; 0 when unknown. */
  members = 0;

  constructor(now: () => number) {
    this.#now = now;
    this.#memory = new MemoryQuotaStore({ now });
  }

  async admit(bucket: string): Promise<Admission> {
    const now = this.#now();
    const share = this.#shares.get(bucket);
    if (share && share.resetAt <= now) this.#shares.delete(bucket);
    else if (share && share.sent >= share.allowance) {
      return { reason: 'budget-exhausted', waitMs: share.resetAt - now };
    }
    const admission = await this.#memory.admit(bucket);
    if ('lease' in admission) {
      const current = this.#shares.get(bucket);
      if (current) current.sent++;
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
    const newer =
      !share ||
      share.resetAt <= now ||
      window.limit !== share.limit ||
      window.resetId > share.resetId;
    if (!newer) return;
    const members = this.members;
    const allowance = members > 0 ? Math.max(1, Math.floor(window.remaining / members)) : 1;
    this.#shares.set(bucket, {
      limit: window.limit,
      resetId: window.resetId,
      resetAt: now + window.resetInMs,
      allowance,
      sent: this.#unshared.get(bucket) ?? 0,
    });
    this.#unshared.delete(bucket);
  }

  release(bucket: string, lease: string): Promise<void> {
    return this.#memory.release(bucket, lease);
  }

  watch(bucket: string, listener: () => void): () => void {
    return this.#memory.watch(bucket, listener);
  }
}
