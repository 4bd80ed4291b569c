// Each bucket's cooldown in this process: told to the key's clients on any store but a
// `MemoryQuotaStore` made for them, should theirs be slow, lose a 429, or never see it. Worker
// threads of one process each load the SDK, with a default store of their own: a 429's cooldown
// is told to the others over a BroadcastChannel, as clients of one thread share it.
import { HORIZON_MS } from '../headers.js';
import { forgetEnded, shared } from './MemoryQuotaStore.js';

export const cooldowns = shared('quota-cooldowns', () => new Map<string, number>());
let threads: Threads | undefined; // opened by the first client that shares `cooldowns`

/** Opens this thread's line to the others, once. */
export const shareCooldowns = () => {
  threads ??= shared('quota-threads', () => threadsOf(cooldowns));
};

/** Cools `bucket` down for `ms` in this process, and in its other threads. */
export function coolDown(bucket: string, ms: number): void {
  const now = Date.now();
  forgetEnded(cooldowns, now);
  const until = Math.max(now + Math.min(ms, HORIZON_MS), cooldowns.get(bucket) ?? 0);
  cooldowns.set(bucket, until);
  if (threads?.peers) threads.tell(bucket, until);
}

/** This thread's line to the other threads of its process; `peers` once one has answered. */
interface Threads {
  peers: boolean;
  tell(bucket: string, until: number): void;
}

type Channel = typeof BroadcastChannel & { prototype: { unref?: () => void } };

/**
 * Keeps `cooldowns` (bucket → end, epoch ms) in step with other threads'. None where a channel
 * cannot be kept from holding the process open (only Node's, and Bun's, can be unref'd).
 */
export function threadsOf(cooldowns: Map<string, number>): Threads {
  const threads: Threads = { peers: false, tell: () => undefined };
  const Channel = (globalThis as { BroadcastChannel?: Channel }).BroadcastChannel;
  if (typeof Channel?.prototype.unref !== 'function') return threads;
  const channel = new Channel('@animal-store/sdk/cooldowns@1') as BroadcastChannel & {
    unref(): void;
  };
  const send = (message: unknown) => {
    try {
      channel.postMessage(message);
    } catch {}
  };
  threads.tell = (bucket, until) => send([bucket, until]);
  channel.onmessage = ({ data }: MessageEvent<unknown>) => {
    threads.peers = true;
    const now = Date.now();
    // A thread that starts is answered, and told the cooldowns under way.
    if (data === 'hello') {
      send('here');
      for (const entry of cooldowns) if (entry[1] > now) send(entry);
    }
    const [bucket, until] = Array.isArray(data) ? (data as unknown[]) : [];
    if (
      typeof bucket !== 'string' ||
      !/^[\w-]{1,100}$/.test(bucket) ||
      !(typeof until === 'number' && until > now)
    )
      return;
    // Bounded: past 1,000 keys, ended cooldowns go, and then a new one is not taken.
    if (!cooldowns.has(bucket) && cooldowns.size >= 1000) {
      for (const [name, end] of cooldowns) if (end <= now) cooldowns.delete(name);
      if (cooldowns.size >= 1000) return;
    }
    cooldowns.set(bucket, Math.max(cooldowns.get(bucket) ?? 0, Math.min(until, now + HORIZON_MS)));
  };
  channel.unref();
  send('hello');
  return threads;
}
