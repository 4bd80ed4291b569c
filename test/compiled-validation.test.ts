import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { compile, REJECT } from '../src/validation/compile.js';
import { ErrorSchema, PetSchema, PetsSchema } from '../src/validation/schemas.js';

function holdsUndefined(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).some((v) => v === undefined || holdsUndefined(v));
}

const petLike = fc.record(
  {
    id: fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 53), fc.string(), fc.constant(null)),
    name: fc.oneof(fc.string(), fc.integer(), fc.constant(undefined)),
    categoryId: fc.oneof(fc.maxSafeInteger(), fc.double(), fc.boolean()),
    status: fc.oneof(
      fc.constantFrom('available', 'pending', 'sold', 'adopted', ''),
      fc.constant(undefined),
    ),
    extra: fc.anything(),
    ['__proto__']: fc.anything(),
  },
  { requiredKeys: [] },
);
const bodies = fc.oneof(
  petLike,
  fc.array(petLike, { maxLength: 5 }),
  fc.anything(),
  fc.jsonValue(),
);

describe('the compiled response schemas', () => {
  it.each([
    ['Pet', PetSchema],
    ['Pets', PetsSchema],
    ['Error', ErrorSchema],
  ] as const)('never accept what Zod rejects, and output what Zod outputs, for %s', (_, schema) => {
    const check = compile(schema);
    expect(check).toBeDefined();
    fc.assert(
      fc.property(bodies, (body) => {
        const fast = check!(body);
        const slow = schema.safeParse(body);
        if (fast !== REJECT) {
          expect(slow.success).toBe(true);
          expect(fast).toStrictEqual(slow.data);
        } else if (slow.success) {
          // Rejecting more than Zod is allowed only for an explicit undefined, which JSON cannot carry.
          expect(holdsUndefined(body)).toBe(true);
        }
      }),
      { numRuns: 2000, seed: 20261122 },
    );
  });

  it('accepts valid bodies, with unknown fields dropped', () => {
    const check = compile(PetsSchema)!;
    expect(check([{ id: 1, name: 'Rex', categoryId: 2, status: 'sold', x: 1 }])).toEqual([
      { id: 1, name: 'Rex', categoryId: 2, status: 'sold' },
    ]);
  });

  it('declines to compile what it does not know, leaving it to Zod', () => {
    expect(compile(z.int().check(z.minimum(1)))).toBeUndefined();
    expect(compile(z.boolean())).toBeUndefined();
    expect(compile(z.object({ a: z.boolean() }))).toBeUndefined();
  });
});
