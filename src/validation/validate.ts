import {
  describeIssues,
  RequestValidationError,
  ResponseValidationError,
  type ValidationIssue,
} from '../errors.js';
import { type Check, REJECT } from './fast.js';
import type { Output, SchemaName, Verdict } from './verdict.js';

type Zod = typeof import('./verdict.js');
let zod: Promise<Zod> | undefined;

// Zod is loaded the first time a value is declined, and once only.
function loadZod(): Promise<Zod> {
  zod ??= import('./verdict.js').catch((error: unknown) => {
    zod = undefined;
    throw error;
  });
  return zod;
}

/** Zod's verdict, or the issue that it could not be asked (a chunk that failed to load). */
async function judge<N extends SchemaName>(
  input: boolean,
  schema: N,
  value: unknown,
): Promise<Verdict<Output<N>> | { ok: false; issues: ValidationIssue[]; error: unknown }> {
  try {
    const loaded = await loadZod();
    return input ? loaded.judgeInput(schema, value) : loaded.judgeOutput(schema, value);
  } catch (error) {
    const message = `the validator that names the issues could not be loaded (${String(error)})`;
    return { ok: false, issues: [{ path: [], code: 'validator_unavailable', message }], error };
  }
}

/** The fast check's value, or Zod's verdict on what it declines; `fail` builds the error. */
function validate<N extends SchemaName>(
  check: Check<Output<N>>,
  schema: N,
  value: unknown,
  input: boolean,
  fail: (issues: ValidationIssue[], cause: unknown) => Error,
): Output<N> | Promise<Output<N>> {
  const fast = check(value);
  if (fast !== REJECT) return fast;
  return judge(input, schema, value).then((verdict) => {
    if (verdict.ok) return verdict.value;
    throw fail(verdict.issues, verdict.error);
  });
}

/**
 * Validates a method's input: synchronously when the fast check accepts it,
 * otherwise Zod decides and {@link RequestValidationError} says what to fix.
 * Either way nothing is sent before this settles.
 */
export function validateInput<N extends SchemaName>(
  check: Check<Output<N>>,
  schema: N,
  value: unknown,
  what: string,
): Output<N> | Promise<Output<N>> {
  return validate(check, schema, value, true, (issues) => {
    const message = `Invalid ${what}; nothing was sent. ${describeIssues(issues)}.`;
    return new RequestValidationError(message, issues);
  });
}

/**
 * Validates a 2xx body: the value as the schema outputs it (unknown fields
 * dropped), or {@link ResponseValidationError} rather than wrong data.
 */
export function validateOutput<N extends SchemaName>(
  check: Check<Output<N>>,
  schema: N,
  body: unknown,
  what: string,
  status: number,
): Output<N> | Promise<Output<N>> {
  return validate(check, schema, body, false, (issues, cause) => {
    const message = `The service's response to ${what} (HTTP ${status}) does not match the API spec: ${describeIssues(issues)}.`;
    return new ResponseValidationError(message, { issues, status, cause });
  });
}
