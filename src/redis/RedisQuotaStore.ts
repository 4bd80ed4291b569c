import { AnimalStoreError } from '../errors.js';
import { HORIZON_MS } from '../headers.js';
import type { Logger } from '../options.js';
import type {
  Admission,
  AdmitRequest,
  HoldReason,
  Observation,
  QuotaStore,
} from '../quota/store.js';
import { describeValue } from '../settings.js';
import { adapt, type RedisClient, type RedisScripts, sha1Of } from './clients.js';
import { LocalShare } from './LocalShare.js';
import { type RedisScript, SCRIPTS } from './scripts.js';

/** Options of {@link RedisQuotaStore}. */
export interface RedisQuotaStoreOptions {
  /**
   * A connected node-redis client (`createClient()` of `redis`), an ioredis
   * client (`new Redis()` of `ioredis`), or any client adapted to
   * {@link RedisScripts}. The store never closes it.
   */
  client: RedisClient;
  /**
   * Prefix of every Redis key and channel the store uses.
   * @default 'animal-store:quota:'
   */
  prefix?: string | undefined;
  /**
   * How long one Redis call may take before the store stops waiting for it and
   * falls back to this process's share of the budget.
   * @default 250
   */
  commandTimeoutMs?: number | undefined;
  /**
   * Where the store reports losing and regaining Redis (`error` and `warn`).
   * @default console
   */
  logger?: Pick<Logger, 'error' | 'warn'> | undefined;
}

const HOLDS: ReadonlySet<string> = new Set<HoldReason>([
  'cooldown',
  'no-response',
  'budget-exhausted',
  'budget-in-flight',
  'budget-unknown',
]);

/** A lease the local share granted (Redis was unreachable) starts with this. */
const LOCAL = '~';
// A lease, and a waiting store's place in line, lapse this long after the
// store last renewed them: a process that dies, freezes or loses Redis gives
// back its budget and its turn within that long.
const LIFE_MS = 2_000;
// A living store renews its leases and places in line this often: one script
// call per bucket in use, whatever the number of requests in flight.
const RENEW_MS = 1_000;
// A lease is taken for lapsed this long before Redis would let it lapse: the
// request it allows must leave before then, or ask again.
const MARGIN_MS = 250;
// How long a lease is renewed when the client does not say (a client of an older release).
const DEFAULT_LEASE_MS = 60_000;
// While Redis is unreachable, one call a second tries it again: every process
// of a fleet finds it back within about that long of each other.
const RETRY_MS = 1_000;
// A store waiting for a response that another process awaits asks again this
// often, in case a wake-up message was lost (with pub/sub) or could not be
// sent (without).
const RECHECK_SUBSCRIBED_MS = 1_000;
const RECHECK_POLLING_MS = 200;

class RedisUnavailable extends Error {}

interface Watch {
  readonly listeners: Set<() => void>;
  /** Unsubscribes, once subscribed. */
  unsubscribe: Promise<(() => Promise<void>) | undefined> | undefined;
  timer: ReturnType<typeof setInterval> | undefined;
}

/** A lease Redis granted, while its request is in flight. */
interface Live {
  /** Until then (`performance.now()`), the lease surely holds in Redis. */
  heldUntil: number;
  /** It is renewed until then at most: by then its request surely ended. */
  readonly renewUntil: number;
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A quota store shared through Redis by every process that uses it: a fleet
 * of workers, pods or functions with one API key then spends the key's budget
 * as one client would, with one probe when the budget is unknown, no more
 * requests in flight than the service says remain, and every process held
 * through a 429's cooldown.
 *
 * Each admission, observation and release is one Lua script call, timed by
 * Redis `TIME`. Leases live 2 s, and each process renews those of its
 * requests in flight once a second in one call per key: a process that dies
 * or freezes gives its budget back within about 2 s, and a frozen one never
 * sends on a lease that lapsed. Waiting processes take turns, one request
 * each per round, and are woken through pub/sub. Every key expires. When Redis fails or is
 * slower than `commandTimeoutMs`, the store logs an `error` line and falls
 * back to this process's share of each window until Redis answers again.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { PetsClient } from '@animal-store/sdk';
 * import { RedisQuotaStore } from '@animal-store/sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const client = new PetsClient({ apiKey, quotaStore: new RedisQuotaStore({ client: redis }) });
 * ```
 */
export class RedisQuotaStore implements QuotaStore {
  readonly #redis: RedisScripts;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #logger: Pick<Logger, 'error' | 'warn'>;
  /** Names this store in Redis: its place in line and its count among members. */
  readonly #id = randomId();
  #leases = 0;
  readonly #local = new LocalShare(() => Date.now());
  readonly #watches = new Map<string, Watch>();
  /** Buckets where this store has a place in Redis's line. */
  readonly #queued = new Set<string>();
  /** Leases Redis granted, per bucket, whose requests are in flight. */
  readonly #live = new Map<string, Map<string, Live>>();
  #renewal: ReturnType<typeof setInterval> | undefined;
  /** Buckets where Redis last said to wait for a response, with no time given. */
  readonly #untimed = new Set<string>();
  /** While set, Redis is not asked before this time (epoch ms). */
  #downUntil = 0;
  /**
   * Until then (epoch ms) after Redis came back, leases it grants are also
   * counted against this process's local part: other processes may not have
   * found Redis back yet, and still spend their parts.
   */
  #settlingUntil = 0;
  #closed = false;

  constructor(options: RedisQuotaStoreOptions) {
    const redis = adapt(options?.client);
    if (!redis) {
      throw new AnimalStoreError(
        'RedisQuotaStore needs a client: a node-redis or ioredis client, or an object with eval(script, keys, args).',
      );
    }
    const timeoutMs = options.commandTimeoutMs ?? 250;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new AnimalStoreError(
        `Invalid commandTimeoutMs: expected a positive number of milliseconds, got ${describeValue(timeoutMs)}.`,
      );
    }
    const prefix = options.prefix ?? 'animal-store:quota:';
    if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
      throw new AnimalStoreError(
        `Invalid prefix: expected a string without braces (the store puts each budget's keys in one Redis Cluster hash slot with {…}), got ${JSON.stringify(prefix)}.`,
      );
    }
    this.#redis = redis;
    this.#prefix = prefix;
    this.#timeoutMs = timeoutMs;
    this.#logger = options.logger ?? console;
  }

  #keys(bucket: string): string[] {
    const base = `${this.#prefix}{${bucket}}:`;
    return [
      `${base}state`,
      `${base}leases`,
      `${base}queue`,
      `${base}tickets`,
      `${base}members`,
      `${base}turns`,
    ];
  }

  #channel(bucket: string): string {
    return `${this.#prefix}{${bucket}}:wake`;
  }

  /** Runs a script, sending its source only when the server does not know it yet. */
  async #send(script: RedisScript, bucket: string, args: string[]): Promise<unknown> {
    const keys = this.#keys(bucket);
    const redis = this.#redis;
    if (redis.evalsha) {
      try {
        return await redis.evalsha(await sha1Of(script), keys, args);
      } catch (error) {
        if (!/NOSCRIPT/i.test(describe(error))) throw error;
      }
    }
    return redis.eval(script.source, keys, args);
  }

  /** Whether the local share admits: Redis is lost, or the store closed. */
  get #away(): boolean {
    return this.#downUntil > 0 || this.#closed;
  }

  /** Every call waiting on this store asks again. */
  #wakeAll(): void {
    for (const watch of this.#watches.values()) {
      for (const listener of watch.listeners) listener();
    }
  }

  #timed<T>(promise: Promise<T>): Promise<T> {
    return within(promise, this.#timeoutMs, `Redis did not answer within ${this.#timeoutMs} ms`);
  }

  #run(script: RedisScript, bucket: string, args: string[]): Promise<unknown> {
    return this.#timed(this.#send(script, bucket, args));
  }

  /** Runs `work` against Redis, or throws {@link RedisUnavailable} while it is down. */
  async #shared<T>(work: () => Promise<T>): Promise<T> {
    const now = Date.now();
    if (this.#closed) throw new RedisUnavailable('the store is closed');
    if (this.#downUntil > now) throw new RedisUnavailable('Redis is unreachable');
    const wasDown = this.#downUntil > 0;
    // One call at a time finds out whether Redis is back.
    if (wasDown) this.#downUntil = now + RETRY_MS;
    try {
      const result = await work();
      if (wasDown) {
        this.#downUntil = 0;
        // Calls the local share held, with no end in sight, ask Redis now.
        this.#wakeAll();
        this.#settlingUntil = Date.now() + RETRY_MS + 2 * this.#timeoutMs;
        // What this process saw while Redis was lost tightens what Redis remembers.
        for (const [bucket, window] of this.#local.reports()) {
          this.#report(bucket, '', { status: 200, window }).catch(() => undefined);
        }
        this.#logger.warn(
          '[animal-store] Redis answers again: the quota is shared by every process again.',
        );
      }
      return result;
    } catch (error) {
      if (error instanceof RedisUnavailable) throw error;
      const first = this.#downUntil === 0;
      this.#downUntil = Date.now() + RETRY_MS;
      if (first) {
        this.#local.begin();
        const members = this.#local.members;
        const share =
          members > 0
            ? `its part of each rate-limit window, split among the ${members} processes Redis last counted`
            : 'one request per rate-limit window (Redis never said how many processes share the key)';
        // node-redis's message for a client never connected says only that it is closed.
        const hint = /client is closed/i.test(describe(error))
          ? ' Connect the client before passing it (await client.connect()).'
          : '';
        this.#logger.error(
          `[animal-store] The Redis quota store failed (${describe(error)}); this process falls back to ${share}, until Redis answers again.${hint}`,
        );
      }
      throw new RedisUnavailable(describe(error));
    }
  }

  async admit(bucket: string, request?: AdmitRequest): Promise<Admission> {
    // A lease lives at least a second and at most a day, whatever it is asked.
    const asked = Number(request?.leaseMs);
    const leaseMs = Number.isNaN(asked)
      ? DEFAULT_LEASE_MS
      : Math.min(Math.max(Math.ceil(asked), 1_000), HORIZON_MS);
    try {
      const admission = await this.#shared(() => this.#admit(bucket, leaseMs));
      if (!('lease' in admission) || Date.now() >= this.#settlingUntil) return admission;
      const held = this.#local.take(bucket);
      if (held === undefined) return admission;
      this.#forget(bucket, admission.lease);
      this.#run(SCRIPTS.release, bucket, [admission.lease, this.#channel(bucket)]).catch(
        () => undefined,
      );
      return held;
    } catch (error) {
      if (!(error instanceof RedisUnavailable)) throw error;
      const admission = await this.#local.admit(bucket);
      return 'lease' in admission ? { lease: LOCAL + admission.lease } : admission;
    }
  }

  async #admit(bucket: string, leaseMs: number): Promise<Admission> {
    const lease = `${this.#id}.${++this.#leases}`;
    const args = [lease, this.#id, String(LIFE_MS), this.#channel(bucket)];
    const asked = performance.now();
    const sent = this.#send(SCRIPTS.admit, bucket, args);
    let answered = true;
    // Redis may still run a script it answered too late: a lease granted then goes back.
    sent.then(
      (reply) => {
        if (answered || !Array.isArray(reply) || Number(reply[0]) !== 1) return;
        this.#run(SCRIPTS.release, bucket, [lease, this.#channel(bucket)]).catch(() => undefined);
      },
      () => undefined,
    );
    let reply: unknown;
    try {
      reply = await this.#timed(sent);
    } catch (error) {
      answered = false;
      throw error;
    }
    const { admission, members, index } = readAdmission(reply, lease);
    this.#local.counted(members, index);
    if ('lease' in admission) {
      this.#queued.delete(bucket);
      const leases = this.#live.get(bucket) ?? new Map<string, Live>();
      this.#live.set(bucket, leases);
      leases.set(lease, { heldUntil: asked + LIFE_MS - MARGIN_MS, renewUntil: asked + leaseMs });
    } else {
      this.#queued.add(bucket);
    }
    this.#renewing();
    if ('reason' in admission && admission.waitMs === undefined) this.#untimed.add(bucket);
    else this.#untimed.delete(bucket);
    return admission;
  }

  /** Whether a lease Redis granted still holds: a request must not leave on one that lapsed. */
  holds(bucket: string, lease: string): boolean {
    const live = this.#live.get(bucket)?.get(lease);
    return live === undefined || performance.now() < live.heldUntil;
  }

  #forget(bucket: string, lease: string): void {
    const leases = this.#live.get(bucket);
    if (leases?.delete(lease) && leases.size === 0) this.#live.delete(bucket);
  }

  /** Renews, once a period, while this store has requests in flight or a place in line. */
  #renewing(): void {
    if (this.#renewal || this.#closed) return;
    this.#renewal = setInterval(() => {
      if (this.#live.size === 0 && this.#queued.size === 0) {
        clearInterval(this.#renewal);
        this.#renewal = undefined;
        return;
      }
      for (const bucket of new Set([...this.#live.keys(), ...this.#queued])) {
        this.#renew(bucket).catch(() => undefined);
      }
    }, RENEW_MS);
    unref(this.#renewal);
  }

  async #renew(bucket: string): Promise<void> {
    const now = performance.now();
    const leases = this.#live.get(bucket) ?? new Map<string, Live>();
    // A lease past its request's time limit is no longer renewed, and lapses.
    const renewed = [...leases].filter(([, live]) => live.renewUntil > now);
    const reply = await this.#shared(() =>
      this.#run(SCRIPTS.renew, bucket, [
        this.#id,
        String(LIFE_MS),
        this.#channel(bucket),
        ...renewed.map(([lease]) => lease),
      ]),
    );
    const lapsed = new Set(Array.isArray(reply) ? reply.map(String) : []);
    for (const [lease, live] of renewed) {
      live.heldUntil = lapsed.has(lease) ? 0 : now + LIFE_MS - MARGIN_MS;
    }
  }

  async observe(bucket: string, lease: string, observation: Observation): Promise<void> {
    this.#forget(bucket, lease);
    const local = lease.startsWith(LOCAL);
    // What this process saw also teaches its local share, should Redis fail.
    const lost = this.#away;
    await this.#local.observe(bucket, local ? lease.slice(1) : lease, observation, { local, lost });
    await this.#shared(() => this.#report(bucket, lease, observation)).catch((error: unknown) => {
      if (!(error instanceof RedisUnavailable)) throw error;
    });
  }

  /** Runs the observe script; its answer also keeps the count of processes fresh. */
  async #report(bucket: string, lease: string, observation: Observation): Promise<void> {
    const { status, window, cooldownMs } = observation;
    const reply = await this.#run(SCRIPTS.observe, bucket, [
      lease,
      String(status),
      window ? String(window.limit) : '',
      window ? String(window.remaining) : '',
      window ? String(window.resetId) : '',
      window ? String(Math.max(0, Math.round(window.resetInMs))) : '',
      window?.approximate ? '1' : '0',
      String(Math.max(0, Math.ceil(cooldownMs ?? 0))),
      this.#channel(bucket),
      this.#id,
      String(window?.windowMs ?? 0),
      observation.guessed ? '1' : '0',
      String(window?.tookMs ?? 0),
    ]);
    const [members, index] = Array.isArray(reply) ? reply.map(Number) : [];
    if (
      Number.isSafeInteger(members) &&
      Number.isSafeInteger(index) &&
      index! >= 0 &&
      index! < members!
    ) {
      this.#local.counted(members!, index!);
    }
  }

  async release(bucket: string, lease: string): Promise<void> {
    this.#forget(bucket, lease);
    if (lease.startsWith(LOCAL)) return this.#local.release(bucket, lease.slice(1));
    await this.#shared(() =>
      this.#run(SCRIPTS.release, bucket, [lease, this.#channel(bucket)]),
    ).catch((error: unknown) => {
      if (!(error instanceof RedisUnavailable)) throw error;
    });
  }

  watch(bucket: string, listener: () => void): () => void {
    let watch = this.#watches.get(bucket);
    if (!watch) {
      const created: Watch = {
        listeners: new Set(),
        unsubscribe: undefined,
        timer: undefined,
      };
      const recheck = this.#redis.subscribe ? RECHECK_SUBSCRIBED_MS : RECHECK_POLLING_MS;
      created.timer = setInterval(() => {
        if (this.#untimed.has(bucket) || this.#away) {
          for (const wake of created.listeners) wake();
        }
      }, recheck);
      unref(created.timer);
      watch = created;
      this.#watches.set(bucket, watch);
      this.#subscribe(bucket, created);
    }
    const { listeners } = watch;
    const own = watch;
    // The local share's changes matter only while it admits.
    const stopLocal = this.#local.watch(bucket, () => {
      if (this.#away) listener();
    });
    listeners.add(listener);
    return () => {
      stopLocal();
      listeners.delete(listener);
      if (listeners.size > 0 || this.#watches.get(bucket) !== own) return;
      this.#watches.delete(bucket);
      this.#untimed.delete(bucket);
      clearInterval(own.timer);
      this.#unwatch(bucket, own).catch(() => undefined);
    };
  }

  /**
   * Subscribes to the bucket's wake-ups, then wakes the listeners once: a
   * wake-up sent before the subscription took is not lost.
   */
  #subscribe(bucket: string, watch: Watch): void {
    const subscribe = this.#redis.subscribe;
    if (!subscribe || this.#downUntil > 0 || this.#closed) return;
    const wake = () => {
      for (const listener of watch.listeners) listener();
    };
    const named = (message: string) => {
      if (message.split(' ').includes(this.#id)) wake();
    };
    watch.unsubscribe = within(
      subscribe.call(this.#redis, this.#channel(bucket), named),
      this.#timeoutMs,
      `Redis did not confirm a subscription within ${this.#timeoutMs} ms`,
    ).then(
      (unsubscribe) => {
        wake();
        return unsubscribe;
      },
      () => undefined,
    );
  }

  /** Gives up the bucket's place in line and its subscription once nobody here waits. */
  async #unwatch(bucket: string, watch: Watch): Promise<void> {
    const unsubscribe = await watch.unsubscribe;
    // An adapter's unsubscribe may throw, return nothing, or not be a function.
    await Promise.resolve()
      .then(() => (typeof unsubscribe === 'function' ? unsubscribe() : undefined))
      .catch(() => undefined);
    if (this.#queued.delete(bucket) && this.#downUntil === 0 && !this.#closed) {
      await this.#run(SCRIPTS.leave, bucket, [this.#id, this.#channel(bucket)]).catch(
        () => undefined,
      );
    }
  }

  /**
   * Ends the store's subscriptions, the connection it opened for them (never
   * the client it was given) and its renewals. From then on it is the local
   * share, as when Redis is lost: nothing more of the windows it was in, then
   * this process's part of each later one; calls waiting now ask it at once.
   */
  async close(): Promise<void> {
    if (!this.#closed) {
      if (this.#downUntil === 0) this.#local.begin();
      this.#closed = true;
      clearInterval(this.#renewal);
      this.#renewal = undefined;
      this.#wakeAll();
    }
    await this.#redis.close?.();
  }
}

/** What the admission script answered, checked. */
function readAdmission(
  reply: unknown,
  lease: string,
): { admission: Admission; members: number; index: number } {
  if (Array.isArray(reply)) {
    const [granted, second, ...rest] = reply as unknown[];
    const lent = granted === 1 || granted === '1';
    const [members, index] = (lent ? rest : rest.slice(1)).map(Number);
    const counted =
      Number.isSafeInteger(members) &&
      Number.isSafeInteger(index) &&
      index! >= 0 &&
      index! < members!;
    if (counted && lent && second === lease) {
      const strikes = Number(rest[2] ?? 0);
      return { admission: { lease, strikes }, members: members!, index: index! };
    }
    const waitMs = Number(rest[0]);
    if (counted && (granted === 0 || granted === '0') && HOLDS.has(String(second))) {
      if (Number.isFinite(waitMs) && waitMs <= HORIZON_MS) {
        const reason = String(second) as HoldReason;
        const admission = waitMs < 0 ? { reason } : { reason, waitMs };
        return { admission, members: members!, index: index! };
      }
    }
  }
  throw new TypeError(`Redis answered the admission script with ${safeJson(reply)}`);
}

function safeJson(value: unknown): string {
  try {
    return String(JSON.stringify(value)).slice(0, 200);
  } catch {
    return typeof value;
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 300);
}

/**
 * `promise`, or a rejection once `ms` pass. Time this process did not run
 * (frozen, or its event loop blocked) is not Redis's: a timer that fires
 * that late gives Redis `ms` more, counted from when the process runs again.
 */
function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (again: boolean) => {
      const due = performance.now() + ms;
      timer = setTimeout(() => {
        if (again && performance.now() - due > ms) arm(false);
        else reject(new Error(message));
      }, ms);
    };
    arm(true);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}
