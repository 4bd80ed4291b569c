/**
 * The error of a mock option that cannot be used (a `host` that is not
 * loopback, a `port`, `plan`, `apiKeys`, `limits` or `seed` out of shape):
 * what was given and what is accepted.
 */
export class MockServerOptionError extends RangeError {
  override name = 'MockServerOptionError';
}
