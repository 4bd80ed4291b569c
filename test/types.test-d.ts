import { describe, expectTypeOf, it } from 'vitest';
import type * as z from 'zod/mini';
import type { components, operations } from '../generated/schema.js';
import type {
  AnimalStoreError,
  ListPetsParams,
  NewPet,
  Pet,
  PetStatus,
  PetsClient,
  RequestOptions,
} from '../src/index.js';
import type { MockServerOptionError } from '../src/mock/index.js';
import type {
  ErrorSchema,
  NewPetSchema,
  PetSchema,
  PetStatusSchema,
  PetsSchema,
} from '../src/validation/schemas.js';

type Schemas = components['schemas'];
/** A type's fields, each optional and taking undefined: compares inputs with the generated types. */
type Loose<T> = { [K in keyof T]?: Exclude<T[K], undefined> | undefined };

describe('schemas match the generated types', () => {
  it('infers exactly the generated type from each Zod schema', () => {
    expectTypeOf<z.output<typeof PetSchema>>().toEqualTypeOf<{
      [K in keyof Schemas['Pet']]: Schemas['Pet'][K];
    }>();
    expectTypeOf<z.output<typeof PetsSchema>>().toEqualTypeOf<z.output<typeof PetSchema>[]>();
    expectTypeOf<z.output<typeof PetsSchema>>().toMatchTypeOf<Schemas['Pets']>();
    expectTypeOf<Schemas['Pets']>().toMatchTypeOf<z.output<typeof PetsSchema>>();
    expectTypeOf<z.output<typeof NewPetSchema>>().toEqualTypeOf<Schemas['NewPet']>();
    expectTypeOf<z.output<typeof ErrorSchema>>().toEqualTypeOf<Schemas['Error']>();
    expectTypeOf<z.output<typeof PetStatusSchema>>().toEqualTypeOf<Schemas['PetStatus']>();
  });
});

describe('public types', () => {
  it("types the mock's option error as an AnimalStoreError and a RangeError", () => {
    expectTypeOf<MockServerOptionError>().toMatchTypeOf<AnimalStoreError>();
    expectTypeOf<MockServerOptionError>().toMatchTypeOf<RangeError>();
  });

  it('derives Pet, NewPet, PetStatus and ListPetsParams from the generated types', () => {
    expectTypeOf<PetStatus>().toEqualTypeOf<'available' | 'pending' | 'sold'>();
    expectTypeOf<Pet['id']>().toEqualTypeOf<number>();
    expectTypeOf<NewPet>().not.toHaveProperty('id');
    // The inputs are the generated types, whose optional fields also take undefined.
    expectTypeOf<ListPetsParams>().toEqualTypeOf<{
      limit?: number | undefined;
      status?: PetStatus | undefined;
    }>();
    expectTypeOf<Loose<NonNullable<operations['listPets']['parameters']['query']>>>().toEqualTypeOf<
      Loose<ListPetsParams>
    >();
    expectTypeOf<Loose<Schemas['NewPet']>>().toEqualTypeOf<Loose<NewPet>>();
    expectTypeOf<{ name: string; categoryId: number }>().toMatchTypeOf<NewPet>();
  });

  it('types the methods end to end', () => {
    expectTypeOf<PetsClient['listPets']>().returns.toEqualTypeOf<Promise<Pet[]>>();
    expectTypeOf<PetsClient['createPet']>().returns.toEqualTypeOf<Promise<Pet>>();
    expectTypeOf<PetsClient['getPet']>().parameter(0).toEqualTypeOf<number>();
    expectTypeOf<PetsClient['getPet']>().parameter(1).toEqualTypeOf<RequestOptions | undefined>();
  });

  it('refuses wrong input at compile time', () => {
    const client = {} as PetsClient;
    const check = () => {
      // @ts-expect-error categoryId is required
      void client.createPet({ name: 'x' });
      // @ts-expect-error the service assigns id
      void client.createPet({ name: 'x', categoryId: 1, id: 2 });
      // @ts-expect-error status is one of three values
      void client.listPets({ status: 'adopted' });
      // @ts-expect-error limit is a number
      void client.listPets({ limit: '10' });
      // @ts-expect-error petId is a number
      void client.getPet('1');
    };
    // Under exactOptionalPropertyTypes, undefined means "left out".
    const maybe = undefined as PetStatus | undefined;
    void [
      client.listPets({ status: maybe, limit: undefined }),
      client.createPet({ name: 'x', categoryId: 1, status: maybe }),
    ];
    expectTypeOf(check).toBeFunction();
  });
});
