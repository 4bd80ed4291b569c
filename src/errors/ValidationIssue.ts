/** One problem found by validation: where (`path`) and what (`message`). */
export interface ValidationIssue {
  /** Path to the offending value, e.g. `['limit']` or `[3, 'id']`. */
  readonly path: readonly PropertyKey[];
  /** What is wrong, in words. */
  readonly message: string;
  /**
   * Zod's issue code, e.g. `too_big` or `invalid_type`; or `invalid_json` (a 2xx body
   * that is not JSON) or `validator_unavailable` (the validator could not be loaded).
   */
  readonly code: string;
}

/** Formats issues as `limit: Too big… ; status: Invalid option…`. */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .map((issue) =>
      issue.path.length ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message,
    )
    .join('; ');
}
