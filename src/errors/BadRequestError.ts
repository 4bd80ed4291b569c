import { ApiError } from './ApiError.js';

/** The service answered 400: the body is missing required fields or holds invalid values. */
export class BadRequestError extends ApiError {
  static override readonly brand: string = 'BadRequestError';
  override readonly name: string = 'BadRequestError';
}
