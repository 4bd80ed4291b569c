import { AnimalStoreError } from './errors.js';

const API_KEY_ENV = 'ANIMAL_STORE_API_KEY';

/** An environment variable where `process` exists (Node, Bun, Deno); `undefined` elsewhere or when empty. */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  return env?.[name] || undefined;
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

/** The API key from the option, else `ANIMAL_STORE_API_KEY`; checked, never quoted. */
export function resolveApiKey(
  option: string | undefined,
  unknown: () => readonly string[] = () => [],
): string {
  const key = option ?? readEnv(API_KEY_ENV);
  if (key === undefined || key === '') {
    const env = (globalThis as { process?: { env?: unknown } }).process?.env;
    const where = env
      ? `or set ${API_KEY_ENV}`
      : `(this runtime has no process.env to read ${API_KEY_ENV} from: in a Cloudflare Worker, pass env.${API_KEY_ENV})`;
    const names = unknown();
    const meant = names.length
      ? ` Unknown options were given: ${names.join(', ')}.`
      : option === ''
        ? ` An empty apiKey keeps ${API_KEY_ENV} from being read: leave it out.`
        : '';
    throw new AnimalStoreError(
      `Missing API key: pass \`apiKey\` to new PetsClient({ apiKey }) ${where}.${meant}`,
    );
  }
  if (typeof key !== 'string') {
    throw new AnimalStoreError(`Invalid API key: \`apiKey\` must be a string, got ${typeof key}.`);
  }
  const from = option === undefined ? ` (read from ${API_KEY_ENV})` : '';
  if (/^bearer\s/i.test(key)) {
    throw new AnimalStoreError(
      `Invalid API key${from}: it starts with "Bearer ", which the client adds itself. Pass the key alone.`,
    );
  }
  // Past 4 kB, more than a server takes in a header.
  if (key.length > 4096) {
    throw new AnimalStoreError(
      `Invalid API key${from}: it is ${key.length} characters long, more than 4096. Pass the key alone, not the file or text that holds it.`,
    );
  }
  const bad = describeBadCharacter(key);
  if (bad) {
    throw new AnimalStoreError(
      `Invalid API key${from}: it contains ${bad}, which an HTTP header cannot carry. ` +
        'Copy the key again without surrounding spaces or line breaks.',
    );
  }
  return key;
}

type NodeCrypto = {
  createHash(algorithm: string): { update(text: string): { digest(encoding: 'hex'): string } };
};
type BuiltinProcess = { getBuiltinModule?: (id: string) => unknown };

const hex = (buffer: ArrayBuffer) =>
  Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, '0')).join('');

/**
 * The name of one key's budget at one base URL: the hex SHA-256 of both, never the key itself;
 * at once where the runtime can (Node ≥ 20.16, Bun, Deno), else with WebCrypto (browsers).
 */
export function bucketName(apiKey: string, baseUrl: string): string | Promise<string> {
  const text = `${baseUrl}\n${apiKey}`;
  const process = (globalThis as { process?: BuiltinProcess }).process;
  const node = process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
  if (node) return node.createHash('sha256').update(text).digest('hex');
  const data = new TextEncoder().encode(text);
  const subtle = globalThis.crypto?.subtle;
  if (subtle) return subtle.digest('SHA-256', data).then(hex);
  // Pages over plain http have no WebCrypto: a 64-bit FNV-1a keeps keys apart in the page's memory.
  let hash = 0xcbf29ce484222325n;
  for (const byte of data) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return `fnv1a-${hash.toString(16)}`;
}
