// `@animal-store/sdk/mock`: a spec-faithful Animal Store for tests and demos.
// It is the only entry that loads msw; the main entry never imports it.

export { createHandlers, type MockHandlers } from './handlers.js';
export { PLAN_LIMITS, type Plan, type RateLimits } from './plans.js';
export {
  type MockServer,
  MockServerOptionError,
  type MockServerOptions,
  startMockServer,
} from './server.js';
export {
  createMockService,
  type MockService,
  type MockServiceOptions,
  SAMPLE_PETS,
} from './service.js';
