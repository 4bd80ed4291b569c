// The three operations of the service: the checks of what goes in and comes out (by hand, and by
// Zod where those decline), and the table the client runs them from.
import type { Client, Middleware } from 'openapi-fetch';
import type { components, operations, paths } from '../generated/schema.js';
import {
  describeThrown,
  RequestValidationError,
  ResponseValidationError,
  type ValidationIssue,
} from './errors.js';
import type { OperationName } from './observe.js';
import { LIMIT, NEW_PET_FIELDS, PET_STATUSES } from './rules.js';
import type { ErrorBody, Pet, PetStatus } from './types.js';
import type { Output, SchemaName, Verdict } from './validation/verdict.js';

// Inputs come out as the spec's types: keys given as undefined are left out.
// A set, not the rules' list: checked for every pet of every answer.
const STATUS_SET: ReadonlySet<unknown> = new Set(PET_STATUSES);
const isPetStatus = (value: unknown): value is PetStatus => STATUS_SET.has(value);

type ListPetsParams = NonNullable<operations['listPets']['parameters']['query']>;
type NewPet = components['schemas']['NewPet'];

// The Zod schemas are the definition; these are the same rules by hand, because a plain function
// validates 100 pets in a few µs where Zod takes tens, and loads no Zod. They may decline more
// than Zod (which then decides and names the issues), never accept what Zod rejects, nor output
// anything else: a property test holds both to each other.

/** Returned by a check for anything it does not accept; Zod then has the last word. */
export const REJECT: unique symbol = Symbol('reject');

export type Check<T> = (input: unknown) => T | typeof REJECT;

const isSafeInteger = Number.isSafeInteger as (value: unknown) => value is number;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A `Pet` from the service: unknown fields dropped. */
export const checkPet: Check<Pet> = (input) => {
  if (!isPlainObject(input)) return REJECT;
  const { id, name, categoryId, status } = input;
  if (!isSafeInteger(id) || typeof name !== 'string' || !isSafeInteger(categoryId)) return REJECT;
  if (status === undefined)
    return Object.hasOwn(input, 'status') ? REJECT : { id, name, categoryId };
  return isPetStatus(status) ? { id, name, categoryId, status } : REJECT;
};

export const checkPets: Check<Pet[]> = (input) => {
  if (!Array.isArray(input)) return REJECT;
  const output = new Array<Pet>(input.length);
  for (let i = 0; i < input.length; i++) {
    const pet = checkPet(input[i]);
    if (pet === REJECT) return REJECT;
    output[i] = pet;
  }
  return output;
};

export const checkErrorBody: Check<ErrorBody> = (input) => {
  if (!isPlainObject(input)) return REJECT;
  const { code, message, status } = input;
  return typeof code === 'string' && typeof message === 'string' && isSafeInteger(status)
    ? { code, message, status }
    : REJECT;
};

export const checkListPetsParams: Check<ListPetsParams> = (input) => {
  if (!isPlainObject(input)) return REJECT;
  const output: ListPetsParams = {};
  for (const key in input) {
    const value = input[key];
    if (value === undefined) continue;
    if (key === 'limit' && isSafeInteger(value) && value >= LIMIT.min && value <= LIMIT.max) {
      output.limit = value;
    } else if (key === 'status' && isPetStatus(value)) output.status = value;
    else return REJECT;
  }
  return output;
};

export const checkNewPet: Check<NewPet> = (input) => {
  if (!isPlainObject(input)) return REJECT;
  for (const key in input) {
    if (input[key] !== undefined && !(NEW_PET_FIELDS as readonly string[]).includes(key)) {
      return REJECT;
    }
  }
  const { name, categoryId, status } = input;
  if (typeof name !== 'string' || !isSafeInteger(categoryId)) return REJECT;
  if (status === undefined) return { name, categoryId };
  return isPetStatus(status) ? { name, categoryId, status } : REJECT;
};

export const checkPetId: Check<number> = (input) => (isSafeInteger(input) ? input : REJECT);

/** What openapi-fetch is given for one attempt besides the operation's own parameters. */
interface SendInit {
  readonly signal: AbortSignal;
  readonly fetch: (request: Request) => Promise<Response>;
  readonly middleware?: Middleware[];
}

/** One operation of the service, as the client runs it. */
export interface Operation<In extends SchemaName, Out extends SchemaName> {
  readonly name: OperationName;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** May be resent after a 5xx, a timeout or a network failure (a POST could add the animal twice). */
  readonly resend: boolean;
  readonly input: In;
  readonly checkInput: Check<Output<In>>;
  readonly inputName: string;
  readonly output: Out;
  readonly checkOutput: Check<Output<Out>>;
  /** What an answer must also keep with respect to the request (after the schema). */
  readonly checkAnswer?: (input: Output<In>, output: Output<Out>) => ValidationIssue | undefined;
  readonly send: (api: Client<paths>, input: Output<In>, init: SendInit) => Promise<unknown>;
}

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
          message: `the list holds ${pets.length} pets, more than the ${query.limit === undefined ? `default limit of ${limit}` : `limit of ${limit} asked for`}`,
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

/** Issues as `limit must be…; 3.status: Invalid option…`: a message that names its field is not prefixed twice. */
/** `total`: how many were found, where more than 10 (undefined: not all were counted). */
function describeIssues(issues: readonly ValidationIssue[], total?: number): string {
  const shown = issues
    .slice(0, 10)
    .map(({ path, message }) => {
      if (!path.length) return message;
      const where = path.map(String).join('.');
      const named = `${String(path.at(-1))} `;
      return message.startsWith(named)
        ? `${where} ${message.slice(named.length)}`
        : `${where}: ${message}`;
    })
    .join('; ');
  if (issues.length <= 10) return shown;
  if (total === issues.length) return `${shown}; and ${total - 10} more (in error.issues)`;
  const more = total === undefined ? 'more' : `${total - 10} more`;
  return `${shown}; and ${more} (error.issues holds the first ${issues.length})`;
}

type Zod = typeof import('./validation/verdict.js');
let zod: Promise<Zod> | undefined;

// Zod is loaded the first time a value is declined, and once only.
function loadZod(): Promise<Zod> {
  zod ??= import('./validation/verdict.js').catch((error: unknown) => {
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
): Promise<
  Verdict<Output<N>> | { ok: false; issues: ValidationIssue[]; error: unknown; total?: number }
> {
  let loaded: Zod;
  try {
    loaded = await loadZod();
  } catch (error) {
    const message = `the validator that names the issues could not be loaded (${String(error)})`;
    return { ok: false, issues: [{ path: [], code: 'validator_unavailable', message }], error };
  }
  try {
    return input ? loaded.judgeInput(schema, value) : loaded.judgeOutput(schema, value);
  } catch (error) {
    // A getter or a Proxy trap of the caller's value threw as it was read.
    const message = `reading it threw ${describeThrown(error).slice(0, 200)}`;
    return { ok: false, issues: [{ path: [], code: 'unreadable', message }], error };
  }
}

/** The fast check's value, or Zod's verdict on what it declines; `fail` builds the error. */
function validate<N extends SchemaName>(
  check: Check<Output<N>>,
  schema: N,
  value: unknown,
  input: boolean,
  fail: (issues: ValidationIssue[], cause: unknown, total?: number) => Error,
): Output<N> | Promise<Output<N>> {
  let fast: Output<N> | typeof REJECT = REJECT;
  try {
    fast = check(value);
  } catch {}
  if (fast !== REJECT) return fast;
  return judge(input, schema, value).then((verdict) => {
    if (verdict.ok) return verdict.value;
    throw fail(verdict.issues, verdict.error, verdict.total);
  });
}

/** Headers or input as the wire has them, whatever the order (or case) their names were given in. */
export const canonical = (value: unknown) =>
  JSON.stringify(
    value !== null && typeof value === 'object'
      ? Object.entries(value)
          .flatMap(([name, v]) => (v === undefined ? [] : [[name.toLowerCase(), v]]))
          .sort()
      : value,
  );

/** Validates a method's input: synchronously when the fast check accepts it, else by Zod. */
export function validateInput<In extends SchemaName, Out extends SchemaName>(
  operation: Operation<In, Out>,
  value: unknown,
): Output<In> | Promise<Output<In>> {
  return validate(operation.checkInput, operation.input, value, true, (issues, _, total) => {
    const message = `Invalid ${operation.inputName}; nothing was sent. ${describeIssues(issues, total)}.`;
    return new RequestValidationError(message, issues);
  });
}

/** Validates a 2xx body, and that it keeps to the request; else {@link ResponseValidationError}. */
export function validateOutput<In extends SchemaName, Out extends SchemaName>(
  operation: Operation<In, Out>,
  input: Output<In>,
  body: unknown,
  status: number,
): Output<Out> | Promise<Output<Out>> {
  const { name } = operation;
  const fail = (issues: ValidationIssue[], what: string, cause?: unknown, total?: number) =>
    new ResponseValidationError(
      `The service's response to ${name} (HTTP ${status}) ${what}: ${describeIssues(issues, total)}.`,
      { issues, status, cause },
    );
  const kept = (data: Output<Out>) => {
    const issue = operation.checkAnswer?.(input, data);
    if (issue) throw fail([issue], 'contradicts the request');
    return data;
  };
  const data = validate(
    operation.checkOutput,
    operation.output,
    body,
    false,
    (issues, cause, total) => fail(issues, 'does not match the API spec', cause, total),
  );
  return data instanceof Promise ? data.then(kept) : kept(data);
}
