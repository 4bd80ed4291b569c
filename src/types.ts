import type { components } from '../generated/schema.js';

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Availability status of an animal. */
export type PetStatus = components['schemas']['PetStatus'];
/**
 * Body of `createPet`. The service assigns `id`. Optional fields also take
 * `undefined`, which means the same as leaving them out.
 */
export interface NewPet {
  /** The animal's name. */
  name: string;
  /** Identifier of the category the animal belongs to: a safe integer. Required. */
  categoryId: number;
  /** `'available'`, `'pending'` or `'sold'`. Left out (or `undefined`): not sent. */
  status?: PetStatus | undefined;
}
/** An animal. `id` is always a safe integer. */
export type Pet = Simplify<components['schemas']['Pet']>;
/**
 * Query of `listPets`. Each field also takes `undefined`, which means the same
 * as leaving it out.
 */
export interface ListPetsParams {
  /**
   * Most animals to return: an integer from 1 to 100.
   * @default 20
   */
  limit?: number | undefined;
  /** Only animals with this status: `'available'`, `'pending'` or `'sold'`. Left out: all. */
  status?: PetStatus | undefined;
}
/** Body of every error response of the service. */
export type ErrorBody = components['schemas']['Error'];
