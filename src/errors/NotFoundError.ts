import { ApiError } from './ApiError.js';

/** The service answered 404: the animal could not be found. */
export class NotFoundError extends ApiError {
  static override readonly brand: string = 'NotFoundError';
  override readonly name: string = 'NotFoundError';
}
