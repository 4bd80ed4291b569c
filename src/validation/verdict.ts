import type * as z from 'zod/mini';
import type { ValidationIssue } from '../errors.js';
import {
  ListPetsParamsSchema,
  NewPetSchema,
  PetIdSchema,
  PetSchema,
  PetsSchema,
} from './schemas.js';

// Loaded only when a fast check declines a value: Zod then decides, and names every issue.

const SCHEMAS = {
  Pet: PetSchema,
  Pets: PetsSchema,
  NewPet: NewPetSchema,
  ListPetsParams: ListPetsParamsSchema,
  PetId: PetIdSchema,
} as const;

/** The schemas a value can be judged against. */
export type SchemaName = keyof typeof SCHEMAS;
/** What a schema outputs. */
export type Output<N extends SchemaName> = z.output<(typeof SCHEMAS)[N]>;
/** Zod's verdict: the value as the schema outputs it, or every issue found. */
export type Verdict<T> =
  | { ok: true; value: T }
  | { ok: false; issues: ValidationIssue[]; error: z.core.$ZodError };

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
export function withoutUndefined(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const entries = Object.entries(value);
  if (!entries.some(([, v]) => v === undefined)) return value;
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined));
}

/** Judges a method's input, where an `undefined` property means "not given". */
export function judgeInput<N extends SchemaName>(name: N, value: unknown): Verdict<Output<N>> {
  const verdict = judgeOutput(name, withoutUndefined(value));
  // `getPet(petId)` takes the id alone: its issues are named after the parameter.
  if (verdict.ok || name !== 'PetId') return verdict;
  return { ...verdict, issues: verdict.issues.map((i) => ({ ...i, path: ['petId', ...i.path] })) };
}

/** Judges a 2xx body. */
export function judgeOutput<N extends SchemaName>(name: N, body: unknown): Verdict<Output<N>> {
  const result = SCHEMAS[name].safeParse(body);
  return result.success
    ? { ok: true, value: result.data as Output<N> }
    : { ok: false, issues: toIssues(result.error), error: result.error };
}
