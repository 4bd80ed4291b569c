// Loads msw, an optional peer dependency, so that a missing msw fails the
// import of `@animal-store/sdk/mock` with a message that says what to install
// rather than the loader's bare "Cannot find package". The CommonJS build
// swaps this module for `msw.cjs.ts` (CommonJS has no top-level await).
import { isMswMissing, mswMissingError } from './msw-missing.js';

export const { http }: typeof import('msw') = await import('msw').catch((error: unknown) => {
  throw isMswMissing(error) ? mswMissingError(error) : error;
});
