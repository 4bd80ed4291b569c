import { AnimalStoreError } from './AnimalStoreError.js';
import type { ValidationIssue } from './ValidationIssue.js';

/** A 2xx response whose body does not match the spec. Nothing wrong is returned to you. */
export class ResponseValidationError extends AnimalStoreError {
  static override readonly brand: string = 'ResponseValidationError';
  override readonly name: string = 'ResponseValidationError';
  /** Every mismatch found, with its path in the body. */
  readonly issues: readonly ValidationIssue[];
  /** HTTP status of the response. */
  readonly status: number;

  constructor(
    message: string,
    details: { issues: readonly ValidationIssue[]; status: number; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.issues = details.issues;
    this.status = details.status;
  }
}
