// The public surface, listed by name. Internals (transport, retry policy,
// schemas) are deliberately not exported: they may change in any release.

export { PetsClient } from './client.js';
export { type Environment, environments } from './environments.js';
export {
  AnimalStoreError,
  ApiError,
  type ApiErrorDetails,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  NotFoundError,
  RateLimitError,
  RequestValidationError,
  ResponseValidationError,
  ServerError,
  TimeoutError,
  type ValidationIssue,
} from './errors.js';
export type { RateLimitInfo, WindowReport } from './headers.js';
export type {
  AfterResponseContext,
  BeforeRequestContext,
  ErrorContext,
  Hooks,
  OperationName,
  ResponseInfo,
  RetryInfo,
  RetryReason,
  TracerProviderLike,
  TracingOptions,
  WithResponse,
} from './observe.js';
export type {
  ClientOptions,
  FetchInit,
  FetchResponse,
  HeadersOption,
  Logger,
  LogLevel,
  RequestOptions,
} from './options.js';
export { MemoryQuotaStore } from './quota/MemoryQuotaStore.js';
export type {
  Admission,
  AdmitRequest,
  HoldReason,
  Observation,
  QuotaStore,
} from './quota/store.js';
export type { ErrorBody, ListPetsParams, NewPet, Pet, PetStatus } from './types.js';
