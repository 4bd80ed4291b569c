/**
 * The environment for a server a test starts (Redis, Prism, Chromium): the
 * test's own, without a preloaded clock shifter, so that under a moved clock
 * (libfaketime, the run with a moved date) only the SDK's clock moves and the
 * servers start as they do anywhere.
 */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && name !== 'LD_PRELOAD' && !name.startsWith('FAKETIME')) {
      env[name] = value;
    }
  }
  return { ...env, ...extra };
}
