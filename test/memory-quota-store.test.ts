import { describe, expect, it } from 'vitest';
import { MemoryQuotaStore } from '../src/index.js';

// The rules every QuotaStore keeps, on the in-memory one, with an injected clock.

const window = (remaining: number, resetId: number, resetInMs: number, limit = 10) => ({
  limit,
  remaining,
  resetId,
  resetInMs,
});

function storeAt(start = 1_000_000) {
  let now = start;
  const store = new MemoryQuotaStore({ now: () => now });
  return {
    store,
    advance: (ms: number) => {
      now += ms;
    },
    lease: async () => {
      const admission = await store.admit('b');
      if (!('lease' in admission)) throw new Error(`held: ${admission.reason}`);
      return admission.lease;
    },
  };
}

describe('MemoryQuotaStore', () => {
  it('admits one request while the budget is unknown, then as many as remain', async () => {
    const { store, lease } = storeAt();
    const probe = await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
    await store.observe('b', probe, { status: 200, window: window(3, 100, 5000) });
    const leases = [await lease(), await lease(), await lease()];
    expect(new Set(leases).size).toBe(3);
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight', waitMs: 5000 });
  });

  it('holds until the reset once none remain, then probes the new window', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(0, 100, 2000) });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 2000 });
    advance(2000);
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('only tightens a window: an older window or a larger remaining for the same one is ignored', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(1, 100, 5000) });
    await store.observe('b', await lease(), { status: 200, window: window(7, 100, 5000) });
    await store.observe('b', await lease(), { status: 200, window: window(9, 99, 4000) });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight', waitMs: 5000 });
  });

  it('keeps a minute window and a day window apart, and obeys the tighter', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(50, 100, 30_000, 60) });
    await store.observe('b', await lease(), {
      status: 200,
      window: window(1, 500, 3_600_000, 1000),
    });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-in-flight', waitMs: 3_600_000 });
  });

  it('extends a cooldown, never shortens it, and probes when it ends', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 200 });
    const a = await lease();
    const b = await lease();
    await store.observe('b', a, { status: 429, cooldownMs: 5000 });
    await store.observe('b', b, { status: 429, cooldownMs: 1000 });
    expect(await store.admit('b')).toEqual({ reason: 'cooldown', waitMs: 5000 });
    advance(5000);
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('admits everything once the service answers without rate-limit headers', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200 });
    for (let i = 0; i < 50; i++) await lease();
  });

  it('counts a response whose rate-limit headers it could not use against the budget it knew', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200, window: window(2, 100, 5000) });
    await store.observe('b', await lease(), { status: 200 });
    await store.observe('b', await lease(), { status: 200 });
    expect(await store.admit('b')).toEqual({ reason: 'budget-exhausted', waitMs: 5000 });
  });

  it('turns reactive after an answer with no usable budget, never one request at a time', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 200 });
    for (let i = 0; i < 50; i++) await lease();
  });

  it('still probes after an answer with no usable budget that was no answer of the service', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 503 });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('holds the key a little after a request that got no response, as no-response', async () => {
    const { store, lease, advance } = storeAt();
    await store.observe('b', await lease(), { status: 0, cooldownMs: 400 });
    expect(await store.admit('b')).toEqual({ reason: 'no-response', waitMs: 400 });
    advance(400);
    await lease();
  });

  it('lets the next request probe when the probe gets no response', async () => {
    const { store, lease } = storeAt();
    const probe = await lease();
    await store.release('b', probe);
    await lease();
  });

  it('does not learn the budget from a 5xx without headers (a proxy may have answered)', async () => {
    const { store, lease } = storeAt();
    await store.observe('b', await lease(), { status: 502 });
    await lease();
    expect(await store.admit('b')).toEqual({ reason: 'budget-unknown' });
  });

  it('tells watchers of every change, until they stop watching', async () => {
    const { store, lease } = storeAt();
    let calls = 0;
    const stop = store.watch('b', () => calls++);
    await store.release('b', await lease());
    stop();
    await store.release('b', await lease());
    expect(calls).toBe(1);
  });

  it('keeps buckets apart', async () => {
    const { store, lease } = storeAt();
    await lease();
    expect(await store.admit('other')).toHaveProperty('lease');
  });
});
