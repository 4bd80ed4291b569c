import * as z from 'zod/mini';
import { LIMIT, LIMIT_MESSAGE, PET_STATUSES, STATUS_MESSAGE } from '../rules.js';

// Hand-written from spec/openapi.yaml; a type test holds each to the generated type.
// z.int() takes safe integers only: an int64 above 2^53 arrives rounded, a wrong id.

/** What a value that should be an object is, never quoting it. */
const got = (input: unknown) =>
  input === undefined
    ? 'nothing'
    : input === null
      ? 'null'
      : Array.isArray(input)
        ? 'an array'
        : `a ${typeof input}`;
const safeInteger = (what: string) =>
  z.int({
    error: ({ input }) =>
      input === undefined
        ? `${what} is required`
        : `${what} must be a safe integer${input === null || typeof input === 'number' ? '' : `, got ${got(input)}`}`,
  });
const string = (what: string) =>
  z.string({
    error: (issue) => `${what} ${issue.input === undefined ? 'is required' : 'must be a string'}`,
  });

/** Availability status of an animal. */
export const PetStatusSchema = z.enum(PET_STATUSES, { error: STATUS_MESSAGE });

/** Body of `createPet`; unknown keys (such as `id`, which the service assigns) are rejected. */
export const NewPetSchema = z.strictObject(
  {
    name: string('name'),
    categoryId: safeInteger('categoryId'),
    status: z.exactOptional(PetStatusSchema),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? `expected an object { name, categoryId, status? }, got ${got(issue.input)}`
        : 'a NewPet has only name, categoryId and status (the service assigns id)',
  },
);

/** An animal as the service returns it; unknown fields are tolerated and dropped. */
export const PetSchema = z.object(
  {
    id: safeInteger('id'),
    name: string('name'),
    categoryId: safeInteger('categoryId'),
    status: z.exactOptional(PetStatusSchema),
  },
  'a pet must be a JSON object',
);

/** The list `listPets` returns. */
export const PetsSchema = z.array(PetSchema, 'the body must be a JSON array of pets');

/** Body of every error response. */
export const ErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  status: z.int(),
});

/** Query of `listPets`. */
export const ListPetsParamsSchema = z.strictObject(
  {
    limit: z.exactOptional(
      z
        .int(LIMIT_MESSAGE)
        .check(z.minimum(LIMIT.min, LIMIT_MESSAGE), z.maximum(LIMIT.max, LIMIT_MESSAGE)),
    ),
    status: z.exactOptional(PetStatusSchema),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? `expected an object such as { limit: 10, status: 'available' }, got ${got(issue.input)}`
        : 'listPets accepts only limit and status (call options go in the second argument)',
  },
);

/** Path parameter of `getPet`. */
export const PetIdSchema = safeInteger('petId');
