import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetDeprecationWarnings } from '../src/client.js';
import { PetsClient } from '../src/index.js';
import {
  API_KEY,
  BASE_URL,
  clientWith,
  json,
  rex,
  scriptedFetch,
} from './helpers/scripted-fetch.js';

beforeEach(() => resetDeprecationWarnings());
afterEach(() => resetDeprecationWarnings());

describe('getPet deprecation', () => {
  it('emits one DeprecationWarning with a code, naming the date and the replacement', async () => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const client = clientWith(scriptedFetch().thenAlways(json(rex)).fetch, {
      deprecationWarnings: true,
    });
    await client.getPet(1);
    await client.getPet(1);
    await clientWith(scriptedFetch(json(rex)).fetch, { deprecationWarnings: true }).getPet(1);
    expect(emit).toHaveBeenCalledTimes(1);
    const [message, options] = emit.mock.calls[0] as [string, { type: string; code: string }];
    expect(message).toMatch(/2030-12-05/);
    expect(message).toMatch(/listPets/);
    expect(options).toEqual({
      type: 'DeprecationWarning',
      code: 'ANIMAL_STORE_GET_PET_DEPRECATED',
    });
  });

  it('can be turned off', async () => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    await clientWith(scriptedFetch(json(rex)).fetch, { deprecationWarnings: false }).getPet(1);
    expect(emit).not.toHaveBeenCalled();
  });

  it('is on by default', async () => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const client = new PetsClient({
      apiKey: API_KEY,
      baseUrl: BASE_URL,
      fetch: scriptedFetch(json(rex)).fetch,
    });
    await client.getPet(1);
    expect(emit).toHaveBeenCalledTimes(1);
  });

  it('falls back to console.warn where process.emitWarning does not exist', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    vi.stubGlobal('process', { ...process, emitWarning: undefined });
    try {
      await clientWith(scriptedFetch(json(rex)).fetch, { deprecationWarnings: true }).getPet(1);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/DeprecationWarning.*2030-12-05/));
  });
});
