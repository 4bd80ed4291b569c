// `instanceof AnimalStoreError` reads these brands (see src/errors.ts), so the mock's errors are
// the SDK's too without the mock importing the client.
const BRANDS = Symbol.for('@animal-store/sdk/error-brands');

/** Marks `error` as an `AnimalStoreError` (and a `brand`), for `instanceof` in either build, and gives it `toJSON` as theirs. */
export function branded<E extends Error>(error: E, brand: string): E {
  const toJSON = () => {
    const { cause } = error;
    const json: Record<string, unknown> = { name: error.name, message: error.message };
    Object.assign(json, error);
    if (cause !== undefined)
      json.cause = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    return json;
  };
  return Object.defineProperties(error, {
    [BRANDS]: { value: [brand, 'AnimalStoreError'] },
    toJSON: { value: toJSON },
  });
}

/**
 * The error of a mock option that cannot be used (a `host` that is not
 * loopback, a `port` that is out of range or taken, a `plan`, `apiKeys`,
 * `limits` or `seed` out of shape): what was given and what is accepted.
 * A `RangeError`, and an `AnimalStoreError` like everything the SDK throws.
 */
export class MockServerOptionError extends RangeError {
  override name = 'MockServerOptionError';
  /** What `JSON.stringify(error)` gives: `name`, `message`, `cause` as a string. */
  declare toJSON: () => Record<string, unknown>;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    branded(this, 'MockServerOptionError');
  }
}
