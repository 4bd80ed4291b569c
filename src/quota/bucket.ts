type NodeCrypto = {
  createHash(algorithm: string): { update(text: string): { digest(encoding: 'hex'): string } };
};
type BuiltinProcess = { getBuiltinModule?: (id: string) => unknown };

const hex = (buffer: ArrayBuffer) =>
  Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, '0')).join('');

/**
 * The name of one key's budget at one base URL: the hex SHA-256 of both, so
 * that no store, log or inspected object ever holds the key itself. Computed
 * at once where the runtime can (Node ≥ 20.16, Bun, Deno), so that the first
 * request does not wait; else with WebCrypto (browsers).
 */
export function bucketName(apiKey: string, baseUrl: string): string | Promise<string> {
  const text = `${baseUrl}\n${apiKey}`;
  const process = (globalThis as { process?: BuiltinProcess }).process;
  const node = process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
  if (node) return node.createHash('sha256').update(text).digest('hex');
  const data = new TextEncoder().encode(text);
  const subtle = globalThis.crypto?.subtle;
  if (subtle) return subtle.digest('SHA-256', data).then(hex);
  // Pages served over plain http have no WebCrypto: a 64-bit FNV-1a keeps the
  // budgets of different keys apart in that page's memory.
  let hash = 0xcbf29ce484222325n;
  for (const byte of data) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return `fnv1a-${hash.toString(16)}`;
}
