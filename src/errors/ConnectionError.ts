import { AnimalStoreError } from './AnimalStoreError.js';

/** The request never got a response (DNS, refused connection, reset socket…). The original failure is in `cause`. */
export class ConnectionError extends AnimalStoreError {
  static override readonly brand: string = 'ConnectionError';
  override readonly name: string = 'ConnectionError';
}
