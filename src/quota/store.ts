import type { WindowReport } from '../headers.js';

/** Why a request is held before it is sent. */
export type HoldReason =
  /** A 429 asked every caller of the key to wait (`Retry-After`, or the window's reset). */
  | 'cooldown'
  /**
   * The last requests got no response (timeouts, connections lost): the key
   * waits a little before the next, 100 ms doubling up to 8 s, so that no
   * outage turns into a loop of requests.
   */
  | 'no-response'
  /** No requests remain in the window (as the service stated it, or as learnt); held until it ends. */
  | 'budget-exhausted'
  /** What remains of the window is taken by requests in flight. */
  | 'budget-in-flight'
  /** The budget is unknown (no response yet, or the window reset): one request goes first. */
  | 'budget-unknown';

/** Every {@link HoldReason}, as messages say it. @internal */
export const HOLDS: Readonly<Record<HoldReason, string>> = {
  cooldown: 'the service answered 429 Too Many Requests, and every caller of this key waits',
  'no-response':
    'the last requests got no response, and the key waits a little before the next (100 ms, doubling up to 8 s)',
  'budget-exhausted':
    "no requests remain in the rate-limit window until it ends (by the service's headers, or by the client's own count where they say nothing or a quota store lost count)",
  'budget-in-flight':
    "the requests left in the rate-limit window (by the service's headers, or by the client's own count where they say nothing) are all in flight",
  'budget-unknown':
    'the budget is unknown until the response to the first request arrives (or the quota store answers)',
};

/** A store's answer to {@link QuotaStore.admit}. */
export type Admission =
  /**
   * Send now (`lease`: a non-empty text that names it among the bucket's
   * leases); end the lease with `observe` or `release`. `strikes`: the
   * key's 429s in a row so far (rounds lost, none answered since), which
   * lengthen the back-off after a 429 that says nothing; absent, each
   * client counts its own 429s in a row instead.
   */
  | { readonly lease: string; readonly strikes?: number | undefined }
  /**
   * Not now. `waitMs`: when to ask again at the latest; absent, ask again when
   * the store signals a change (a request in flight answered).
   */
  | { readonly reason: HoldReason; readonly waitMs?: number | undefined };

/** What the client tells a store about the request it asks to send. */
export interface AdmitRequest {
  /**
   * By then the request surely got its response or gave up (its `timeoutMs`
   * and a margin): a store shared by processes lets the lease lapse by then
   * at the latest, so that a process killed mid-request does not keep budget.
   */
  readonly leaseMs: number;
}

/** What a response said about the key's budget, with durations instead of clock readings. */
export interface Observation {
  /**
   * HTTP status of the response; `0` when none came (a timeout, an abort, a
   * connection lost after sending): the request may have reached the service,
   * so it is counted against every known window.
   */
  readonly status: number;
  /**
   * The rate-limit window the response reported, when its headers were
   * complete and credible. Without one (none came, or none usable), the
   * request counts against the known windows, and an answer of the service
   * (2xx or 4xx) makes the budget one to learn.
   */
  readonly window?: WindowReport | undefined;
  /**
   * For a 429: how long nobody may send, from now (a cooldown); for a request
   * that got no response, how long the key waits before the next (held as
   * `no-response`).
   */
  readonly cooldownMs?: number | undefined;
  /** For a 429 that said nothing of when to come back: `cooldownMs` is the client's back-off. */
  readonly guessed?: boolean | undefined;
}

/**
 * Where a key's budget lives: what the service last said about it, the
 * requests in flight, and the cooldown after a 429. Every request of every
 * client that uses the store is admitted by it. The default,
 * {@link MemoryQuotaStore}, is shared by the clients of one process; a store
 * shared by many processes (Redis, for example) makes a fleet
 * behave as one client.
 *
 * `bucket` names one key's budget at one base URL: a SHA-256 hash of both,
 * never the key itself. Every lease that `admit` grants is ended exactly once,
 * by `observe` (the request was sent: a response arrived, or `status: 0` when
 * none did) or `release` (the request was never sent).
 *
 * Semantics every store keeps:
 * - a cooldown only ever grows; nothing is admitted before it ends;
 * - while the budget is unknown (nothing seen yet, a window reset, a cooldown
 *   ended), one request is admitted and the rest wait for its response;
 * - otherwise no more requests are in flight than the smallest `remaining`
 *   of the known windows; a window is named by its limit and its reset, and a
 *   report of an older window (an earlier reset that, on the known window's
 *   clock, ends within a second: a late answer of the window before), or a
 *   larger `remaining` for the same one, is ignored (responses arriving out
 *   of order only tighten the budget); an earlier reset further ahead is the
 *   same window, whose lower `remaining` counts; a request counts against
 *   every known window its response does not restate;
 * - a 429 that is not `guessed` and reports a window of another limit than
 *   the windows known shows a limit no other response states: its window
 *   (a limit of 1 or more) is kept, starts over at each end, timed from the
 *   first answer after, for a day, and binds beside the others;
 * - while no window is stated (a 2xx or 4xx came without one), or after a
 *   429 while none learnt from a 429 is kept, the budget is learnt as well:
 *   requests go in rounds, the first of one request; a round ends
 *   once all its requests are answered (after a `guessed` 429, also once its
 *   `cooldownMs` has passed since it began); one spent whole without a 429
 *   doubles the next. After a 429 (which cools the key down at least a
 *   round), a round grows by one up to below the size it was lost at and
 *   tries that size once every 2^n rounds (n: rounds lost there); a round
 *   lost above it halves the size (each further 429 of the round takes one
 *   more off), one lost below it doubles the rounds' length; a limiter that
 *   stayed closed after `guessed` 429s at least as long as it had been open
 *   paces the rounds by that cycle, each half of what went through in it;
 * - a key's 429s in a row (one per round) are counted until the service
 *   answers (2xx or 4xx) a request sent after the last one, and reported
 *   with each lease as `strikes`;
 * - a window said in seconds-until (`approximate`) lasts the second more its
 *   `resetInMs` holds, unless the value said is the window's whole length
 *   (`windowMs`, or the longest said of an earlier window; never after a 429).
 */
export interface QuotaStore {
  /** Asks to send one request now. */
  admit(bucket: string, request?: AdmitRequest): Promise<Admission>;
  /** Records what a response said, and ends its lease. */
  observe(bucket: string, lease: string, observation: Observation): Promise<void>;
  /** Ends a lease whose request was never sent. */
  release(bucket: string, lease: string): Promise<void>;
  /**
   * Whether a lease still holds, asked just before its request is sent.
   * Optional: a store whose leases lapse (one shared by processes,
   * whose leases outlive a dead process only briefly) answers `false` once
   * the lease may have lapsed (the process was frozen, say), and the client
   * asks for admission again instead of sending.
   */
  holds?(bucket: string, lease: string): boolean;
  /**
   * Calls `listener` whenever the bucket's state changes, until the returned
   * function is called. Optional: without it, held requests ask again when
   * their wait ends, and at least every 100 ms.
   */
  watch?(bucket: string, listener: () => void): () => void;
}
