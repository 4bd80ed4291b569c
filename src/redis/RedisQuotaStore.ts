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
import { type Adapted, adapt, type RedisClient, sha1Of } from './clients.js';
import { type RedisScript, SCRIPTS } from './scripts.js';

/** Options of {@link RedisQuotaStore}. */
export interface RedisQuotaStoreOptions {
  /**
   * A connected node-redis client (`createClient()` of `redis`), an ioredis
   * client (`new Redis()` of `ioredis`), or any client adapted to
   * {@link RedisScripts}. The store never closes it, but makes it reconnect
   * when its connection stops answering while Redis answers a new one (a
   * connection the network dropped silently).
   */
  client: RedisClient;
  /**
   * Prefix of every Redis key and channel the store uses.
   * @default 'animal-store:quota:'
   */
  prefix?: string | undefined;
  /**
   * How long one Redis call may take before the store stops waiting for it:
   * the request it was to admit is held, and asks again a moment later.
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
// While Redis is unreachable, one call this often tries it again (and a lost
// reply costs no longer than that): every process of a fleet finds it back
// within about that long of each other.
const RETRY_MS = 250;
// A connection that answers none of the store's commands for this long is checked, a new one
// given this long to answer.
const SUSPECT_MS = 1_000;
// A lease Redis granted too late goes back unless a call takes it within this long.
const SPARE_MS = 250;
// The store logs losing Redis, and finding it back, once a minute at most.
const LOG_EVERY_MS = 60_000;
// A cooldown this process saw is told to a Redis that lost it only while more
// than this is left of it.
const TELL_MS = 250;
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

/** The last window a process saw. */
interface Seen {
  readonly limit: number;
  readonly resetId: number;
  readonly resetAt: number;
  readonly approximate: boolean;
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
 * each per round, and are woken through pub/sub. Every key expires. A lease
 * that lapses is counted as spent in its window (its request may have reached
 * the service), unless its process gives it back unsent.
 *
 * When Redis fails or is slower than `commandTimeoutMs`, the store logs an
 * `error` line and this process sends nothing new until Redis answers again:
 * what the others spend meanwhile cannot be known without it. Its calls wait
 * (each at most its `maxRetryDelayMs`), and one of them asks Redis every
 * 250 ms.
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
  readonly #redis: Adapted;
  /** The store's commands Redis has not answered yet, and since when none of them was. */
  #unanswered = 0;
  #quietSince = 0;
  #probing = false;
  #probed = 0; // when the last probe ended: one a second at most
  #reconnected = false;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #logger: Pick<Logger, 'error' | 'warn'>;
  /** Names this store in Redis: its place in line and its count among members. */
  readonly #id = randomId();
  #leases = 0;
  readonly #watches = new Map<string, Watch>();
  /** Buckets where this store has a place in Redis's line. */
  readonly #queued = new Map<string, number>();
  /** Leases Redis granted, per bucket, whose requests are in flight. */
  readonly #live = new Map<string, Map<string, Live>>();
  #renewal: ReturnType<typeof setInterval> | undefined;
  /** Buckets where Redis last said to wait for a response, with no time given. */
  readonly #untimed = new Set<string>();
  /** While set, Redis is not asked before this time (epoch ms). */
  #downUntil = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  /** How many times Redis was lost: a call sent before the last loss does not say it is back. */
  #downSince = 0;
  readonly #logged = new Map<string, number>();
  /** The last window this process saw per bucket, whose count Redis may lose. */
  readonly #windows = new Map<string, Seen>();
  /** The end of the last 429's cooldown this process saw per bucket (epoch ms), told again with each renewal. */
  readonly #cooldowns = new Map<string, number>();
  /** Leases Redis granted after the store stopped waiting for them, for the next call. */
  readonly #spares: Array<{ bucket: string; lease: string; strikes: number }> = [];
  #closed = false;
  /** Whether the client given was closed, or never connected (node-redis `isOpen`, ioredis `status`). */
  readonly #shut: () => boolean;

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
    const given = options.client as { isOpen?: unknown; status?: unknown };
    this.#shut = () => given.isOpen === false || given.status === 'end';
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
      `${base}turns`,
      `${base}lapsed`,
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

  /** Held calls ask again in `ms`. */
  #wakeIn(ms: number): void {
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.#wakeAll(), ms);
    unref(this.#retry);
  }

  /** Every call waiting on this store asks again. */
  #wakeAll(): void {
    for (const watch of this.#watches.values()) {
      for (const listener of watch.listeners) listener();
    }
  }

  #timed<T>(promise: Promise<T>): Promise<T> {
    if (this.#unanswered++ === 0) this.#quietSince = Date.now();
    const answered = () => {
      this.#unanswered--;
      this.#quietSince = Date.now();
    };
    // A reply, not a rejection (those of a client closed for reconnecting among them).
    const replied = () => {
      answered();
      this.#reconnected = false;
      this.#redis.learnOwnId?.();
    };
    promise.then(replied, answered);
    return within(
      promise,
      this.#timeoutMs,
      `Redis did not answer within ${this.#timeoutMs} ms`,
    ).catch((error: unknown) => {
      const now = Date.now();
      const due = now - this.#quietSince >= SUSPECT_MS && now - this.#probed >= SUSPECT_MS;
      if (this.#unanswered > 0 && !this.#probing && due) void this.#probe();
      throw error;
    });
  }

  /**
   * A connection that answers nothing while commands wait may be dead without knowing it (a NAT,
   * firewall or load balancer dropped it): when Redis answers a new connection meanwhile, the
   * client is made to open a new one, once until it answers. A Redis that is slow, or cut off,
   * answers neither; while it lists the client's connection blocked (a `BLPOP` of the app's own),
   * or any client when that connection's `CLIENT ID` is unknown, or cannot list them, nothing is
   * done.
   */
  async #probe(): Promise<void> {
    const { probe, reconnect } = this.#redis;
    if (!probe || !reconnect || this.#reconnected) return;
    this.#probing = true;
    const quiet = this.#quietSince;
    try {
      const clients = await probe(SUSPECT_MS);
      if (typeof clients !== 'string' || this.#quietSince !== quiet || this.#unanswered === 0)
        return;
      // The line of the client's connection when its id is known (none: it is gone), all otherwise.
      const id = this.#redis.ownId?.();
      const seen = id ? clients.split('\n').find((line) => line.startsWith(`id=${id} `)) : clients;
      if (/\bflags=[A-Za-z]*b/.test(seen ?? '')) {
        this.#log(
          'warn',
          `Redis answers a new connection, but the client's has answered nothing for ${Date.now() - quiet} ms while Redis lists a client blocked (BLPOP, BRPOP, XREAD BLOCK…, perhaps on this client): the store waits rather than reconnect it. Give blocking commands a Redis client of their own.`,
          'blocked',
        );
        return;
      }
      this.#reconnected = true;
      reconnect();
      // Its subscriptions went with it: taken again once Redis answers (see #recovered).
      for (const watch of this.#watches.values()) watch.unsubscribe = undefined;
      this.#log(
        'warn',
        "Redis answered a new connection but not the client's: the client reconnects (its connection was dropped on the way without its knowing).",
        'reconnect',
      );
    } catch {
    } finally {
      this.#probing = false;
      this.#probed = Date.now();
    }
  }

  #run(script: RedisScript, bucket: string, args: string[]): Promise<unknown> {
    return this.#timed(this.#send(script, bucket, args));
  }

  /**
   * Runs `work` against Redis, or throws {@link RedisUnavailable}. While Redis
   * fails, one admission every RETRY_MS finds out whether it is back; reports
   * and renewals are always sent (they cost nothing when it is not).
   */
  async #shared<T>(work: () => Promise<T>, admitting = false): Promise<T> {
    const now = Date.now();
    if (this.#closed) throw new RedisUnavailable('the store is closed');
    if (admitting && this.#downUntil > now) {
      // Its call asks again once Redis may be asked (a timer may wake it before the clock says so).
      this.#wakeIn(this.#downUntil - now + 1);
      throw new RedisUnavailable('Redis is unreachable');
    }
    if (admitting && this.#downUntil > 0) this.#downUntil = now + RETRY_MS;
    const sent = this.#downSince;
    try {
      const result = await work();
      // Back only once a call sent since it failed is answered.
      if (this.#downUntil > 0 && sent === this.#downSince) {
        this.#downUntil = 0;
        clearTimeout(this.#retry);
        try {
          this.#recovered();
        } catch {}
      }
      return result;
    } catch (error) {
      if (error instanceof RedisUnavailable) throw error;
      // An error Redis answered that waiting does not cure (a user without EVAL, a key of another
      // type): the call fails now, saying why, rather than being held as if Redis were down.
      const thrown = (error ?? {}) as { name?: unknown; constructor?: { name?: unknown } };
      const kind = `${String(thrown.name)} ${String(thrown.constructor?.name)}`;
      if (
        /ReplyError|ErrorReply|SimpleError|BlobError/.test(kind) &&
        !/^(LOADING|BUSY|TRYAGAIN|MASTERDOWN|CLUSTERDOWN|READONLY|MOVED|ASK|OOM)\b|^ERR max number of clients/.test(
          describe(error),
        )
      ) {
        throw new AnimalStoreError(
          `Redis refused the quota store's script (${describe(error)}). The store needs a primary, EVAL and EVALSHA, PUBLISH and SUBSCRIBE, and the keys under its prefix.`,
          { cause: bare(error) },
        );
      }
      // A client its owner never connected, or closed: waiting does not cure that either.
      if (this.#shut()) {
        throw new AnimalStoreError(
          `The Redis client given to RedisQuotaStore is not connected (${describe(error)}): connect it before the first call (await client.connect()) and close it only after the last. Nothing was sent.`,
          { cause: bare(error) },
        );
      }
      const first = this.#downUntil === 0;
      if (first) this.#downSince++;
      this.#downUntil = Date.now() + RETRY_MS;
      this.#wakeIn(RETRY_MS);
      if (first) {
        this.#log(
          'error',
          `The Redis quota store failed (${describe(error)}); this process sends no new request until Redis answers again (what the other processes spend cannot be known without it).`,
        );
      }
      throw new RedisUnavailable(describe(error));
    }
  }

  /**
   * Redis answers again: leases still in flight (with the cooldown and the
   * window seen here) are taught to a Redis that lost them, watches subscribe
   * again, and held calls ask now.
   */
  #recovered(): void {
    for (const bucket of this.#renewed()) this.#renew(bucket).catch(() => undefined);
    for (const [bucket, watch] of this.#watches) {
      if (!watch.unsubscribe) this.#subscribe(bucket, watch);
    }
    this.#wakeAll();
    this.#log('warn', 'Redis answers again: the quota is shared by every process again.');
  }

  /** One line of each kind a minute at most: a Redis that flaps does not flood the log. */
  #log(level: 'error' | 'warn', line: string, kind: string = level): void {
    const now = Date.now();
    if (now - (this.#logged.get(kind) ?? Number.NEGATIVE_INFINITY) < LOG_EVERY_MS) return;
    this.#logged.set(kind, now);
    try {
      this.#logger[level](`[animal-store] ${line}`);
    } catch {}
  }

  async admit(bucket: string, request?: AdmitRequest): Promise<Admission> {
    // A lease lives at least a second and at most a day, whatever it is asked.
    const asked = Number(request?.leaseMs);
    const leaseMs = Number.isNaN(asked)
      ? DEFAULT_LEASE_MS
      : Math.min(Math.max(Math.ceil(asked), 1_000), HORIZON_MS);
    const spare = this.#closed ? undefined : this.#spare(bucket);
    if (spare) return spare;
    try {
      return await this.#shared(() => this.#admit(bucket, leaseMs), true);
    } catch (error) {
      if (!(error instanceof RedisUnavailable)) throw error;
      if (this.#closed) {
        throw new AnimalStoreError(
          'This RedisQuotaStore was closed: close it only after the last call of the clients that use it.',
        );
      }
      // Untimed: the call waits at most its maxRetryDelayMs for Redis to answer, asking again.
      this.#untimed.add(bucket);
      return { reason: 'budget-unknown' };
    }
  }

  async #admit(bucket: string, leaseMs: number): Promise<Admission> {
    const lease = `${this.#id}.${++this.#leases}`;
    const args = [lease, this.#id, String(LIFE_MS), this.#channel(bucket), ...this.#seen(bucket)];
    const asked = performance.now();
    const sent = this.#send(SCRIPTS.admit, bucket, args);
    let answered = true;
    // Redis may answer too late: a lease granted then is kept for the next
    // call of this process that asks (woken now), and goes back if none does.
    sent
      .then((reply) => {
        if (answered) return;
        const late = readAdmission(reply, lease);
        if (!('lease' in late)) return;
        this.#lend(bucket, lease, asked, leaseMs);
        this.#spares.push({ bucket, lease, strikes: late.strikes ?? 0 });
        this.#wakeAll();
        unref(setTimeout(() => this.#spare(bucket, lease), SPARE_MS));
      })
      .catch(() => undefined);
    let reply: unknown;
    try {
      reply = await this.#timed(sent);
    } catch (error) {
      answered = false;
      throw error;
    }
    const admission = readAdmission(reply, lease);
    if (this.#closed) {
      if ('lease' in admission) {
        this.#run(SCRIPTS.release, bucket, [lease, this.#channel(bucket)]).catch(() => undefined);
      }
      throw new RedisUnavailable('the store is closed');
    }
    if ('lease' in admission) {
      this.#queued.delete(bucket);
      this.#lend(bucket, lease, asked, leaseMs);
    } else {
      this.#queued.set(bucket, performance.now());
    }
    this.#renewing();
    if ('reason' in admission && admission.waitMs === undefined) this.#untimed.add(bucket);
    else this.#untimed.delete(bucket);
    return admission;
  }

  /**
   * The last window seen here while it lasts (limit, resetId, ms left, 1 when its reset was said
   * in seconds-until), told with every admission and renewal: a Redis that lost it (restarted
   * empty, flushed) takes it as spent. An exact reset is the service's own (a Unix time), so a
   * window Redis saw end is never told back; one said in seconds-until, whose name differs from
   * process to process, is taken only while Redis knows it lost the budget.
   */
  #seen(bucket: string): string[] {
    const seen = this.#windows.get(bucket);
    const left = Math.ceil((seen?.resetAt ?? 0) - Date.now());
    if (!seen || left <= 0) return [];
    return [String(seen.limit), String(seen.resetId), String(left), seen.approximate ? '1' : '0'];
  }

  /** Records a lease Redis granted to a script sent at `asked`, and renews it. */
  #lend(bucket: string, lease: string, asked: number, leaseMs: number): void {
    const leases = this.#live.get(bucket) ?? new Map<string, Live>();
    this.#live.set(bucket, leases);
    leases.set(lease, { heldUntil: asked + LIFE_MS - MARGIN_MS, renewUntil: asked + leaseMs });
    this.#renewing();
  }

  /**
   * Takes the bucket's lease granted too late (the one given, or the first
   * that still holds); those lapsed, and `lease` when given, go back.
   */
  #spare(bucket: string, lease?: string): Admission | undefined {
    for (let i = 0; i < this.#spares.length; i++) {
      const spare = this.#spares[i]!;
      if (spare.bucket !== bucket || (lease !== undefined && spare.lease !== lease)) continue;
      this.#spares.splice(i--, 1);
      if (lease === undefined && this.holds(bucket, spare.lease)) {
        return { lease: spare.lease, strikes: spare.strikes };
      }
      // A client closed meanwhile rejects: the lease then lapses in Redis on its own.
      this.release(bucket, spare.lease).catch(() => undefined);
    }
    return undefined;
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

  /** Buckets with leases in flight or a 429's cooldown to tell again; expired cooldowns forgotten. */
  #renewed(): Set<string> {
    const now = Date.now();
    for (const [bucket, until] of this.#cooldowns) {
      if (until - now <= TELL_MS) this.#cooldowns.delete(bucket);
    }
    return new Set([...this.#live.keys(), ...this.#cooldowns.keys()]);
  }

  /** Renews, once a period, while this store has requests in flight, a place in line, or a cooldown to tell. */
  #renewing(): void {
    if (this.#renewal || this.#closed) return;
    this.#renewal = setInterval(() => {
      const renewed = this.#renewed();
      if (renewed.size === 0 && this.#queued.size === 0) {
        clearInterval(this.#renewal);
        this.#renewal = undefined;
        return;
      }
      // A place in line nobody here waits for (the call gave up at its first
      // hold, or was aborted meanwhile) is given up, not renewed.
      const now = performance.now();
      for (const [bucket, since] of this.#queued) {
        if (this.#watches.has(bucket) || now - since < RENEW_MS) continue;
        this.#queued.delete(bucket);
        this.#run(SCRIPTS.leave, bucket, [this.#id, this.#channel(bucket)]).catch(() => undefined);
      }
      for (const bucket of new Set([...renewed, ...this.#queued.keys()])) {
        this.#renew(bucket).catch(() => undefined);
      }
    }, RENEW_MS);
    unref(this.#renewal);
  }

  async #renew(bucket: string): Promise<void> {
    const now = performance.now();
    const leases = this.#live.get(bucket) ?? new Map<string, Live>();
    // A lease past its request's time limit, or that may have lapsed, is no longer renewed.
    const renewed = [...leases].filter(([, live]) => live.renewUntil > now && live.heldUntil > now);
    // A Redis that lost the cooldown (restarted empty) learns it again: nobody sends into it.
    const cooling = (this.#cooldowns.get(bucket) ?? 0) - Date.now();
    await this.#shared(() =>
      this.#run(SCRIPTS.renew, bucket, [
        this.#id,
        String(LIFE_MS),
        this.#channel(bucket),
        String(cooling > TELL_MS ? Math.ceil(cooling) : 0),
        ...[...this.#seen(bucket), '', '', '', ''].slice(0, 4),
        ...renewed.map(([lease]) => lease),
      ]),
    );
    for (const [, live] of renewed) live.heldUntil = now + LIFE_MS - MARGIN_MS;
  }

  async observe(bucket: string, lease: string, observation: Observation): Promise<void> {
    this.#forget(bucket, lease);
    const seenAt = Date.now();
    const { cooldownMs = 0 } = observation;
    if (observation.status === 429 && cooldownMs > 0) {
      const cooldowns = this.#cooldowns;
      const until = Math.max(cooldowns.get(bucket) ?? 0, seenAt + Math.min(cooldownMs, HORIZON_MS));
      cooldowns.delete(bucket);
      cooldowns.set(bucket, until);
      if (cooldowns.size > 256) cooldowns.delete(cooldowns.keys().next().value!);
      this.#renewing();
    }

    try {
      await this.#shared(() => this.#report(bucket, lease, observation));
    } catch (error) {
      if (!(error instanceof RedisUnavailable)) throw error;
      return;
    }
    // Remembered once Redis has it: should Redis lose it, this process says so.
    const { window } = observation;
    if (window) {
      const { limit, resetId, resetInMs } = window;
      const windows = this.#windows;
      windows.delete(bucket);
      const approximate = window.approximate === true;
      windows.set(bucket, { limit, resetId, resetAt: seenAt + resetInMs, approximate });
      if (windows.size > 256) windows.delete(windows.keys().next().value!);
    }
  }

  async #report(bucket: string, lease: string, observation: Observation): Promise<void> {
    const { status, window, cooldownMs } = observation;
    await this.#run(SCRIPTS.observe, bucket, [
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
  }

  async release(bucket: string, lease: string): Promise<void> {
    this.#forget(bucket, lease);
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
        if (this.#untimed.has(bucket)) {
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
    listeners.add(listener);
    return () => {
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
      // Asked by a process that found the budget gone from Redis: what this one knows is told.
      if (message === 'tell') this.#renew(bucket).catch(() => undefined);
      else if (message.split(' ').includes(this.#id)) wake();
    };
    const subscribed = Promise.resolve().then(() =>
      subscribe.call(this.#redis, this.#channel(bucket), named),
    );
    watch.unsubscribe = within(
      subscribed,
      this.#timeoutMs,
      `Redis did not confirm a subscription within ${this.#timeoutMs} ms`,
    ).then(
      (unsubscribe) => {
        wake();
        return unsubscribe;
      },
      () => {
        // Subscribed again once Redis answers again; one confirmed late is ended.
        watch.unsubscribe = undefined;
        subscribed
          .then((unsubscribe) => (typeof unsubscribe === 'function' ? unsubscribe() : undefined))
          .catch(() => undefined);
        return undefined;
      },
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
   * the client it was given) and its renewals. Calls that ask it from then
   * on, and those waiting now, fail with an {@link AnimalStoreError}.
   */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      clearTimeout(this.#retry);
      clearInterval(this.#renewal);
      this.#renewal = undefined;
      this.#wakeAll();
      for (const { bucket, lease } of this.#spares.splice(0)) {
        this.#run(SCRIPTS.release, bucket, [lease, this.#channel(bucket)]).catch(() => undefined);
      }
    }
    // The subscriber connection of a Redis that does not answer is not waited for.
    await within(
      Promise.resolve().then(() => this.#redis.close?.()),
      this.#timeoutMs,
      'Redis did not close in time',
    ).catch(() => undefined);
  }
}

/** What the admission script answered, checked. */
function readAdmission(reply: unknown, lease: string): Admission {
  if (Array.isArray(reply)) {
    const [granted, second, third] = reply as unknown[];
    if ((granted === 1 || granted === '1') && second === lease) {
      return { lease, strikes: Number(third ?? 0) };
    }
    const waitMs = Number(third);
    if ((granted === 0 || granted === '0') && HOLDS.has(String(second))) {
      if (Number.isFinite(waitMs) && waitMs <= HORIZON_MS) {
        const reason = String(second) as HoldReason;
        return waitMs < 0 ? { reason } : { reason, waitMs };
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

/** The error's name and message alone: a client's error may hold the command it sent (AUTH's password). */
function bare(error: unknown): Error {
  const copy = new Error(describe(error));
  if (error instanceof Error) copy.name = error.name;
  return copy;
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
