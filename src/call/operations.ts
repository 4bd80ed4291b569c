import type { Client, Middleware } from 'openapi-fetch';
import type { paths } from '../../generated/schema.js';
import type { ValidationIssue } from '../errors.js';
import type { OperationName } from '../observe.js';
import { LIMIT } from '../rules.js';
import {
  type Check,
  checkListPetsParams,
  checkNewPet,
  checkPet,
  checkPetId,
  checkPets,
} from '../validation/fast.js';
import type { Output, SchemaName } from '../validation/verdict.js';

/** What openapi-fetch is given for one attempt besides the operation's own parameters. */
export interface SendInit {
  readonly signal: AbortSignal;
  readonly fetch: (request: Request) => Promise<Response>;
  /** openapi-fetch middleware for this request alone, when the attempt has any. */
  readonly middleware?: Middleware[];
}

/** One operation of the service, as the client runs it. */
export interface Operation<In extends SchemaName, Out extends SchemaName> {
  readonly name: OperationName;
  readonly method: 'GET' | 'POST';
  /** Path template of the spec, for messages. */
  readonly path: string;
  /** May be resent after a 5xx, a timeout or a network failure (a POST could add the animal twice). */
  readonly resend: boolean;
  /** Schema and fast check of the input, and how messages name it. */
  readonly input: In;
  readonly checkInput: Check<Output<In>>;
  readonly inputName: string;
  /** Schema and fast check of a 2xx body. */
  readonly output: Out;
  readonly checkOutput: Check<Output<Out>>;
  /** What an answer must also keep with respect to the request (after the schema). */
  readonly checkAnswer?: (input: Output<In>, output: Output<Out>) => ValidationIssue | undefined;
  /** The request, through openapi-fetch. */
  readonly send: (api: Client<paths>, input: Output<In>, init: SendInit) => Promise<unknown>;
}

/** Any operation of the table. */
export type AnyOperation = (typeof OPERATIONS)[OperationName];

/** Every operation the client offers, in one table. */
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
          message: `the list holds ${pets.length} pets, more than the limit of ${limit} asked for`,
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
