// The CommonJS build's `msw.ts`: the same check, with a synchronous require.
import { isMswMissing, mswMissingError } from './msw-missing.js';

declare const require: (id: string) => unknown;

function load(): typeof import('msw') {
  try {
    return require('msw') as typeof import('msw');
  } catch (error) {
    throw isMswMissing(error) ? mswMissingError(error) : error;
  }
}

export const { http } = load();
