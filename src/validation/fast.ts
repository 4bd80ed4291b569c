import type { components, operations } from '../../generated/schema.js';
import { isPetStatus, LIMIT, NEW_PET_FIELDS } from '../rules.js';
import type { ErrorBody, Pet } from '../types.js';

// Inputs come out of the checks as the spec's types: keys given as undefined
// (which the public input types allow) are left out.
type ListPetsParams = NonNullable<operations['listPets']['parameters']['query']>;
type NewPet = components['schemas']['NewPet'];

// The Zod schemas in schemas.ts are the definition; these checks are the same
// rules written out by hand, because a plain function validates 100 pets in
// a few microseconds where Zod takes tens, and needs no Zod at all to load.
// They may decline more than Zod does (Zod then decides and names the issues),
// but never accept what Zod rejects nor output anything else:
// test/fast-validation.test.ts checks both against Zod with fast-check.

/** Returned by a check for anything it does not accept; Zod then has the last word. */
export const REJECT: unique symbol = Symbol('reject');

/** A check: the value as Zod would output it, or {@link REJECT}. */
export type Check<T> = (input: unknown) => T | typeof REJECT;

const isSafeInteger = Number.isSafeInteger as (value: unknown) => value is number;

/** An object literal or `JSON.parse` output; anything more exotic goes to Zod. */
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

/** The array `listPets` returns. */
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

/** The `Error` body of a failed response. */
export const checkErrorBody: Check<ErrorBody> = (input) => {
  if (!isPlainObject(input)) return REJECT;
  const { code, message, status } = input;
  return typeof code === 'string' && typeof message === 'string' && isSafeInteger(status)
    ? { code, message, status }
    : REJECT;
};

// Inputs: only the keys the spec names; `undefined` means "not given".

/** The query of `listPets`. */
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

/** The body of `createPet`. */
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

/** The `petId` of `getPet`. */
export const checkPetId: Check<number> = (input) => (isSafeInteger(input) ? input : REJECT);
