import { ConnectionError } from './ConnectionError.js';

/** An attempt, reading the body included, ran past `timeoutMs`. */
export class TimeoutError extends ConnectionError {
  static override readonly brand: string = 'TimeoutError';
  override readonly name: string = 'TimeoutError';
}
