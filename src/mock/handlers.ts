import type { RequestHandler } from 'msw';
import { http } from './msw.js';
import { createMockService, type MockService, type MockServiceOptions } from './service.js';

/** msw handlers for the whole interface, with the service behind them for seeding and resetting. */
export type MockHandlers = RequestHandler[] & { readonly service: MockService };

/**
 * msw request handlers implementing the Animal Store interface from the spec.
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node';
 * import { createHandlers } from '@animal-store/sdk/mock';
 *
 * const handlers = createHandlers({ apiKeys: ['test-key'], baseUrl: 'https://api.animal-store.example/v1' });
 * const server = setupServer(...handlers);
 * handlers.service.reset(); // between tests
 * ```
 */
export function createHandlers(
  options: MockServiceOptions & { service?: MockService } = {},
): MockHandlers {
  const service = options.service ?? createMockService(options);
  const base = service.baseUrl;
  const answer = ({ request }: { request: Request }) => service.handle(request);
  const handlers = [
    http.get(`${base}/pets`, answer),
    http.post(`${base}/pets`, answer),
    http.get(`${base}/pets/:petId`, answer),
  ];
  return Object.assign(handlers, { service });
}
