// `@animal-store/sdk/mock`: a spec-faithful Animal Store for tests and demos.
// It is the only entry that loads msw; the main entry never imports it.

export * from './common.js';
export { type MockServer, type MockServerOptions, startMockServer } from './server.js';
