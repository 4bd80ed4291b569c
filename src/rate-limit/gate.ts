/** What closed the gate, kept to explain a call that is refused while it is closed. */
export interface GateClosure {
  readonly until: number;
  readonly why: string;
  readonly headers: Headers;
}

/**
 * Client-wide hold shared by every call of one client: after a 429, or once a
 * response says no requests remain, no call is sent before `until`. The gate
 * only ever closes for longer, never shorter.
 */
export class RateLimitGate {
  #closure: GateClosure | undefined;

  /** Keeps every call out until `until` (epoch ms), unless already closed for longer. */
  close(until: number, why: string, headers: Headers): void {
    if (!this.#closure || until > this.#closure.until) this.#closure = { until, why, headers };
  }

  /** The closure in force at `nowMs`, if any. */
  closedAt(nowMs: number): GateClosure | undefined {
    const closure = this.#closure;
    if (closure && closure.until > nowMs) return closure;
    this.#closure = undefined;
    return undefined;
  }
}
