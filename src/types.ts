import type { components, operations } from '../generated/schema.js';

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Availability status of an animal. */
export type PetStatus = components['schemas']['PetStatus'];
/**
 * `T` whose optional fields also take `undefined`, which means the same as
 * leaving them out (so `{ status: maybeStatus }` compiles under
 * `exactOptionalPropertyTypes`).
 */
type UndefinedWhereOptional<T> = Simplify<{
  [K in keyof T]: object extends Pick<T, K> ? T[K] | undefined : T[K];
}>;

/** Body of `createPet`: `name`, `categoryId` (a safe integer) and optionally `status`. The service assigns `id`. */
export interface NewPet extends UndefinedWhereOptional<components['schemas']['NewPet']> {}
/** An animal. `id` is always a safe integer. */
export interface Pet extends Simplify<components['schemas']['Pet']> {}
/** Query of `listPets`: `limit` (1..100, default 20) and `status`, each optional. */
export interface ListPetsParams
  extends UndefinedWhereOptional<NonNullable<operations['listPets']['parameters']['query']>> {}
/** Body of every error response of the service. */
export interface ErrorBody extends Simplify<components['schemas']['Error']> {}
