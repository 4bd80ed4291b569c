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
  | { ok: false; issues: ValidationIssue[]; error: z.core.$ZodError; total?: number };

/** Issues a verdict keeps (Zod's error, its cause, too): a body of 300,000 bad pets held 144 MB. */
const KEPT = 100;

function toIssues(error: z.core.$ZodError): ValidationIssue[] {
  error.issues.splice(KEPT);
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
  const [judged, whole] = name === 'Pets' && Array.isArray(body) ? firstIssues(body) : [body, true];
  const result = SCHEMAS[name].safeParse(judged);
  if (result.success) return { ok: true, value: result.data as Output<N> };
  const total = whole ? result.error.issues.length : undefined;
  return {
    ok: false,
    issues: toIssues(result.error),
    error: result.error,
    ...(total && { total }),
  };
}

/**
 * The start of a list that holds its first KEPT issues, and whether that is all of it: judged
 * whole, 349,000 bad pets (1 MiB) took Zod 1 s and 567 MB.
 */
function firstIssues(body: unknown[]): [unknown[], boolean] {
  let found = 0;
  let at = 0;
  while (at < body.length && found < KEPT) {
    const result = PetSchema.safeParse(body[at++]);
    if (!result.success) found += result.error.issues.length;
  }
  return at === body.length ? [body, true] : [body.slice(0, at), false];
}
