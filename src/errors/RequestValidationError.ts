import { AnimalStoreError } from './AnimalStoreError.js';
import type { ValidationIssue } from './ValidationIssue.js';

/** The input to a method is invalid; nothing was sent. `issues` says what to fix. */
export class RequestValidationError extends AnimalStoreError {
  static override readonly brand: string = 'RequestValidationError';
  override readonly name: string = 'RequestValidationError';
  /** Every problem found, with its path. */
  readonly issues: readonly ValidationIssue[];

  constructor(message: string, issues: readonly ValidationIssue[]) {
    super(message);
    this.issues = issues;
  }
}
