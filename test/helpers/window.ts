import type { WindowReport } from '../../src/index.js';

/** A window as a response reports it to a store: `remaining` of `limit`, ending in `resetInMs`. */
export const window = (
  remaining: number,
  resetInMs = 60_000,
  limit = 60,
  resetId = 1000,
): WindowReport => ({ limit, remaining, resetId, resetInMs });
