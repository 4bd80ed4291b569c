type WarningProcess = {
  emitWarning?: (message: string, options: { type: string; code: string }) => void;
};

const warned = new Set<string>();

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
