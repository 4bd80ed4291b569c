// The waits of a key: every decision about waiting, as pure functions (`decide`); and the line
// that holds each request of this process until the key's quota store admits it.
import { AnimalStoreError, describeThrown, type Redactor } from '../errors.js';
import { HORIZON_MS } from '../headers.js';
import type { RetryReason } from '../observe.js';
import { MAX_TIMER_MS, onAbort } from '../timers.js';
import { admitNow, defaultQuotaStore, MemoryQuotaStore, shared } from './MemoryQuotaStore.js';
import { checked, inLine, within } from './remote.js';
import type { Admission, HoldReason, Observation, QuotaStore } from './store.js';
import { coolDown, cooldowns, shareCooldowns } from './threads.js';

/** Back-off after a failure: from 500 ms, doubling up to 8 s, never shorter than 100 ms. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;
export const BACKOFF_FLOOR_MS = 100;
/** The cooldown after a 429 asking more than a day: not believed, but no sign to come back soon. */
export const DISBELIEVED_COOLDOWN_MS = 60_000;
const [LEARNT_BASE_MS, LEARNT_CAP_MS] = [1_000, 600_000]; // after a 429 that says nothing, by 429s in a row

/** Back-off for the `n`-th failure in a row: `base` doubling up to `cap`, less up to half at random. */
export function backoffDelay(
  n: number,
  random: () => number = Math.random,
  base = BACKOFF_BASE_MS,
  cap = BACKOFF_CAP_MS,
): number {
  return Math.round(Math.min(cap, base * 2 ** Math.max(0, n - 1)) * (1 - random() * 0.5));
}

/** The hold after the `silent`-th request in a row without a response: 100 ms doubling up to 8 s. */
export const silentCooldown = (silent: number) =>
  backoffDelay(silent, () => 0, BACKOFF_FLOOR_MS, BACKOFF_CAP_MS);

/** The wait to take, or `undefined` (fail): a `mandated` wait is never shortened, a back-off capped. */
export function waitToTake(ms: number, mandated: boolean, maxRetryDelayMs: number) {
  if (ms <= maxRetryDelayMs) return ms;
  return mandated || maxRetryDelayMs < BACKOFF_FLOOR_MS ? undefined : maxRetryDelayMs;
}

// What a wait until a reset may read past maxRetryDelayMs and be taken: said in whole seconds on a
// clock read from Date, a full minute reads up to 62 s (a small maxRetryDelayMs stays strict).
export const resetGrace = (maxRetryDelayMs: number) => Math.min(2_000, maxRetryDelayMs / 30);

/** How long a hold waits at most: one with an end as mandated; one without, what is left of `maxRetryDelayMs`. */
export function holdToTake(waitMs: number | undefined, heldForMs: number, maxRetryDelayMs: number) {
  if (waitMs !== undefined) return waitToTake(waitMs, true, maxRetryDelayMs);
  return heldForMs < maxRetryDelayMs ? maxRetryDelayMs - heldForMs : undefined;
}

/** How an attempt ended: no response (a body that broke off sets `status`), or a response. */
export type Outcome =
  | {
      readonly kind: 'no-response';
      readonly timedOut: boolean;
      readonly status?: number | undefined;
    }
  | {
      readonly kind: 'response';
      readonly status: number;
      /** For a 429: the wait it asks for, or that it asked for more than a day. */
      readonly retryAfter?: { readonly ms: number; readonly source: RetryReason } | undefined;
      readonly retryAfterTooFar?: boolean;
    };

interface Situation {
  /** The operation may be sent again after a 5xx or no response (a POST could add the animal twice). */
  readonly resend: boolean;
  readonly attempt: number;
  /** 429s in a row for the key, this one included. */
  readonly strikes?: number;
  readonly maxRetryDelayMs: number;
  readonly random?: () => number;
}

/** The decision on a failed attempt: `retry` (`held`: the wait is the key's cooldown), the 429's cooldown. */
export interface Decision {
  readonly retry?: { readonly delayMs: number; readonly reason: RetryReason; readonly held?: true };
  readonly cooldownMs?: number;
  /** For a 429: the wait was asked for but is longer than the client takes. */
  readonly tooLong?: boolean;
}

/** Whether a failed attempt is retried, after how long and why (a 5xx's Retry-After is not the key's wait; docs/rate-limits.md); retries left are p-retry's count. */
export function decide(outcome: Outcome, situation: Situation): Decision {
  const { resend, attempt, strikes = 1, maxRetryDelayMs, random = Math.random } = situation;
  const { status = 0 } = outcome;
  if (outcome.kind === 'no-response' || (status >= 500 && status < 600)) {
    const server = outcome.kind === 'response';
    const reason = server ? 'server-error' : outcome.timedOut ? 'timeout' : 'connection-error';
    const asked = (server && outcome.retryAfter?.ms) || 0;
    const wait = Math.max(backoffDelay(attempt, random), asked);
    const delayMs = resend ? waitToTake(wait, asked > 0, maxRetryDelayMs) : undefined;
    if (delayMs === undefined) return resend && asked > 0 ? { tooLong: true } : {};
    return { retry: { delayMs, reason } };
  }
  if (status !== 429) return {};
  if (outcome.retryAfterTooFar) return { cooldownMs: DISBELIEVED_COOLDOWN_MS, tooLong: true };
  const asked = outcome.retryAfter;
  const floor = backoffDelay(strikes, () => 0, BACKOFF_FLOOR_MS, LEARNT_CAP_MS);
  const guess = backoffDelay(strikes, random, LEARNT_BASE_MS, LEARNT_CAP_MS);
  const wanted = Math.max(floor, asked?.ms ?? guess);
  // The client's own first back-off may be capped; one after 429s in a row is the key's.
  const grace = asked?.source === 'rate-limit-reset' ? resetGrace(maxRetryDelayMs) : 0;
  const delayMs = waitToTake(wanted, asked !== undefined || strikes > 1, maxRetryDelayMs + grace);
  if (delayMs === undefined) return { cooldownMs: wanted, tooLong: true };
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
  /** Told when held, once per reason, with the wait ahead; `held`: the calls its log line counts (0: no line). */
  readonly onHold: (reason: HoldReason, delayMs: number, untimed: boolean, held: number) => void;
  /** The error when the hold is longer than `maxRetryDelayMs` (`waitMs` more, or no end in sight). */
  readonly tooLong: (reason: HoldReason, waitMs: number | undefined) => Error;
  /** Its attempts so far, of `maxRetries + 1` (of one, without `resend`); what it sends; the error when `lost` got none. */
  readonly attempts: number;
  readonly sends: string;
  readonly maxRetries: number;
  readonly operation: { readonly resend: boolean };
  readonly outage: (lost: number, cause: unknown, timedOut: boolean, same: boolean) => Error;
  readonly unanswered: boolean;
}

interface Waiter {
  readonly request: HoldRequest;
  readonly resolve: (lease: string, strikes: number) => void;
  readonly reject: (error: unknown) => void;
  reason?: HoldReason;
  /** In what order it joined; when the current untimed hold began; the first hold began; it waited for a remote store's answers. */
  readonly order: number;
  untimedSince?: number | undefined;
  since?: number;
  asked?: number | undefined;
  /** Requests like it (its operation and headers, of its client) sent since it joined and since the last response, that got none: from when, for how long, how often, any of another input. */
  lost?: { from: number; spent: number; count: number; other: boolean } | undefined;
}

type Grant = { at: number; order: number; strikes: number; seen: number };

/** The requests of one process waiting for one bucket of one store, in arrival order. */
interface Line {
  readonly waiters: Waiter[];
  pumping: boolean;
  wake?: (() => void) | undefined;
  /** Told when the line changes while a remote store is asked. */
  nudge?: (() => void) | undefined;
  unwatch?: (() => void) | undefined;
  changes: number; // signalled by the store: one while it was asked is not lost
  /** The hold the line is paused in: since when, for how long. */
  held?: { reason: HoldReason; waitMs?: number | undefined; at: number; pause: number } | undefined;
  told?: boolean; // a call that joined the hold paused in was told of it in a line
}

const byStore = shared('quota-lines', () => new WeakMap<QuotaStore, Map<string, Line>>());

const linesOf = (store: QuotaStore): Map<string, Line> =>
  byStore.get(store) ?? byStore.set(store, new Map()).get(store)!;

/** Counted by every copy of the SDK in the process: its ESM and CJS builds share the lines. */
export const counters = shared('counters', () => ({ clients: 0, order: 0 }));
/** Each key's requests in a row without a response, whichever client of the store sent them. */
const silencesOf = shared('silences', () => new WeakMap<QuotaStore, Map<string, number>>());

/** Why a request got no response, when it left, the time limit it ran out of (if it did). */
export type Lost = { cause: unknown; sent: string; timedOutAfter?: number | undefined };

/** A request of the key got no response (`failed`), or one got a response: the outage rule of docs/rate-limits.md. */
function lost(line: Line, failed: (Lost & { at: number; order: number }) | undefined): void {
  for (const waiter of [...line.waiters]) {
    const { sends, timeoutMs, operation, attempts, maxRetries, maxRetryDelayMs } = waiter.request;
    if (!failed) waiter.lost = undefined;
    if (!failed || failed.order < waiter.order) continue;
    const route = (sent: string) => sent.slice(0, sent.indexOf('\n'));
    const other = failed.sent !== sends; // counted once its own last attempt got none too
    if (route(failed.sent) !== route(sends) || (other && !waiter.request.unanswered)) continue;
    if ((failed.timedOutAfter ?? timeoutMs) < timeoutMs) continue;
    waiter.lost ??= { from: failed.at, spent: 0, count: 0, other: false };
    const tally = waiter.lost;
    let [sent, due] = [1, tally.from + tally.spent];
    for (let n = attempts + 1; operation.resend && n <= maxRetries; n++, sent++)
      due += Math.min(BACKOFF_BASE_MS * 2 ** (n - 1), BACKOFF_CAP_MS, maxRetryDelayMs);
    tally.spent += Date.now() - failed.at;
    tally.other ||= other;
    if (++tally.count < sent || failed.at < due) continue;
    const { cause, timedOutAfter } = failed;
    const error = waiter.request.outage(tally.count, cause, !!timedOutAfter, !tally.other);
    leave(line, waiter, error);
  }
}

/** Takes `waiter` out of the line, failing it with `error`; the pump and a store's answer awaited are told. */
function leave(line: Line, waiter: Waiter, error: unknown): void {
  const at = line.waiters.indexOf(waiter);
  if (at < 0) return;
  line.waiters.splice(at, 1);
  if (at === 0) line.wake?.();
  line.nudge?.();
  waiter.reject(error);
}

// A lease outlives its request's timeoutMs by this much: the store's own answers take time.
const LEASE_MARGIN_MS = 2_000;
const RECHECK_MS = 100; // how often a held request asks again, without a store's change signal

/** A client's handle on one key's budget: admits each request through the store, in one line per store and bucket in the process. */
export class Quota {
  #bucket: string | Promise<string>;
  /** Any store but the shipped in-memory one: answers bounded by timeoutMs. */
  readonly remote: boolean;
  /** 429s kept in `cooldowns`, for every client of the key in the process but those of a `MemoryQuotaStore` made for them. */
  readonly #shared: boolean;
  /** Each lease's grant: when, the key's 429s in a row as the store counts them, the 429s seen here then. */
  readonly #leases = new Map<string, Grant>();
  #strikes = 0; // this client's own count of the key's 429s in a row (a floor)
  #tooMany = 0; // 429s seen

  constructor(
    private readonly store: QuotaStore,
    bucket: string | Promise<string>,
    private readonly onError: (error: unknown, doing: string) => void,
    private readonly redact: Redactor,
  ) {
    this.#bucket = bucket;
    this.remote = Object.getPrototypeOf(store) !== MemoryQuotaStore.prototype;
    this.#shared = this.remote || store === defaultQuotaStore();
    if (this.#shared) shareCooldowns();
    if (typeof bucket !== 'string') bucket.then((name) => (this.#bucket = name)).catch(() => {});
  }

  /** Resolves to a lease once the request may be sent; end it with `observe` or `release`. */
  async admit(request: HoldRequest): Promise<string> {
    const bucket = typeof this.#bucket === 'string' ? this.#bucket : await this.#bucket;
    const { signal } = request;
    signal?.throwIfAborted();
    const lines = linesOf(this.store);
    // Nobody in line, no cooldown, the shipped store: answered at once, no await (1.2 µs a call less).
    const cooling = ((this.#shared && cooldowns.get(bucket)) || 0) > Date.now();
    if (this.store.admit === MemoryQuotaStore.prototype.admit && !lines.has(bucket) && !cooling) {
      const admission = admitNow(this.store as MemoryQuotaStore, bucket);
      if ('lease' in admission) {
        if (!signal?.aborted) return this.#took(admission.lease, admission.strikes ?? 0);
        await this.release(admission.lease);
      }
      // Aborted by what the store ran (its clock): no line is joined.
      signal?.throwIfAborted();
    }
    const line = lines.get(bucket) ?? { waiters: [], pumping: false, changes: 0 };
    lines.set(bucket, line);
    const { waiters } = line;
    return new Promise<string>((resolve, reject) => {
      const stop = signal && onAbort(signal, () => leave(line, waiter, signal.reason));
      const waiter: Waiter = {
        request,
        order: ++counters.order,
        resolve: (lease, strikes) => {
          stop?.();
          resolve(this.#took(lease, strikes));
        },
        reject: (error) => {
          stop?.();
          reject(error);
        },
      };
      waiters.push(waiter);
      line.nudge?.();
      const { held } = line;
      const gone = held ? Date.now() - held.at : 0;
      if (held && gone < held.pause) {
        // Joining a paused line: held alike, told of the wait left, without asking the store again.
        const waitMs = held.waitMs && held.waitMs - gone;
        const pause = this.#hold(line, { reason: held.reason, waitMs }, [waiter], !line.told);
        line.told = true;
        if (pause !== undefined && pause < held.pause - gone) line.wake?.();
      }
      void this.#pump(line, bucket);
    });
  }

  /** The store's answer for the head of the line, checked (a remote store's bounded by each waiter's `timeoutMs`); `undefined` once nobody waits. */
  async #ask(line: Line, bucket: string): Promise<Admission | undefined> {
    const until = (this.#shared && cooldowns.get(bucket)) || 0;
    if (until > Date.now()) return { reason: 'cooldown', waitMs: until - Date.now() };
    const answer = this.#admit(bucket, line.waiters[0]!.request.timeoutMs);
    if (!this.remote) return answer;
    return inLine(answer, line, (lease) => this.release(lease));
  }

  async #admit(bucket: string, timeoutMs: number): Promise<Admission> {
    try {
      const answer = await this.store.admit(bucket, { leaseMs: timeoutMs + LEASE_MARGIN_MS });
      return this.store.admit === MemoryQuotaStore.prototype.admit ? answer : checked(answer);
    } catch (cause) {
      throw this.#failed(cause);
    }
  }

  #failed(cause: unknown): AnimalStoreError {
    const why = this.redact.text(describeThrown(cause));
    return new AnimalStoreError(`The quota store failed to admit a request: ${why}`, {
      cause: this.redact.error(cause),
    });
  }

  /** Reports what the response to a leased request said (`gaveUp`: the caller aborted; `failure`: why none came). */
  async observe(
    lease: string,
    observation: Observation,
    timeoutMs: number,
    gaveUp = false,
    failure?: Lost,
  ): Promise<void> {
    const { status } = observation;
    const granted = this.#leases.get(lease);
    const fresh = granted?.seen === this.#tooMany;
    this.#leases.delete(lease);
    if (status === 429) {
      if (fresh) this.#strikes++;
      this.#tooMany++;
    } else if (fresh && ((status >= 200 && status < 300) || (status >= 400 && status < 500)))
      this.#strikes = 0;
    try {
      const bucket = typeof this.#bucket === 'string' ? this.#bucket : await this.#bucket;
      const silences = silencesOf.get(this.store) ?? new Map<string, number>();
      silencesOf.set(this.store, silences);
      const silent = status === 0 && !gaveUp ? (silences.get(bucket) ?? 0) + 1 : 0;
      if (status !== 0 || silent) silences.delete(bucket);
      if (silent) observation = { ...observation, cooldownMs: silentCooldown(silent) };
      if (silent && silences.set(bucket, silent).size > 1000)
        silences.delete(silences.keys().next().value as string);
      const line = linesOf(this.store).get(bucket);
      if (line && !gaveUp)
        lost(line, status === 0 && failure && granted ? { ...failure, ...granted } : undefined);
      const { cooldownMs = 0 } = observation;
      if (this.#shared && status === 429 && cooldownMs > 0) coolDown(bucket, cooldownMs);
      // A store's throw, or its rejection, goes to onError below.
      const recorded = this.store.observe(bucket, lease, observation);
      const why = `the store did not record the response within timeoutMs (${timeoutMs} ms)`;
      await (this.remote ? within(recorded, timeoutMs, () => new Error(why)) : recorded);
    } catch (error) {
      this.onError(error, 'record a response');
    }
  }

  /** The key's 429s in a row a 429 to `lease` makes: the 429s of requests sent together are one. */
  strikes(lease: string): number {
    const granted = this.#leases.get(lease);
    const fresh = granted?.seen === this.#tooMany;
    return Math.max(granted?.strikes ?? 0, this.#strikes - (fresh ? 0 : 1)) + 1;
  }

  /** Ends the lease of a request that was never sent; a store failure goes to `onError`. */
  async release(lease: string): Promise<void> {
    this.#leases.delete(lease);
    try {
      await this.store.release(await this.#bucket, lease);
    } catch (error) {
      this.onError(error, 'give back a lease');
    }
  }

  /** Whether the store can say that a lease has lapsed. */
  get checksLeases(): boolean {
    return typeof this.store.holds === 'function';
  }

  /** Whether `lease` still holds, asked as its request leaves; a store whose check breaks is as one without it (to `onError`). */
  holds(lease: string): boolean {
    const bucket = this.#bucket;
    try {
      return typeof bucket !== 'string' || this.store.holds?.(bucket, lease) !== false;
    } catch (error) {
      this.onError(error, 'say whether a lease holds');
      return true;
    }
  }

  /** Recorded by the client that asked: another client's quota may serve the line. */
  #took(lease: string, strikes: number): string {
    this.#leases.set(lease, {
      at: Date.now(),
      order: ++counters.order,
      strikes,
      seen: this.#tooMany,
    });
    return lease;
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
        let admission: Admission | undefined;
        try {
          admission = await this.#ask(line, bucket);
        } catch (error) {
          if (waiters[0] === head) waiters.shift();
          head.reject(error);
          continue;
        }
        // Nobody waited for the answer any longer.
        if (admission === undefined) continue;
        if ('lease' in admission) {
          // The head was aborted while the store was asked, or a 429 came meanwhile.
          if (waiters[0] !== head || ((this.#shared && cooldowns.get(bucket)) || 0) > Date.now()) {
            await this.release(admission.lease);
            continue;
          }
          waiters.shift();
          head.resolve(admission.lease, admission.strikes ?? 0);
          continue;
        }
        const pause = this.#hold(line, admission);
        // Watched from the first hold on (and asked again then: a change may have come first).
        if (pause !== undefined && !line.unwatch && this.store.watch) {
          try {
            const stop = this.store.watch(bucket, () => {
              line.changes++;
              line.wake?.();
            });
            line.unwatch = typeof stop === 'function' ? stop : () => undefined;
            continue;
          } catch {}
        }
        if (pause !== undefined && changes === line.changes) {
          [line.held, line.told] = [{ ...admission, at: Date.now(), pause }, false];
          await this.#pause(line, pause);
          line.held = undefined;
        }
      }
    } catch (cause) {
      // A store that answered nonsense, or a callback that threw: nobody is left waiting.
      for (const waiter of waiters.splice(0)) waiter.reject(this.#failed(cause));
    } finally {
      line.pumping = false;
      const { unwatch } = line;
      if (unwatch) (async () => unwatch())().catch(() => undefined);
      line.unwatch = undefined;
      // An empty line is forgotten, so that memory stays bounded with many keys.
      linesOf(this.store).delete(bucket);
    }
  }

  /** Applies a hold to `held`: fails those it would hold past `maxRetryDelayMs` (or a day), tells the rest (`logged`: in a line). */
  #hold(
    line: Line,
    { reason, waitMs }: { reason: HoldReason; waitMs?: number | undefined },
    held = line.waiters,
    logged = true,
  ) {
    const now = Date.now();
    // A wait of 0 (asked 10 ms apart) or an unknown budget's has no end in sight: bounded alike.
    const endless = !waitMs || reason === 'budget-unknown';
    let pause = waitMs === 0 ? 10 : waitMs;
    const told: [Waiter, number][] = [];
    for (const waiter of [...held]) {
      const { maxRetryDelayMs } = waiter.request;
      waiter.untimedSince = endless ? (waiter.untimedSince ?? now) : undefined;
      const heldFor = now - (waiter.untimedSince ?? now);
      const grace = !endless && reason.startsWith('budget-') ? resetGrace(maxRetryDelayMs) : 0;
      const take = holdToTake(endless ? undefined : waitMs, heldFor, maxRetryDelayMs + grace);
      waiter.since ??= now;
      const end = endless ? now : now + (take ?? 0);
      if (take === undefined || end - waiter.since > HORIZON_MS) {
        leave(line, waiter, waiter.request.tooLong(reason, endless ? undefined : waitMs));
        continue;
      }
      if (endless) pause = Math.min(pause ?? take, take);
      if (waiter.reason !== reason) told.push([waiter, take]);
    }
    told.forEach(([waiter, take], i) => {
      waiter.reason = reason;
      waiter.request.onHold(reason, take, endless, i === 0 && logged ? told.length : 0);
    });
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
