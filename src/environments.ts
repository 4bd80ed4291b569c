/**
 * Base addresses of the two environments of the Animal Store service, each
 * ending in the version segment `/v1`. Pass `environment` to choose one, or
 * `baseUrl` to point the client anywhere else (a proxy, the mock server).
 *
 * The service has published no host names yet: these are the placeholders
 * of the spec (`spec/openapi.yaml`), and a call to them fails at once, saying
 * to pass the address your account was given.
 *
 * @example
 * ```ts
 * new PetsClient({ environment: 'staging' }); // uses environments.staging
 * ```
 */
export const environments: Readonly<{ production: string; staging: string }> = Object.freeze({
  production: 'https://api.animal-store.example/v1',
  staging: 'https://staging.api.animal-store.example/v1',
});

/** Name of an environment in {@link environments}. */
export type Environment = keyof typeof environments;
