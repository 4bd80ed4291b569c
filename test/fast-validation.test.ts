import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import {
  type Check,
  checkErrorBody,
  checkListPetsParams,
  checkNewPet,
  checkPet,
  checkPetId,
  checkPets,
  REJECT,
} from '../src/operations.js';
import {
  ErrorSchema,
  ListPetsParamsSchema,
  NewPetSchema,
  PetIdSchema,
  PetSchema,
  PetStatusSchema,
  PetsSchema,
} from '../src/validation/schemas.js';
import { withoutUndefined } from '../src/validation/verdict.js';

// The fast checks restate the Zod schemas by hand. These properties hold them
// to it: never accept what Zod rejects, and output exactly what Zod outputs.

function holdsUndefined(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).some((v) => v === undefined || holdsUndefined(v));
}

const oddNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(2 ** 53, -(2 ** 53), 0, -0, 1, 100, 101, Number.NaN, Number.POSITIVE_INFINITY),
);
const oddValue = fc.oneof(
  oddNumber,
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.anything(),
);
const status = fc.oneof(fc.constantFrom('available', 'pending', 'sold', 'adopted', ''), oddValue);
const petLike = fc.record(
  {
    id: oddValue,
    name: fc.oneof(fc.string(), oddValue),
    categoryId: fc.oneof(fc.maxSafeInteger(), oddValue),
    status,
    extra: fc.anything(),
    ['__proto__']: fc.anything(),
  },
  { requiredKeys: [] },
);
const validPet = fc.record(
  { id: fc.maxSafeInteger(), name: fc.string(), categoryId: fc.maxSafeInteger(), status },
  { requiredKeys: ['id', 'name', 'categoryId'] },
);
const errorLike = fc.record(
  { code: fc.oneof(fc.string(), oddValue), message: fc.string(), status: oddNumber, x: oddValue },
  { requiredKeys: [] },
);
const paramsLike = fc.record(
  {
    limit: fc.oneof(
      fc.constantFrom(0, 1, 2, 99, 100, 101),
      fc.integer({ min: -5, max: 120 }),
      oddValue,
    ),
    status,
    other: oddValue,
  },
  { requiredKeys: [] },
);
const newPetLike = fc.record(
  { name: fc.oneof(fc.string(), oddValue), categoryId: oddNumber, status, id: oddValue },
  { requiredKeys: [] },
);
const anything = fc.oneof(fc.anything(), fc.jsonValue());

// Inputs go through the same "undefined means not given" step before Zod.

function agree<T>(
  check: Check<T>,
  schema: z.ZodMiniType,
  values: fc.Arbitrary<unknown>,
  prepare = (v: unknown) => v,
) {
  fc.assert(
    fc.property(values, (value) => {
      const fast = check(value);
      const slow = schema.safeParse(prepare(value));
      if (fast !== REJECT) {
        expect(slow.success).toBe(true);
        expect(fast).toStrictEqual(slow.data);
      } else if (slow.success) {
        // Declining what Zod accepts is allowed only for an explicit undefined, which JSON cannot carry.
        expect(holdsUndefined(value)).toBe(true);
      }
    }),
    { numRuns: 2000, seed: 20261122 },
  );
}

describe('the fast checks agree with the Zod schemas', () => {
  it('Pet', () => agree(checkPet, PetSchema, fc.oneof(petLike, validPet, anything)));
  it('Pets', () =>
    agree(
      checkPets,
      PetsSchema,
      fc.oneof(fc.array(validPet, { maxLength: 5 }), fc.array(petLike, { maxLength: 5 }), anything),
    ));
  it('Error', () => agree(checkErrorBody, ErrorSchema, fc.oneof(errorLike, anything)));
  it('listPets parameters', () =>
    agree(
      checkListPetsParams,
      ListPetsParamsSchema,
      fc.oneof(paramsLike, anything),
      withoutUndefined,
    ));
  it('NewPet', () =>
    agree(checkNewPet, NewPetSchema, fc.oneof(newPetLike, anything), withoutUndefined));
  it('petId', () => agree(checkPetId, PetIdSchema, fc.oneof(oddNumber, anything)));

  it('know the same fields and statuses as the schemas', () => {
    const pet = { id: 1, name: 'Rex', categoryId: 2, status: 'sold' };
    for (const status of PetStatusSchema.options) {
      expect(checkPet({ ...pet, status }), `status ${status}`).not.toBe(REJECT);
      expect(checkNewPet({ name: 'Rex', categoryId: 2, status }), `status ${status}`).not.toBe(
        REJECT,
      );
    }
    for (const key of Object.keys(PetSchema.def.shape)) {
      expect(checkPet(pet), `Pet.${key}`).not.toBe(REJECT);
      expect(checkPet({ ...pet, [key]: {} }), `Pet.${key} is checked`).toBe(REJECT);
    }
    expect(Object.keys(checkPet(pet) as object).sort()).toEqual(
      Object.keys(PetSchema.def.shape).sort(),
    );
    const newPet = { name: 'Rex', categoryId: 2, status: 'sold' };
    expect(Object.keys(checkNewPet(newPet) as object).sort()).toEqual(
      Object.keys(NewPetSchema.def.shape).sort(),
    );
    expect(Object.keys(checkListPetsParams({ limit: 1, status: 'sold' }) as object).sort()).toEqual(
      Object.keys(ListPetsParamsSchema.def.shape).sort(),
    );
  });

  it('accept valid bodies, with unknown fields dropped', () => {
    expect(checkPets([{ id: 1, name: 'Rex', categoryId: 2, status: 'sold', x: 1 }])).toEqual([
      { id: 1, name: 'Rex', categoryId: 2, status: 'sold' },
    ]);
    const proto = JSON.parse('{"id":1,"name":"Rex","categoryId":2,"__proto__":{"polluted":true}}');
    const pet = checkPet(proto) as Record<string, unknown>;
    expect(pet).toStrictEqual({ id: 1, name: 'Rex', categoryId: 2 });
    expect(pet.polluted).toBeUndefined();
  });
});
