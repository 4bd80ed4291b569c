// The interface's rules for the values it exchanges, each written once (schemas, checks, mock).

import type { NewPet, PetStatus } from './types.js';

/** Every `PetStatus`, in the spec's order. */
export const PET_STATUSES = [
  'available',
  'pending',
  'sold',
] as const satisfies readonly PetStatus[];

// Fails to compile when the spec gains a status this list lacks.
const covered: Exclude<PetStatus, (typeof PET_STATUSES)[number]> extends never ? true : never =
  true;
void covered;

/** Whether `value` is one of {@link PET_STATUSES}. */
export const isPetStatus = (value: unknown): value is PetStatus =>
  (PET_STATUSES as readonly unknown[]).includes(value);

/** What the interface says of a status that is none of them. */
export const STATUS_MESSAGE = `status must be one of ${PET_STATUSES.map((s) => `'${s}'`).join(', ')}`;

/** `limit` of `listPets`: from `min` to `max`, `default` when left out. */
export const LIMIT = { min: 1, max: 100, default: 20 } as const;

/** What the interface says of a `limit` out of range. */
export const LIMIT_MESSAGE = `limit must be an integer from ${LIMIT.min} to ${LIMIT.max}`;

/** The fields of a `NewPet`; the service assigns `id`. */
export const NEW_PET_FIELDS = [
  'name',
  'categoryId',
  'status',
] as const satisfies readonly (keyof NewPet)[];
