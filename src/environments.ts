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

// `.example` is reserved (RFC 2606): the built-in hosts are placeholders until real ones are named.
export const placeholderHost = (baseUrl: string) =>
  /\.example\.?$/i.test(new URL(baseUrl).hostname);
export const PLACEHOLDER_ADVICE =
  'This host is a placeholder: pass baseUrl with the address your account was given, or set ANIMAL_STORE_BASE_URL and pass neither baseUrl nor environment.';
