// `@animal-store/sdk/mock` as a browser bundle resolves it (the `browser`
// condition): the msw handlers and the in-memory service, for msw's
// `setupWorker`, without the loopback server, which needs Node's `node:http`.

import { MockServerOptionError } from './MockServerOptionError.js';
import type { MockServer, MockServerOptions } from './server.js';

export * from './common.js';
export type { MockServer, MockServerOptions } from './server.js';

/** In a browser there is no port to listen on: serve `createHandlers()` with msw's `setupWorker` instead. */
export function startMockServer(_options?: MockServerOptions): Promise<MockServer> {
  return Promise.reject(
    new MockServerOptionError(
      "startMockServer needs Node.js (it listens on a loopback port). In a browser, serve createHandlers() with msw's setupWorker (import { setupWorker } from 'msw/browser').",
    ),
  );
}
