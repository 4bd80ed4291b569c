import { AnimalStoreError } from './errors.js';

/** Environment variable read when no `apiKey` option is given. */
export const API_KEY_ENV = 'ANIMAL_STORE_API_KEY';

/** An environment variable where `process` exists (Node, Bun, Deno); `undefined` elsewhere or when empty. */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  return env?.[name] || undefined;
}

function fromEnvironment(): string | undefined {
  return readEnv(API_KEY_ENV);
}

function describeBadCharacter(key: string): string | undefined {
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code === 10 || code === 13) return `a line break (CR or LF) at position ${i + 1}`;
    if (code === 32 || code === 9) return `white space at position ${i + 1}`;
    if (code < 32 || code === 127) return `a control character at position ${i + 1}`;
    if (code > 126) return `a non-ASCII character at position ${i + 1}`;
  }
  return undefined;
}

/**
 * The API key from the option, else from `ANIMAL_STORE_API_KEY` where
 * `process` exists. Throws when it is missing or holds characters an HTTP
 * header cannot carry. Messages never include the key.
 */
export function resolveApiKey(option: string | undefined): string {
  const key = option ?? fromEnvironment();
  if (key === undefined || key === '') {
    throw new AnimalStoreError(
      `Missing API key: pass \`apiKey\` to new PetsClient({ apiKey }) or set ${API_KEY_ENV}.`,
    );
  }
  if (typeof key !== 'string') {
    throw new AnimalStoreError(`Invalid API key: \`apiKey\` must be a string, got ${typeof key}.`);
  }
  const bad = describeBadCharacter(key);
  if (bad) {
    throw new AnimalStoreError(
      `Invalid API key: it contains ${bad}, which an HTTP header cannot carry. ` +
        'Copy the key again without surrounding spaces or line breaks.',
    );
  }
  return key;
}
