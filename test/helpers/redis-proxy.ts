import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy of our own on loopback, between one process and Redis, that
 * makes the faults of a network: replies delayed, packets dropped with the
 * sockets left open (a partition), connections reset and refused.
 */
export interface RedisProxy {
  readonly url: string;
  readonly port: number;
  /** Delays every reply by a random time between `minMs` and `maxMs`, in order. */
  delay(minMs: number, maxMs: number): void;
  /**
   * Lets nothing through either way, sockets left open (a partition: packets
   * dropped, which TCP sends again once the network heals).
   */
  blackhole(): void;
  /**
   * Drops every byte either way for good on the connections open now or
   * opened until `heal`, sockets left open: what a NAT, firewall or load
   * balancer that forgot them does (no reset, no reply ever again).
   */
  sever(): void;
  /** Resets every connection and refuses new ones. */
  reset(): void;
  /** Forwards again, without delay, to `port` (the same Redis by default, or a new one). */
  heal(port?: number): void;
  close(): Promise<void>;
}

type Mode = 'pass' | 'blackhole' | 'refuse' | 'sever';

export async function startRedisProxy(targetPort: number): Promise<RedisProxy> {
  let target = targetPort;
  let mode: Mode = 'pass';
  let delay: [number, number] = [0, 0];
  const pairs = new Set<[Socket, Socket]>();
  const severed = new Set<[Socket, Socket]>();
  // What a partition holds back, sent in order when it heals.
  let held: Array<() => void> = [];

  const server: Server = createServer((client) => {
    if (mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(target, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    if (mode === 'sever') severed.add(pair);
    // Replies keep their order: one queue per connection, each chunk written
    // once its delay is over and every chunk before it was (timers of
    // different lengths that end in the same millisecond may fire in any order).
    const due: Array<{ at: number; chunk: Buffer }> = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drain = () => {
      timer = undefined;
      while (due.length > 0 && due[0]!.at <= Date.now()) {
        const { chunk } = due.shift()!;
        if (severed.has(pair)) continue;
        if (mode === 'pass') client.write(chunk);
        else held.push(() => client.write(chunk));
      }
      if (due.length > 0) timer = setTimeout(drain, due[0]!.at - Date.now());
    };
    const end = () => {
      clearTimeout(timer);
      pairs.delete(pair);
      severed.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      if (severed.has(pair)) return;
      if (mode === 'pass') upstream.write(chunk);
      else held.push(() => upstream.write(chunk));
    });
    upstream.on('data', (chunk: Buffer) => {
      const [min, max] = delay;
      const at = Math.ceil(Date.now() + min + Math.random() * (max - min));
      due.push({ at: Math.max(at, due.at(-1)?.at ?? 0), chunk });
      if (!timer) drain();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    delay(min, max) {
      mode = 'pass';
      delay = [min, max];
    },
    blackhole() {
      mode = 'blackhole';
    },
    sever() {
      mode = 'sever';
      for (const pair of pairs) severed.add(pair);
    },
    reset() {
      mode = 'refuse';
      for (const [client, upstream] of pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      pairs.clear();
      held = [];
    },
    heal(port = target) {
      target = port;
      mode = 'pass';
      delay = [0, 0];
      const flush = held;
      held = [];
      for (const send of flush) send();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [client, upstream] of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
