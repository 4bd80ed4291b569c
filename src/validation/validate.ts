import type * as z from 'zod/mini';
import { RequestValidationError } from '../errors/RequestValidationError.js';
import { ResponseValidationError } from '../errors/ResponseValidationError.js';
import { describeIssues, type ValidationIssue } from '../errors/ValidationIssue.js';
import { type Check, compile, REJECT } from './compile.js';

function toIssues(error: z.core.$ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path,
    code: issue.code,
    message:
      issue.code === 'unrecognized_keys'
        ? `${issue.message}: ${issue.keys.join(', ')}`
        : issue.message,
  }));
}

// A JavaScript caller may pass `{ status: undefined }`; that means "not given".
function withoutUndefined(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const entries = Object.entries(value);
  if (!entries.some(([, v]) => v === undefined)) return value;
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined));
}

/** Validates a method's input; throws {@link RequestValidationError} before anything is sent. */
export function validateInput<S extends z.ZodMiniType>(
  schema: S,
  value: unknown,
  what: string,
): z.output<S> {
  const result = schema.safeParse(withoutUndefined(value));
  if (result.success) return result.data;
  const issues = toIssues(result.error);
  throw new RequestValidationError(
    `Invalid ${what}; nothing was sent. ${describeIssues(issues)}.`,
    issues,
  );
}

const compiled = new WeakMap<z.ZodMiniType, Check | undefined>();

/**
 * Validates a 2xx body; throws {@link ResponseValidationError} rather than
 * return wrong data. Valid bodies take the schema compiled once (several times
 * faster than Zod's parse); anything it rejects goes to Zod for the verdict and
 * the issues.
 */
export function validateOutput<S extends z.ZodMiniType>(
  schema: S,
  body: unknown,
  what: string,
  status: number,
): z.output<S> {
  if (!compiled.has(schema)) compiled.set(schema, compile(schema));
  const check = compiled.get(schema);
  if (check) {
    const value = check(body);
    if (value !== REJECT) return value as z.output<S>;
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = toIssues(result.error);
  throw new ResponseValidationError(
    `The service's response to ${what} (HTTP ${status}) does not match the API spec: ${describeIssues(issues)}.`,
    { issues, status, cause: result.error },
  );
}
