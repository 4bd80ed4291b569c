import { branded } from './MockServerOptionError.js';

/** The message of the error thrown when `@animal-store/sdk/mock` is loaded without msw installed. */
export const MSW_MISSING =
  '@animal-store/sdk/mock needs msw 2, which is not installed here. Install it next to the SDK: ' +
  '`npm install --save-dev msw@^2.7.0` (or the same with pnpm, yarn or bun). ' +
  'The SDK itself does not need msw, and neither does the loopback mock on the command line ' +
  '(`npx -p @animal-store/sdk animal-store-mock`).';

/** Whether `error` says that the package `msw` itself (not one of its own dependencies) could not be found. */
export function isMswMissing(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    /^Cannot find (package|module) ['"]msw['"]/.test(message)
  );
}

/** The error to throw in place of the loader's, with the loader's as `cause`. */
export function mswMissingError(cause: unknown): Error {
  const error = branded(new Error(MSW_MISSING, { cause }), 'MswMissingError');
  error.name = 'MswMissingError';
  return Object.assign(error, { code: 'ERR_ANIMAL_STORE_MSW_MISSING' });
}
