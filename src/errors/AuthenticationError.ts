import { ApiError } from './ApiError.js';

/** The service answered 401: the API key is missing or invalid. */
export class AuthenticationError extends ApiError {
  static override readonly brand: string = 'AuthenticationError';
  override readonly name: string = 'AuthenticationError';
}
