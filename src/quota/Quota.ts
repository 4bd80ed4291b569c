import { holdToTake, silentCooldown } from '../decide.js';
import { AnimalStoreError, TimeoutError } from '../errors.js';
import { HORIZON_MS } from '../headers.js';
import { describeThrown } from '../redact.js';
import { MAX_TIMER_MS, onAbort } from '../timers.js';
import { MemoryQuotaStore } from './MemoryQuotaStore.js';
import type { Admission, HoldReason, Observation, QuotaStore } from './store.js';

/** One request asking to be sent. */
export interface HoldRequest {
  readonly signal: AbortSignal | undefined;
  /** The request's own time limit: also bounds each answer of the store. */
  readonly timeoutMs: number;
  readonly maxRetryDelayMs: number;
  /** Told when the request is held, once per reason, with the wait ahead. */
  readonly onHold: (reason: HoldReason, delayMs: number) => void;
  /**
   * The error to fail with when the hold is longer than `maxRetryDelayMs`:
   * `waitMs` more, or (`undefined`) no response came within it.
   */
  readonly tooLong: (reason: HoldReason, waitMs: number | undefined) => Error;
}

interface Waiter {
  readonly request: HoldRequest;
  readonly resolve: (lease: string) => void;
  readonly reject: (error: unknown) => void;
  reason?: HoldReason;
  /** When the current hold until a response arrives began. */
  untimedSince?: number | undefined;
}

/** The requests of one process waiting for one bucket of one store, in arrival order. */
interface Line {
  readonly waiters: Waiter[];
  pumping: boolean;
  wake: (() => void) | undefined;
  unwatch: (() => void) | undefined;
  /** How many changes the store signalled: one while the store was asked is not lost. */
  changes: number;
}

// Shared through globalThis so that the ESM and CommonJS builds, loaded in one
// process, still share one budget per key.
const shared = globalThis as { [key: symbol]: unknown };
const STORE = Symbol.for('@animal-store/sdk/quota-store@1');
const LINES = Symbol.for('@animal-store/sdk/quota-lines@1');

/** The process-wide in-memory store: the default of every client. */
export function defaultQuotaStore(): QuotaStore {
  shared[STORE] ??= new MemoryQuotaStore();
  return shared[STORE] as QuotaStore;
}

function linesOf(store: QuotaStore): Map<string, Line> {
  shared[LINES] ??= new WeakMap<QuotaStore, Map<string, Line>>();
  const byStore = shared[LINES] as WeakMap<QuotaStore, Map<string, Line>>;
  let lines = byStore.get(store);
  if (!lines) {
    lines = new Map();
    byStore.set(store, lines);
  }
  return lines;
}

const COOLDOWNS = Symbol.for('@animal-store/sdk/quota-cooldowns@1');

/**
 * Until when each bucket (a key and base URL) cools down after a 429, in this
 * process, for the stores that are not the in-memory one: kept apart from
 * them, so that a store slow or failing to record the 429 (a Redis past its
 * command timeout), or another store object on the same Redis, lets no call
 * of this process out before the service said it may. A `MemoryQuotaStore`
 * records the 429 itself at once, on its own clock, and keeps its own scope
 * (a budget per test, say), so it needs none of this.
 */
function cooldowns(): Map<string, number> {
  shared[COOLDOWNS] ??= new Map<string, number>();
  return shared[COOLDOWNS] as Map<string, number>;
}

/** What a store's method returns, or throws even synchronously, as a promise. */
function settle<T>(call: () => Promise<T> | T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `promise`, or a rejection with `message` once `ms` have passed. */
function bounded<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  if (ms > MAX_TIMER_MS) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** An admission as the interface describes it, or a throw. */
function checked(admission: Admission): Admission {
  const value = admission as Partial<{ lease: unknown; reason: unknown; waitMs: unknown }> | null;
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(`admit answered ${String(admission)}`);
  }
  if (typeof value.lease === 'string') return admission;
  const { reason, waitMs } = value;
  if (typeof reason === 'string' && waitMs === undefined) return admission;
  if (typeof reason === 'string' && typeof waitMs === 'number' && waitMs >= 0) {
    // Believed within the horizon, like any header.
    return { reason: reason as HoldReason, waitMs: Math.min(waitMs, HORIZON_MS) };
  }
  throw new TypeError(`admit answered ${JSON.stringify(admission)}`);
}

/** How a quota keeps the key out of what it reports of a store's failures. */
export interface Redactor {
  text(text: string): string;
  error(error: unknown): unknown;
}

const asIs: Redactor = { text: (text) => text, error: (error) => error };

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
  /** Whether this process keeps 429 cooldowns itself: for every store but the in-memory one. */
  readonly #local: boolean;
  /** Requests in a row that got no response. */
  #silent = 0;
  /** 429s in a row, for the wait after one that says nothing of when to come back. */
  #strikes = 0;

  /** `onError` hears of a store that failed to record a response or a release. */
  constructor(
    store: QuotaStore,
    bucket: string | Promise<string>,
    onError: (error: unknown) => void,
    redact: Redactor = asIs,
  ) {
    this.#store = store;
    this.#bucket = bucket;
    this.#onError = onError;
    this.#redact = redact;
    this.#local = !(store instanceof MemoryQuotaStore);
    if (typeof bucket !== 'string') {
      bucket.then(
        (name) => {
          this.#bucket = name;
        },
        () => undefined,
      );
    }
  }

  /** Resolves to a lease once the request may be sent; end it with `observe` or `release`. */
  async admit(request: HoldRequest): Promise<string> {
    const bucket = typeof this.#bucket === 'string' ? this.#bucket : await this.#bucket;
    request.signal?.throwIfAborted();
    const lines = linesOf(this.#store);
    const line = lines.get(bucket);
    if (line) return this.#wait(line, bucket, request, false);
    // Nobody waits: ask the store at once. The line stays busy meanwhile, so
    // that requests arriving now queue behind this one.
    const own: Line = {
      waiters: [],
      pumping: true,
      wake: undefined,
      unwatch: undefined,
      changes: 0,
    };
    lines.set(bucket, own);
    const asking = this.#ask(bucket, request);
    let admission: Admission;
    try {
      admission = await asking;
    } catch (error) {
      // Aborted while the store was asked: #ask returns a lease granted later.
      asking.catch(() => undefined).finally(() => this.#restart(own, bucket));
      throw error;
    }
    if ('lease' in admission) {
      this.#restart(own, bucket);
      return admission.lease;
    }
    own.pumping = false;
    return this.#wait(own, bucket, request, true);
  }

  /**
   * The store's answer for `request`, checked, within the request's
   * `timeoutMs`: a store that answers later fails the request with a
   * `TimeoutError`, and a lease it grants after that, or after the request
   * was aborted, goes back to it.
   */
  #ask(bucket: string, request: HoldRequest): Promise<Admission> {
    const until = this.#local ? cooldowns().get(bucket) : undefined;
    if (until !== undefined) {
      const waitMs = until - Date.now();
      if (waitMs > 0) return Promise.resolve({ reason: 'cooldown', waitMs });
      cooldowns().delete(bucket);
    }
    const { timeoutMs } = request;
    const answer = settle(() => this.#store.admit(bucket, { leaseMs: timeoutMs + LEASE_MARGIN_MS }))
      .then(checked)
      .then(undefined, (cause: unknown) => {
        throw this.#failed(cause);
      });
    let given = true;
    const giveBack = (admission: Admission) => {
      if (!given && 'lease' in admission) {
        settle(() => this.#store.release(bucket, admission.lease)).catch(() => undefined);
      }
    };
    answer.then(giveBack, () => undefined);
    return new Promise<Admission>((resolve, reject) => {
      const fail = (error: unknown) => {
        given = false;
        reject(error);
      };
      const timer =
        timeoutMs <= MAX_TIMER_MS
          ? setTimeout(
              () =>
                fail(
                  new TimeoutError(
                    `The quota store did not admit the request within timeoutMs (${timeoutMs} ms); nothing was sent.`,
                  ),
                ),
              timeoutMs,
            )
          : undefined;
      const { signal } = request;
      const stop = signal ? onAbort(signal, () => fail(signal.reason)) : undefined;
      answer
        .then((admission) => {
          if (given) resolve(admission);
        }, reject)
        .finally(() => {
          clearTimeout(timer);
          stop?.();
        });
    });
  }

  /** The error of a store that failed to admit, without the key. */
  #failed(cause: unknown): AnimalStoreError {
    const why = this.#redact.text(describeThrown(cause));
    return new AnimalStoreError(`The quota store failed to admit a request: ${why}`, {
      cause: this.#redact.error(cause),
    });
  }

  /** After asking the store directly: serves whoever queued meanwhile, or forgets the line. */
  #restart(line: Line, bucket: string): void {
    line.pumping = false;
    if (line.waiters.length > 0) void this.#pump(line, bucket);
    else linesOf(this.#store).delete(bucket);
  }

  #wait(line: Line, bucket: string, request: HoldRequest, first: boolean): Promise<string> {
    const { signal } = request;
    return new Promise<string>((resolve, reject) => {
      const stop = signal
        ? onAbort(signal, () => {
            const at = line.waiters.indexOf(waiter);
            if (at < 0) return;
            line.waiters.splice(at, 1);
            if (at === 0) line.wake?.();
            reject(signal.reason);
          })
        : undefined;
      const waiter: Waiter = {
        request,
        resolve: (lease) => {
          stop?.();
          resolve(lease);
        },
        reject: (error) => {
          stop?.();
          reject(error);
        },
      };
      if (first) line.waiters.unshift(waiter);
      else line.waiters.push(waiter);
      void this.#pump(line, bucket);
    });
  }

  /**
   * Reports what the response to a leased request said. A store that fails
   * here is reported to `onError` and never fails the call: the response
   * arrived, and the service may have acted on it.
   */
  async observe(lease: string, observation: Observation, timeoutMs: number): Promise<void> {
    // Requests that get no response (timeoutMs below the service's latency,
    // say) must not turn into a loop of probes: each one in a row holds the
    // key a little longer, 100 ms doubling up to 8 s, until a response comes.
    if (observation.status === 0) {
      this.#silent++;
      observation = { ...observation, cooldownMs: silentCooldown(this.#silent) };
    } else {
      this.#silent = 0;
      this.#strikes = observation.status === 429 ? this.#strikes + 1 : 0;
    }
    try {
      const bucket = typeof this.#bucket === 'string' ? this.#bucket : await this.#bucket;
      const { cooldownMs } = observation;
      if (this.#local && observation.status === 429 && cooldownMs !== undefined && cooldownMs > 0) {
        const all = cooldowns();
        const now = Date.now();
        for (const [name, until] of all) if (until <= now) all.delete(name);
        const until = now + Math.min(cooldownMs, HORIZON_MS);
        all.set(bucket, Math.max(until, all.get(bucket) ?? 0));
      }
      const recorded = settle(() => this.#store.observe(bucket, lease, observation));
      // The built-in store answers at once; any other is bounded by a timer.
      await (this.#store.constructor === MemoryQuotaStore
        ? recorded
        : bounded(
            recorded,
            timeoutMs,
            `the store did not record the response within timeoutMs (${timeoutMs} ms)`,
          ));
    } catch (error) {
      this.#onError(error);
    }
  }

  /** 429s in a row that this client saw. */
  get strikes(): number {
    return this.#strikes;
  }

  /**
   * Whether `lease` still holds, for a store that can say: checked as the
   * request leaves. A store whose check breaks is taken to hold.
   */
  get checksLeases(): boolean {
    return typeof this.#store.holds === 'function';
  }

  holds(lease: string): boolean {
    const bucket = this.#bucket;
    if (typeof bucket !== 'string') return true;
    try {
      return this.#store.holds?.(bucket, lease) !== false;
    } catch {
      return true;
    }
  }

  /** Ends the lease of a request that was never sent; a store failure goes to `onError`. */
  async release(lease: string): Promise<void> {
    try {
      const bucket = typeof this.#bucket === 'string' ? this.#bucket : await this.#bucket;
      await settle(() => this.#store.release(bucket, lease));
    } catch (error) {
      this.#onError(error);
    }
  }

  async #pump(line: Line, bucket: string): Promise<void> {
    if (line.pumping) return;
    line.pumping = true;
    try {
      if (!line.unwatch && this.#store.watch) {
        try {
          line.unwatch = this.#store.watch(bucket, () => {
            line.changes++;
            line.wake?.();
          });
        } catch {}
      }
      while (line.waiters.length > 0) {
        const head = line.waiters[0]!;
        const changes = line.changes;
        let admission: Admission;
        try {
          admission = await this.#ask(bucket, head.request);
        } catch (error) {
          if (line.waiters[0] === head) line.waiters.shift();
          head.reject(error);
          continue;
        }
        if ('lease' in admission) {
          if (line.waiters[0] === head) {
            line.waiters.shift();
            head.resolve(admission.lease);
          } else {
            // The head was aborted while the store was asked.
            const { lease } = admission;
            await settle(() => this.#store.release(bucket, lease)).catch(() => undefined);
          }
          continue;
        }
        const pause = this.#hold(line, admission);
        if (pause !== undefined && changes === line.changes) await this.#pause(line, pause);
      }
    } catch (cause) {
      // A store that answered nonsense, or a callback that threw: nobody is left waiting.
      for (const waiter of line.waiters.splice(0)) waiter.reject(this.#failed(cause));
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
      if (waitMs === undefined) waiter.untimedSince ??= now;
      else waiter.untimedSince = undefined;
      const take = holdToTake(waitMs, now - (waiter.untimedSince ?? now), maxRetryDelayMs);
      if (waitMs === undefined && take !== undefined) pause = Math.min(pause ?? take, take);
      if (take === undefined) {
        line.waiters.splice(line.waiters.indexOf(waiter), 1);
        waiter.reject(waiter.request.tooLong(reason, waitMs));
        continue;
      }
      if (waiter.reason !== reason) {
        waiter.reason = reason;
        waiter.request.onHold(reason, take);
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
