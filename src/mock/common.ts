// What `@animal-store/sdk/mock` offers on every platform: the msw handlers and
// the in-memory service. The loopback server is added by `index.ts` (Node)
// and refused by `browser.ts`.

export { createHandlers, type MockHandlers } from './handlers.js';
export { MockServerOptionError } from './MockServerOptionError.js';
export { PLAN_LIMITS, type Plan, type RateLimits } from './plans.js';
export {
  createMockService,
  type MockService,
  type MockServiceOptions,
  SAMPLE_PETS,
} from './service.js';
