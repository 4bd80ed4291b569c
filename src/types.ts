import type { components, operations } from '../generated/schema.js';

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Availability status of an animal. */
export type PetStatus = components['schemas']['PetStatus'];
/** Body of `createPet`. The service assigns `id`. */
export type NewPet = Simplify<components['schemas']['NewPet']>;
/** An animal. `id` is always a safe integer. */
export type Pet = Simplify<components['schemas']['Pet']>;
/** Query of `listPets`: `limit` (1..100, default 20) and `status`. */
export type ListPetsParams = Simplify<NonNullable<operations['listPets']['parameters']['query']>>;
/** Body of every error response of the service. */
export type ErrorBody = components['schemas']['Error'];
