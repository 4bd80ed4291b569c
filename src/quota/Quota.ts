// The waits of a key: every decision about waiting, as pure functions of
// what is known (whether a failed attempt is retried and after how long, how
// long the key cools down, whether a wait is too long to take), and the line
// that holds each request until the key's quota store admits it.

import { AnimalStoreError, describeThrown, TimeoutError } from '../errors.js';
import { HORIZON_MS } from '../headers.js';
import type { RetryReason } from '../observe.js';
import { MAX_TIMER_MS, onAbort } from '../timers.js';
import { MemoryQuotaStore } from './MemoryQuotaStore.js';
import type { Admission, HoldReason, Observation, QuotaStore } from './store.js';

/** Back-off after a failure: from 500 ms, doubling up to 8 s. */
export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 8_000;
/** Shortest wait after a failure: a failing service never gets retries faster than this. */
export const BACKOFF_FLOOR_MS = 100;
/**
 * How long a key cools down after a 429 whose `Retry-After` asked for more
 * than a day: not believed as given, but no sign to send again soon either.
 * A minute is the shortest window of the service's plans.
 */
export const DISBELIEVED_COOLDOWN_MS = 60_000;
/**
 * Back-off after a 429 that says nothing of when to come back: from 1 s up to
 * ten minutes, by the key's 429s in a row; past `maxRetryDelayMs`, calls fail.
 */
export const LEARNT_BASE_MS = 1_000;
export const LEARNT_CAP_MS = 600_000;

/**
 * Exponential back-off with jitter for the `n`-th failure in a row (1-based):
 * `base` doubling up to `cap`, randomly shortened by up to half so that
 * clients do not retry in lockstep (`random` of `() => 0`: no jitter).
 */
export function backoffDelay(
  n: number,
  random: () => number = Math.random,
  base = BACKOFF_BASE_MS,
  cap = BACKOFF_CAP_MS,
): number {
  return Math.round(Math.min(cap, base * 2 ** Math.max(0, n - 1)) * (1 - random() * 0.5));
}

/**
 * How long the key is held after the `silent`-th request in a row that got
 * no response (timeoutMs below the service's latency, say): 100 ms doubling
 * up to 8 s, so that such requests never turn into a loop of probes.
 */
export const silentCooldown = (silent: number) =>
  backoffDelay(silent, () => 0, BACKOFF_FLOOR_MS, BACKOFF_CAP_MS);

/**
 * The one comparison of a wait with `maxRetryDelayMs`, for retries and holds
 * alike: how long to wait, or `undefined` when the wait is not to be taken
 * (the call fails instead). A wait the service demands (`mandated`:
 * Retry-After, a reset, a hold) is never shortened; a back-off is capped at
 * `maxRetryDelayMs`, but never below {@link BACKOFF_FLOOR_MS}, so that no
 * option makes retries a hot loop.
 */
export function waitToTake(ms: number, mandated: boolean, maxRetryDelayMs: number) {
  if (ms <= maxRetryDelayMs) return ms;
  return mandated || maxRetryDelayMs < BACKOFF_FLOOR_MS ? undefined : maxRetryDelayMs;
}

/**
 * How long a held request waits at most: a hold with an end (a cooldown, a
 * window's reset) as a mandated wait; one until a response arrives (`waitMs`
 * undefined), what is left of `maxRetryDelayMs` since it began `heldForMs`
 * ago. `undefined`: the call fails instead of waiting.
 */
export function holdToTake(waitMs: number | undefined, heldForMs: number, maxRetryDelayMs: number) {
  if (waitMs !== undefined) return waitToTake(waitMs, true, maxRetryDelayMs);
  return heldForMs < maxRetryDelayMs ? maxRetryDelayMs - heldForMs : undefined;
}

/** How an attempt ended, as far as waiting is concerned. */
export type Outcome =
  /** No response: a timeout, a connection error, or a body that broke off (`status` then set). */
  | {
      readonly kind: 'no-response';
      readonly timedOut: boolean;
      readonly status?: number | undefined;
    }
  /** A response; for a 429, the wait it asks for, or that it asked for more than a day. */
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly retryAfter?: { readonly ms: number; readonly source: RetryReason } | undefined;
      readonly retryAfterTooFar?: boolean;
    };

/** What the call knows besides the outcome. */
export interface Situation {
  /** The operation may be sent again after a 5xx or no response (a POST could add the animal twice). */
  readonly resend: boolean;
  /** Attempts sent so far, the failed one included. */
  readonly attempt: number;
  /** 429s in a row for the key, this one included. */
  readonly strikes?: number;
  readonly maxRetryDelayMs: number;
  readonly random: () => number;
}

/** The decision on a failed attempt. */
export interface Decision {
  /**
   * Wait this long, then try again; `undefined`: the call fails with the
   * attempt's error. `held`: the wait is the key's cooldown, which the quota
   * holds every call for (this one's next attempt included), so it is taken there.
   */
  readonly retry?: { readonly delayMs: number; readonly reason: RetryReason; readonly held?: true };
  /** For a 429: how long the key cools down for every caller, from now. */
  readonly cooldownMs?: number;
  /** For a 429: the wait was asked for but is longer than the client takes. */
  readonly tooLong?: boolean;
}

/**
 * Whether a failed attempt is retried, after how long and why. A 429 waits
 * what the service asks (never less than {@link BACKOFF_FLOOR_MS}, even for
 * `Retry-After: 0`), else backs off by the key's 429s in a row (1 s doubling
 * up to ten minutes, with jitter: a limiter that says nothing is given time to
 * recover), and cools the key down as long; a wait past `maxRetryDelayMs`
 * fails the call instead. A 429 asking more than a day is not believed, cools
 * the key a minute, and is not retried. A 5xx, a timeout
 * or no response backs off, for operations that may be resent. Anything else
 * (400, 401, 404, a body that does not validate) is final. Whether retries
 * are left is p-retry's count, not this.
 */
export function decide(outcome: Outcome, situation: Situation): Decision {
  const { resend, attempt, strikes = 1, maxRetryDelayMs, random } = situation;
  const { status = 0 } = outcome;
  if (outcome.kind === 'no-response' || status >= 500) {
    const reason =
      outcome.kind === 'response'
        ? 'server-error'
        : outcome.timedOut
          ? 'timeout'
          : 'connection-error';
    const delayMs = resend
      ? waitToTake(backoffDelay(attempt, random), false, maxRetryDelayMs)
      : undefined;
    return delayMs === undefined ? {} : { retry: { delayMs, reason } };
  }
  if (status !== 429) return {};
  if (outcome.retryAfterTooFar) return { cooldownMs: DISBELIEVED_COOLDOWN_MS, tooLong: true };
  const asked = outcome.retryAfter;
  // 429s in a row each wait at least 100 ms doubling, whatever they ask: a
  // `Retry-After: 0` to every request must not become a loop.
  const floor = backoffDelay(strikes, () => 0, BACKOFF_FLOOR_MS, LEARNT_CAP_MS);
  const guess = backoffDelay(strikes, random, LEARNT_BASE_MS, LEARNT_CAP_MS);
  const wanted = Math.max(floor, asked?.ms ?? guess);
  // The first back-off of the client's own may be capped at maxRetryDelayMs;
  // one after 429s in a row is the key's, never shortened.
  const delayMs = waitToTake(wanted, asked !== undefined || strikes > 1, maxRetryDelayMs);
  if (delayMs === undefined) return { cooldownMs: wanted, tooLong: true };
  // The key cools down as long as the retry waits: a back-off of the client's
  // own, capped at maxRetryDelayMs, is capped for every caller alike.
  return {
    cooldownMs: delayMs,
    retry: { delayMs, reason: asked?.source ?? 'rate-limited', held: true },
  };
}

/** One request asking to be sent: its `timeoutMs` also bounds each answer of the store. */
export interface HoldRequest {
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
  readonly maxRetryDelayMs: number;
  /** Told when the request is held, once per reason, with the wait ahead. */
  readonly onHold: (reason: HoldReason, delayMs: number, untimed: boolean) => void;
  /** The error when the hold is longer than `maxRetryDelayMs` (`waitMs` more, or no end in sight). */
  readonly tooLong: (reason: HoldReason, waitMs: number | undefined) => Error;
}

interface Waiter {
  readonly request: HoldRequest;
  /** `strikes`: the key's 429s in a row when the lease was granted. */
  readonly resolve: (lease: string, strikes: number) => void;
  readonly reject: (error: unknown) => void;
  reason?: HoldReason;
  /** When the current hold until a response began; when the first hold began. */
  untimedSince?: number | undefined;
  since?: number;
}

/** The requests of one process waiting for one bucket of one store, in arrival order. */
interface Line {
  readonly waiters: Waiter[];
  pumping: boolean;
  wake?: (() => void) | undefined;
  unwatch?: (() => void) | undefined;
  /** Changes the store signalled: one while the store was asked is not lost. */
  changes: number;
}

// Shared through globalThis so that the ESM and CommonJS builds, loaded in one
// process, still share one budget per key.
const shared = globalThis as { [key: symbol]: unknown };
function global<T>(name: string, make: () => T): T {
  const key = Symbol.for(`@animal-store/sdk/${name}@1`);
  shared[key] ??= make();
  return shared[key] as T;
}

/** The process-wide in-memory store: the default of every client. */
export const defaultQuotaStore = (): QuotaStore =>
  global('quota-store', () => new MemoryQuotaStore());

function linesOf(store: QuotaStore): Map<string, Line> {
  const byStore = global('quota-lines', () => new WeakMap<QuotaStore, Map<string, Line>>());
  const lines = byStore.get(store) ?? new Map<string, Line>();
  byStore.set(store, lines);
  return lines;
}

/**
 * Until when each bucket cools down after a 429 in this process, for every
 * store but the in-memory one (which records a 429 at once, on its own
 * clock and in its own scope): a store slow or failing to record it (a Redis
 * past its command timeout), or another store object on the same Redis, then
 * lets no call of this process out before the service said it may.
 */
const cooldowns = () => global('quota-cooldowns', () => new Map<string, number>());

/** What a store's method returns, or throws even synchronously, as a promise. */
function settle<T>(call: () => Promise<T> | T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `promise`, or a rejection with `error()` after `ms`; what it settles to later goes to `late`. */
function within<T>(promise: Promise<T>, ms: number, error: () => Error, late?: (value: T) => void) {
  if (ms > MAX_TIMER_MS) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      if (late) promise.then(late, () => undefined);
      reject(error());
    }, ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** An admission as the interface describes it (a wait believed within the horizon), or a throw. */
function checked(admission: Admission): Admission {
  const { lease, reason, waitMs } = (admission ?? {}) as Record<string, unknown>;
  if (typeof lease === 'string') return admission;
  if (
    typeof reason === 'string' &&
    (waitMs === undefined || (typeof waitMs === 'number' && waitMs >= 0))
  )
    return { reason: reason as HoldReason, waitMs: waitMs && Math.min(waitMs, HORIZON_MS) };
  throw new TypeError(
    `admit answered ${typeof admission === 'object' ? JSON.stringify(admission) : String(admission)}, not { lease } or { reason, waitMs? }`,
  );
}

/** How a quota keeps the key out of what it reports of a store's failures. */
export interface Redactor {
  text(text: string): string;
  error(error: unknown): unknown;
}

// A lease outlives its request's timeoutMs by this much: the store's own answers take time.
const LEASE_MARGIN_MS = 2_000;
// Without a store's change signal, a held request asks again this often.
const RECHECK_MS = 100;

/**
 * A client's handle on one key's budget: admits each request through the
 * store, holding it in arrival order while the store says no, and reports
 * each response back. Every request of every client with the same store and
 * bucket passes through one line per process, so the store is asked for one
 * request at a time and never by a crowd.
 */
export class Quota {
  readonly #store: QuotaStore;
  #bucket: string | Promise<string>;
  readonly #onError: (error: unknown) => void;
  readonly #redact: Redactor;
  /** Every store but the in-memory one: 429s are kept in `cooldowns()`, answers bounded by timeoutMs. */
  readonly #local: boolean;
  /** Requests in a row that got no response. */
  #silent = 0;
  /** The key's 429s in a row when each lease in flight was granted, as its store counts them. */
  readonly #granted = new Map<string, number>();
  /**
   * This client's own count of them, and its 429s so far: the floor of what
   * the store reports (a store may not count them), a 429 adding one unless
   * one came since its request was admitted.
   */
  #strikes = 0;
  #tooMany = 0;
  readonly #seen = new Map<string, number>();

  /** `onError` hears of a store that failed to record a response or a release. */
  constructor(
    store: QuotaStore,
    bucket: string | Promise<string>,
    onError: (error: unknown) => void,
    redact: Redactor = { text: (text) => text, error: (error) => error },
  ) {
    this.#store = store;
    this.#bucket = bucket;
    this.#onError = onError;
    this.#redact = redact;
    this.#local = !(store instanceof MemoryQuotaStore);
    if (typeof bucket !== 'string')
      void bucket.then(
        (name) => (this.#bucket = name),
        () => undefined,
      );
  }

  /** Resolves to a lease once the request may be sent; end it with `observe` or `release`. */
  async admit(request: HoldRequest): Promise<string> {
    const bucket = await this.#bucket;
    const { signal } = request;
    signal?.throwIfAborted();
    const lines = linesOf(this.#store);
    const line = lines.get(bucket) ?? { waiters: [], pumping: false, changes: 0 };
    lines.set(bucket, line);
    const { waiters } = line;
    return new Promise<string>((resolve, reject) => {
      const stop = signal
        ? onAbort(signal, () => {
            const at = waiters.indexOf(waiter);
            if (at < 0) return;
            waiters.splice(at, 1);
            if (at === 0) line.wake?.();
            reject(signal.reason);
          })
        : undefined;
      const waiter: Waiter = {
        request,
        resolve: (lease, strikes) => {
          stop?.();
          // Recorded by the client that asked: another client's quota may serve the line.
          this.#granted.set(lease, strikes);
          this.#seen.set(lease, this.#tooMany);
          resolve(lease);
        },
        reject: (error) => {
          stop?.();
          reject(error);
        },
      };
      waiters.push(waiter);
      void this.#pump(line, bucket);
    });
  }

  /**
   * The store's answer, checked, within the request's `timeoutMs` (else a
   * `TimeoutError`; a lease granted later goes back). A lease granted after
   * the request was aborted goes back in {@link #pump}.
   */
  #ask(bucket: string, { timeoutMs }: HoldRequest): Promise<Admission> {
    const until = (this.#local && cooldowns().get(bucket)) || 0;
    if (until > Date.now())
      return Promise.resolve({ reason: 'cooldown', waitMs: until - Date.now() });
    const answer = settle(() => this.#store.admit(bucket, { leaseMs: timeoutMs + LEASE_MARGIN_MS }))
      .then(checked)
      .catch((cause: unknown) => {
        throw this.#failed(cause);
      });
    const why = `The quota store did not admit the request within timeoutMs (${timeoutMs} ms); nothing was sent.`;
    return within(
      answer,
      timeoutMs,
      () => new TimeoutError(why),
      (late) => {
        if ('lease' in late) void this.release(late.lease);
      },
    );
  }

  #failed(cause: unknown): AnimalStoreError {
    const why = this.#redact.text(describeThrown(cause));
    return new AnimalStoreError(`The quota store failed to admit a request: ${why}`, {
      cause: this.#redact.error(cause),
    });
  }

  /**
   * Reports what the response to a leased request said. A store that fails
   * here is reported to `onError` and never fails the call: the response
   * arrived, and the service may have acted on it.
   */
  async observe(lease: string, observation: Observation, timeoutMs: number): Promise<void> {
    const { status } = observation;
    // Requests that get no response (timeoutMs below the service's latency,
    // say) must not turn into a loop of probes: each one in a row holds the
    // key a little longer, 100 ms doubling up to 8 s, until a response comes.
    const fresh = this.#seen.get(lease) === this.#tooMany;
    this.#seen.delete(lease);
    this.#granted.delete(lease);
    if (status === 429) this.#strikes += fresh ? 1 : 0;
    if (status === 429) this.#tooMany++;
    else if (fresh && ((status >= 200 && status < 300) || (status >= 400 && status < 500)))
      this.#strikes = 0;
    if (status === 0) observation = { ...observation, cooldownMs: silentCooldown(++this.#silent) };
    else this.#silent = 0;
    try {
      const bucket = await this.#bucket;
      const { cooldownMs = 0 } = observation;
      if (this.#local && status === 429 && cooldownMs > 0) {
        const all = cooldowns();
        const now = Date.now();
        for (const [name, until] of all) if (until <= now) all.delete(name);
        all.set(bucket, Math.max(now + Math.min(cooldownMs, HORIZON_MS), all.get(bucket) ?? 0));
      }
      const recorded = settle(() => this.#store.observe(bucket, lease, observation));
      const why = `the store did not record the response within timeoutMs (${timeoutMs} ms)`;
      await (this.#local ? within(recorded, timeoutMs, () => new Error(why)) : recorded);
    } catch (error) {
      this.#onError(error);
    }
  }

  /** The key's 429s in a row a 429 to `lease` makes: the 429s of requests sent together are one. */
  strikes(lease: string): number {
    const fresh = this.#seen.get(lease) === this.#tooMany;
    return Math.max(this.#granted.get(lease) ?? 0, this.#strikes - (fresh ? 0 : 1)) + 1;
  }

  /** Whether the store can say that a lease has lapsed. */
  get checksLeases(): boolean {
    return typeof this.#store.holds === 'function';
  }

  /** Whether `lease` still holds, checked as the request leaves; a store whose check breaks is taken to hold. */
  holds(lease: string): boolean {
    const bucket = this.#bucket;
    try {
      return typeof bucket !== 'string' || this.#store.holds?.(bucket, lease) !== false;
    } catch {
      return true;
    }
  }

  /** Ends the lease of a request that was never sent; a store failure goes to `onError`. */
  async release(lease: string): Promise<void> {
    this.#granted.delete(lease);
    this.#seen.delete(lease);
    try {
      const bucket = await this.#bucket;
      await settle(() => this.#store.release(bucket, lease));
    } catch (error) {
      this.#onError(error);
    }
  }

  /** Serves the line in arrival order: one request asked of the store at a time. */
  async #pump(line: Line, bucket: string): Promise<void> {
    if (line.pumping) return;
    line.pumping = true;
    const { waiters } = line;
    try {
      while (waiters.length > 0) {
        const head = waiters[0]!;
        const { changes } = line;
        let admission: Admission;
        try {
          admission = await this.#ask(bucket, head.request);
        } catch (error) {
          if (waiters[0] === head) waiters.shift();
          head.reject(error);
          continue;
        }
        if (!('lease' in admission)) {
          const pause = this.#hold(line, admission);
          // Watched from the first hold on (and asked again then: a change may have come first).
          if (pause !== undefined && !line.unwatch && this.#store.watch) {
            try {
              const stop = this.#store.watch(bucket, () => {
                line.changes++;
                line.wake?.();
              });
              line.unwatch = typeof stop === 'function' ? stop : () => undefined;
              continue;
            } catch {}
          }
          if (pause !== undefined && changes === line.changes) await this.#pause(line, pause);
        } else if (waiters[0] === head) {
          waiters.shift();
          const { strikes = 0 } = admission;
          head.resolve(admission.lease, Number.isSafeInteger(strikes) ? Math.max(0, strikes) : 0);
        } else {
          // The head was aborted while the store was asked.
          await this.release(admission.lease);
        }
      }
    } catch (cause) {
      // A store that answered nonsense, or a callback that threw: nobody is left waiting.
      for (const waiter of waiters.splice(0)) waiter.reject(this.#failed(cause));
    } finally {
      line.pumping = false;
      settle(async () => line.unwatch?.()).catch(() => undefined);
      line.unwatch = undefined;
      // An empty line is forgotten, so that memory stays bounded with many keys.
      linesOf(this.#store).delete(bucket);
    }
  }

  /**
   * Applies a hold to every waiter: fails those that would wait longer than
   * their `maxRetryDelayMs`, tells the rest. A hold with no end in sight (until
   * a response arrives) is bounded by `maxRetryDelayMs` from its start.
   */
  #hold(line: Line, { reason, waitMs }: { reason: HoldReason; waitMs?: number | undefined }) {
    const now = Date.now();
    let pause = waitMs;
    for (const waiter of [...line.waiters]) {
      const { maxRetryDelayMs } = waiter.request;
      waiter.untimedSince = waitMs === undefined ? (waiter.untimedSince ?? now) : undefined;
      const take = holdToTake(waitMs, now - (waiter.untimedSince ?? now), maxRetryDelayMs);
      waiter.since ??= now;
      // However many holds follow each other, none ends more than a day after the first began.
      const end = waitMs === undefined ? now : now + (take ?? 0);
      if (take === undefined || end - waiter.since > HORIZON_MS) {
        line.waiters.splice(line.waiters.indexOf(waiter), 1);
        waiter.reject(waiter.request.tooLong(reason, waitMs));
        continue;
      }
      if (waitMs === undefined) pause = Math.min(pause ?? take, take);
      if (waiter.reason !== reason) {
        waiter.reason = reason;
        waiter.request.onHold(reason, take, waitMs === undefined);
      }
    }
    return line.waiters.length > 0 ? pause : undefined;
  }

  /** Waits `ms`, or less when the store signals a change or the head leaves. */
  #pause(line: Line, ms: number): Promise<void> {
    const bound = line.unwatch ? ms : Math.min(ms, RECHECK_MS);
    return new Promise<void>((resolve) => {
      const timer = bound <= MAX_TIMER_MS ? setTimeout(() => line.wake?.(), bound) : undefined;
      line.wake = () => {
        clearTimeout(timer);
        line.wake = undefined;
        resolve();
      };
    });
  }
}
