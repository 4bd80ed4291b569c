type WarningProcess = {
  emitWarning?: (message: string, options: { type: string; code: string }) => void;
};

// Shared through globalThis, so that the ESM and CommonJS builds loaded in
// one process warn once between them.
const shared = globalThis as { [key: symbol]: unknown };
const WARNED = Symbol.for('@animal-store/sdk/deprecations-warned@1');
shared[WARNED] ??= new Set<string>();
const warned = shared[WARNED] as Set<string>;

/**
 * Emits a deprecation warning once per process and code: through
 * `process.emitWarning` where it exists (so `--no-deprecation` silences it),
 * else `console.warn`.
 */
export function warnDeprecatedOnce(code: string, message: string): void {
  if (warned.has(code)) return;
  warned.add(code);
  const proc = (globalThis as { process?: WarningProcess }).process;
  if (typeof proc?.emitWarning === 'function') {
    proc.emitWarning(message, { type: 'DeprecationWarning', code });
  } else {
    console.warn(`DeprecationWarning [${code}]: ${message}`);
  }
}

/** Forgets which warnings were shown (tests only). */
export function resetDeprecationWarnings(): void {
  warned.clear();
}
