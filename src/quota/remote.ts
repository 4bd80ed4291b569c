// What only a remote store (any but the shipped in-memory one) needs: its answers are waited for
// within each request's timeoutMs.
import { TimeoutError } from '../errors.js';
import { HORIZON_MS } from '../headers.js';
import { MAX_TIMER_MS } from '../timers.js';
import { type Admission, HOLDS, type HoldReason } from './store.js';

/** An admission as the interface describes it, or a throw. */
export function checked(admission: Admission): Admission {
  let { lease, reason, waitMs, strikes } = (admission ?? {}) as Record<string, unknown>;
  if (typeof lease === 'string' && lease !== '') {
    return { lease, strikes: Number.isSafeInteger(strikes) ? Math.max(0, strikes as number) : 0 };
  }
  if (!Object.hasOwn(HOLDS, reason as string)) waitMs = -1;
  if (waitMs === undefined) return { reason: reason as HoldReason };
  if (typeof waitMs === 'number' && waitMs >= 0)
    return { reason: reason as HoldReason, waitMs: Math.min(waitMs, HORIZON_MS) };
  throw new TypeError(
    `admit answered ${typeof admission === 'object' ? JSON.stringify(admission) : String(admission)}, not { lease } or { reason, waitMs? }`,
  );
}

/** `promise`, or a rejection with `error()` after `ms`. */
export function within<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  if (ms > MAX_TIMER_MS) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

interface Waiting {
  readonly request: { readonly timeoutMs: number };
  /** Since when it has waited for the store's answers (epoch ms): for its own, or for those ahead of it. */
  asked?: number | undefined;
  readonly reject: (error: unknown) => void;
}

/**
 * A remote store's `answer` for the head of the line, waited for by every request in line, each
 * no longer than its own `timeoutMs` (it then fails with a `TimeoutError` and leaves the line);
 * `undefined` once the head it was asked for has left (the next is asked then), a lease that
 * comes later going to `giveBack`. The line's `nudge` is called when a request joins or leaves.
 */
export async function inLine(
  answer: Promise<Admission>,
  line: { readonly waiters: Waiting[]; nudge?: (() => void) | undefined },
  giveBack: (lease: string) => unknown,
): Promise<Admission | undefined> {
  const { waiters } = line;
  const head = waiters[0];
  const left = (one: Waiting) => {
    one.asked ??= Date.now();
    return one.request.timeoutMs - (Date.now() - one.asked);
  };
  let came = false;
  const come = () => {
    came = true;
  };
  const settled = answer.then(come, come);
  while (!came) {
    if (waiters[0] !== head) {
      answer
        .then((late) => ('lease' in late ? giveBack(late.lease) : undefined))
        .catch(() => undefined);
      return undefined;
    }
    const soonest = waiters.reduce((least, one) => Math.min(least, left(one)), Infinity);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      settled,
      new Promise<void>((resolve) => {
        line.nudge = resolve;
        if (soonest <= MAX_TIMER_MS) timer = setTimeout(resolve, Math.max(0, soonest));
      }),
    ]);
    clearTimeout(timer);
    line.nudge = undefined;
    if (came) break;
    for (const one of waiters.filter((one) => left(one) <= 0)) {
      waiters.splice(waiters.indexOf(one), 1);
      const why = `The quota store did not admit the request within timeoutMs (${one.request.timeoutMs} ms); nothing was sent.`;
      one.reject(new TimeoutError(why));
    }
  }
  // An answer came: the next wait for one starts afresh.
  for (const one of waiters) one.asked = undefined;
  return answer;
}
