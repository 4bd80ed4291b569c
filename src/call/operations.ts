import type { Client, Middleware } from 'openapi-fetch';
import type { paths } from '../../generated/schema.js';
import {
  describeIssues,
  RequestValidationError,
  ResponseValidationError,
  type ValidationIssue,
} from '../errors.js';
import type { OperationName } from '../observe.js';
import { LIMIT } from '../rules.js';
import {
  type Check,
  checkListPetsParams,
  checkNewPet,
  checkPet,
  checkPetId,
  checkPets,
  REJECT,
} from '../validation/fast.js';
import type { Output, SchemaName, Verdict } from '../validation/verdict.js';

/** What openapi-fetch is given for one attempt besides the operation's own parameters. */
export interface SendInit {
  readonly signal: AbortSignal;
  readonly fetch: (request: Request) => Promise<Response>;
  /** openapi-fetch middleware for this request alone, when the attempt has any. */
  readonly middleware?: Middleware[];
}

/** One operation of the service, as the client runs it. */
export interface Operation<In extends SchemaName, Out extends SchemaName> {
  readonly name: OperationName;
  readonly method: 'GET' | 'POST';
  /** Path template of the spec, for messages. */
  readonly path: string;
  /** May be resent after a 5xx, a timeout or a network failure (a POST could add the animal twice). */
  readonly resend: boolean;
  /** Schema and fast check of the input, and how messages name it. */
  readonly input: In;
  readonly checkInput: Check<Output<In>>;
  readonly inputName: string;
  /** Schema and fast check of a 2xx body. */
  readonly output: Out;
  readonly checkOutput: Check<Output<Out>>;
  /** What an answer must also keep with respect to the request (after the schema). */
  readonly checkAnswer?: (input: Output<In>, output: Output<Out>) => ValidationIssue | undefined;
  /** The request, through openapi-fetch. */
  readonly send: (api: Client<paths>, input: Output<In>, init: SendInit) => Promise<unknown>;
}

/** Any operation of the table. */
export type AnyOperation = (typeof OPERATIONS)[OperationName];

/** Every operation the client offers, in one table. */
export const OPERATIONS = {
  listPets: {
    name: 'listPets',
    method: 'GET',
    path: '/pets',
    resend: true,
    input: 'ListPetsParams',
    checkInput: checkListPetsParams,
    inputName: 'listPets parameters',
    output: 'Pets',
    checkOutput: checkPets,
    checkAnswer: (query, pets) => {
      const limit = query.limit ?? LIMIT.default;
      if (pets.length > limit) {
        return {
          path: [],
          code: 'too_big',
          message: `the list holds ${pets.length} pets, more than the limit of ${limit} asked for`,
        };
      }
      const at = query.status ? pets.findIndex((pet) => pet.status !== query.status) : -1;
      return at < 0
        ? undefined
        : {
            path: [at, 'status'],
            code: 'invalid_value',
            message: `status is ${JSON.stringify(pets[at]?.status)}, but only '${query.status}' was asked for`,
          };
    },
    send: (api, query, init) => api.GET('/pets', { params: { query }, ...init }),
  } satisfies Operation<'ListPetsParams', 'Pets'>,
  createPet: {
    name: 'createPet',
    method: 'POST',
    path: '/pets',
    resend: false,
    input: 'NewPet',
    checkInput: checkNewPet,
    inputName: 'createPet body',
    output: 'Pet',
    checkOutput: checkPet,
    checkAnswer: (sent, pet) => {
      if (pet.categoryId !== sent.categoryId) {
        return {
          path: ['categoryId'],
          code: 'invalid_value',
          message: `categoryId is ${pet.categoryId}, but ${sent.categoryId} was sent`,
        };
      }
      return sent.status !== undefined && pet.status !== sent.status
        ? {
            path: ['status'],
            code: 'invalid_value',
            message: `status is ${JSON.stringify(pet.status)}, but '${sent.status}' was sent`,
          }
        : undefined;
    },
    send: (api, body, init) => api.POST('/pets', { body, ...init }),
  } satisfies Operation<'NewPet', 'Pet'>,
  getPet: {
    name: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    resend: true,
    input: 'PetId',
    checkInput: checkPetId,
    inputName: 'getPet petId',
    output: 'Pet',
    checkOutput: checkPet,
    checkAnswer: (petId, pet) =>
      pet.id === petId
        ? undefined
        : {
            path: ['id'],
            code: 'invalid_value',
            message: `id is ${pet.id}, but animal ${petId} was asked for`,
          },
    send: (api, petId, init) => api.GET('/pets/{petId}', { params: { path: { petId } }, ...init }),
  } satisfies Operation<'PetId', 'Pet'>,
} as const;

// --- checking what goes in and what comes out ---

type Zod = typeof import('../validation/verdict.js');
let zod: Promise<Zod> | undefined;

// Zod is loaded the first time a value is declined, and once only.
function loadZod(): Promise<Zod> {
  zod ??= import('../validation/verdict.js').catch((error: unknown) => {
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
