/**
 * Base addresses of the two environments of the Animal Store service, each
 * ending in the version segment `/v1`. Pass `environment` to choose one, or
 * `baseUrl` to point the client anywhere else (a proxy, the mock server).
 *
 * The interface document gives no host names; these are the ones in
 * `spec/openapi.yaml`.
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
