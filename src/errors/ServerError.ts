import { ApiError } from './ApiError.js';

/** The service answered 5xx, or any other status the interface does not declare. */
export class ServerError extends ApiError {
  static override readonly brand: string = 'ServerError';
  override readonly name: string = 'ServerError';
}
