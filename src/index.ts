// The public surface, listed by name. Internals (transport, retry policy,
// schemas) are deliberately not exported: they may change in any release.

export { PetsClient } from './client.js';
export { type Environment, environments } from './environments.js';
export { AnimalStoreError } from './errors/AnimalStoreError.js';
export { ApiError, type ApiErrorDetails } from './errors/ApiError.js';
export { AuthenticationError } from './errors/AuthenticationError.js';
export { BadRequestError } from './errors/BadRequestError.js';
export { ConnectionError } from './errors/ConnectionError.js';
export { NotFoundError } from './errors/NotFoundError.js';
export { RateLimitError } from './errors/RateLimitError.js';
export { RequestValidationError } from './errors/RequestValidationError.js';
export { ResponseValidationError } from './errors/ResponseValidationError.js';
export { ServerError } from './errors/ServerError.js';
export { TimeoutError } from './errors/TimeoutError.js';
export type { ValidationIssue } from './errors/ValidationIssue.js';
export type { Logger, LogLevel } from './logger.js';
export type {
  AfterResponseContext,
  BeforeRequestContext,
  ErrorContext,
  Hooks,
  ResponseInfo,
  TracerProviderLike,
  TracingOptions,
  WithResponse,
} from './observe.js';
export type {
  ClientOptions,
  FetchInit,
  FetchResponse,
  HeadersOption,
  OperationName,
  RequestOptions,
  RetryInfo,
  RetryReason,
} from './options.js';
export { MemoryQuotaStore } from './quota/MemoryQuotaStore.js';
export type { Admission, HoldReason, Observation, QuotaStore } from './quota/store.js';
export type { RateLimitInfo, WindowReport } from './timing.js';
export type { ErrorBody, ListPetsParams, NewPet, Pet, PetStatus } from './types.js';
