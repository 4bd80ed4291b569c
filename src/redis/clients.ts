import type { RedisScript } from './scripts.js';

/**
 * What the store needs from a Redis client: running a Lua script and,
 * optionally, subscribing to a channel. node-redis and ioredis clients are
 * adapted automatically; adapt any other client able to run Lua scripts
 * (serverless Redis services' HTTP clients, for example) to this.
 */
export interface RedisScripts {
  /** Runs `script` (`EVAL`). Resolves to its reply: arrays, integers and strings as Redis sends them. */
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  /** Runs a script the server already knows by its SHA-1 (`EVALSHA`). Optional: without it, every call sends the script. */
  evalsha?(sha1: string, keys: string[], args: string[]): Promise<unknown>;
  /**
   * Subscribes `listener` to `channel`; resolves once subscribed, to a
   * function that unsubscribes. Optional: without it, processes waiting for
   * a response that another process awaits ask again every 200 ms.
   */
  subscribe?(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;
  /** Closes what the adapter opened for `subscribe` (not the client itself). */
  close?(): Promise<void>;
}

// Any function: the clients' own signatures are overloaded and generic, and
// nothing here needs them to be typed more closely.
type Method = (...args: never[]) => unknown;

/** A node-redis client (`createClient()` of the `redis` package, v4 and later), connected. */
export interface NodeRedisClient {
  readonly evalSha: Method;
  readonly duplicate: Method;
}

/** An ioredis client (`new Redis()` of the `ioredis` package, v5 and later). */
export interface IORedisClient {
  readonly evalsha: Method;
  readonly duplicate: Method;
  readonly call: Method;
}

/** The clients `RedisQuotaStore` takes. */
export type RedisClient = NodeRedisClient | IORedisClient | RedisScripts;

/** A client adapted; node-redis and ioredis can also list Redis's clients on a new connection (closed within `ms`), reconnect, and learn their connection's id. */
export type Adapted = RedisScripts & {
  readonly probe?: (ms: number) => Promise<unknown>;
  readonly reconnect?: () => void;
} & Partial<ReturnType<typeof idOf>>;

// Each client's connections, counted by its 'ready' events: one listener per client, however
// many stores share it.
const connections = new WeakMap<object, { count: number }>();

/**
 * The `CLIENT ID` of the client's connection (`ownId`), asked by `learnOwnId` one question at a
 * time, once per connection: each 'ready' (a new connection) forgets it, and drops an answer given
 * before. A refusal (an ACL without `CLIENT`) is kept as `''`.
 */
function idOf(client: Pick<NodeRedis, 'on'>, ask: () => Promise<unknown>) {
  // A client that tells no connections apart (no events) has no id known: the rule for none holds.
  if (!isFunction(client.on)) return {};
  let counted = connections.get(client);
  if (!counted) {
    const made = { count: 0 };
    counted = made;
    connections.set(client, made);
    client.on('ready', () => made.count++);
  }
  const connection = counted;
  let asking = false;
  let known: { on: number; id: string } | undefined;
  return {
    ownId: () => (known?.on === connection.count ? known.id : undefined),
    learnOwnId() {
      if (asking || known?.on === connection.count) return;
      asking = true;
      const on = connection.count;
      Promise.resolve()
        .then(ask)
        .then(String, () => '')
        .then((id) => {
          asking = false;
          known = { on, id };
        });
    },
  };
}

/** Runs `ask` on `fresh`, closing it (`close`) when done or after `ms`, whichever is first. */
async function askOn<T>(
  fresh: T,
  ms: number,
  ask: (fresh: T) => Promise<unknown>,
  close: (fresh: T) => unknown,
) {
  const timer = setTimeout(() => close(fresh), ms);
  try {
    return await ask(fresh);
  } finally {
    clearTimeout(timer);
    close(fresh);
  }
}

interface NodeRedis {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  duplicate(): NodeRedis;
  connect(): Promise<unknown>;
  on(event: 'error' | 'ready', listener: (error: unknown) => void): unknown;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
  destroy?(): unknown;
  disconnect?(): unknown;
}

interface IORedis {
  evalsha(sha1: string, count: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, count: number, ...keysAndArgs: string[]): Promise<unknown>;
  duplicate(): IORedis;
  readonly isCluster?: boolean;
  on(event: 'error' | 'ready', listener: (error: unknown) => void): unknown;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  call(...args: string[]): Promise<unknown>;
  disconnect(reconnect?: boolean): unknown;
}

/**
 * A subscriber connection shared by every channel, with one listener per
 * channel, opened on the first subscription and closed after the last.
 */
class Channels {
  readonly #listeners = new Map<string, (message: string) => void>();
  #connection: Promise<unknown> | undefined;
  readonly #open: (deliver: (channel: string, message: string) => void) => Promise<unknown>;

  constructor(open: (deliver: (channel: string, message: string) => void) => Promise<unknown>) {
    this.#open = open;
  }

  deliver = (channel: string, message: string): void => {
    this.#listeners.get(channel)?.(message);
  };

  async connection(): Promise<unknown> {
    this.#connection ??= this.#open(this.deliver).catch((error: unknown) => {
      this.#connection = undefined;
      throw error;
    });
    return this.#connection;
  }

  listen(channel: string, listener: (message: string) => void): void {
    this.#listeners.set(channel, listener);
  }

  /**
   * Forgets `channel`'s listener; `true` when it was the last, and the
   * connection is forgotten too, for the caller to close: an idle
   * subscription must not keep the process alive.
   */
  forget(channel: string): boolean {
    this.#listeners.delete(channel);
    if (this.#listeners.size > 0) return false;
    this.#connection = undefined;
    return true;
  }

  /** The connection opened, if any, and forgets it. */
  take(): Promise<unknown> | undefined {
    const connection = this.#connection;
    this.#connection = undefined;
    this.#listeners.clear();
    return connection;
  }
}

const ignore = (settled: unknown) => Promise.resolve(settled).catch(() => undefined);

function fromNodeRedis(client: NodeRedis): Adapted {
  const close = (subscriber: NodeRedis) =>
    ignore((subscriber.destroy ?? subscriber.disconnect)?.call(subscriber));
  const channels = new Channels(async () => {
    const subscriber = client.duplicate();
    // An unhandled 'error' event would end the process; failures surface through the calls.
    subscriber.on('error', () => undefined);
    await subscriber.connect();
    return subscriber;
  });
  return {
    eval: (script, keys, args) => client.eval(script, { keys, arguments: args }),
    evalsha: (sha1, keys, args) => client.evalSha(sha1, { keys, arguments: args }),
    // One server's client only (it has SELECT): a Sentinel's or a Cluster's is not connected again so.
    ...(isFunction((client as unknown as Record<string, unknown>).select) && {
      ...idOf(client, () => client.sendCommand(['CLIENT', 'ID'])),
      probe: (ms: number) =>
        askOn(
          client.duplicate(),
          ms,
          async (fresh) => {
            fresh.on('error', () => undefined);
            await fresh.connect();
            return fresh.sendCommand(['CLIENT', 'LIST']);
          },
          close,
        ),
      reconnect() {
        close(client);
        ignore(client.connect());
        ignore(channels.take()?.then((subscriber) => close(subscriber as NodeRedis)));
      },
    }),
    async subscribe(channel, listener) {
      channels.listen(channel, listener);
      const subscriber = (await channels.connection()) as NodeRedis;
      await subscriber.subscribe(channel, (message) => channels.deliver(channel, message));
      return async () => {
        await subscriber.unsubscribe(channel);
        if (channels.forget(channel)) close(subscriber);
      };
    },
    async close() {
      const subscriber = (await channels.take()?.catch(() => undefined)) as NodeRedis | undefined;
      if (subscriber) close(subscriber);
    },
  };
}

function fromIORedis(client: IORedis): Adapted {
  const channels = new Channels(async (deliver) => {
    const subscriber = client.duplicate();
    subscriber.on('error', () => undefined);
    subscriber.on('message', deliver);
    return subscriber;
  });
  return {
    eval: (script, keys, args) => client.eval(script, keys.length, ...keys, ...args),
    evalsha: (sha1, keys, args) => client.evalsha(sha1, keys.length, ...keys, ...args),
    // A Cluster's connections are one per node, their ids each node's own.
    ...(!client.isCluster && idOf(client, () => client.call('CLIENT', 'ID'))),
    probe(ms) {
      const fresh = client.duplicate();
      fresh.on('error', () => undefined);
      return askOn(
        fresh,
        ms,
        (it) => it.call('CLIENT', 'LIST'),
        (it) => it.disconnect(),
      );
    },
    reconnect() {
      client.disconnect(true);
      ignore(channels.take()?.then((subscriber) => (subscriber as IORedis).disconnect()));
    },
    async subscribe(channel, listener) {
      channels.listen(channel, listener);
      const subscriber = (await channels.connection()) as IORedis;
      await subscriber.subscribe(channel);
      return async () => {
        await subscriber.unsubscribe(channel);
        if (channels.forget(channel)) subscriber.disconnect();
      };
    },
    async close() {
      const subscriber = (await channels.take()?.catch(() => undefined)) as IORedis | undefined;
      subscriber?.disconnect();
    },
  };
}

const isFunction = (value: unknown): boolean => typeof value === 'function';

/** The client as {@link RedisScripts}, or `undefined` when it is none of the three. */
export function adapt(client: unknown): Adapted | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const c = client as Record<string, unknown>;
  if (isFunction(c.evalSha) && isFunction(c.duplicate)) return fromNodeRedis(client as NodeRedis);
  if (isFunction(c.evalsha) && isFunction(c.duplicate) && isFunction(c.call)) {
    return fromIORedis(client as IORedis);
  }
  if (isFunction(c.eval)) return client as RedisScripts;
  return undefined;
}

const digests = new Map<string, Promise<string>>();

/** The script's SHA-1 in hex, as `EVALSHA` names it. */
export function sha1Of(script: RedisScript): Promise<string> {
  let digest = digests.get(script.name);
  if (!digest) {
    digest = crypto.subtle
      .digest('SHA-1', new TextEncoder().encode(script.source))
      .then((bytes) =>
        Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join(''),
      );
    digests.set(script.name, digest);
  }
  return digest;
}
