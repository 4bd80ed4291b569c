const BRANDS = Symbol.for('@animal-store/sdk/error-brands');

type Branded = { [BRANDS]?: unknown };
type ErrorClass = { brand?: string } | null;

function brandsOf(target: ErrorClass): string[] {
  const brands: string[] = [];
  for (let c = target; c && typeof c.brand === 'string'; c = Object.getPrototypeOf(c)) {
    brands.push(c.brand);
  }
  return brands;
}

/**
 * Base class of everything the SDK throws (except a caller's own abort, which
 * rejects with the signal's reason).
 *
 * `instanceof` works across the ESM and CommonJS builds, even when both are
 * loaded in one process.
 *
 * @example
 * ```ts
 * try { await client.listPets(); }
 * catch (error) { if (error instanceof AnimalStoreError) console.error(error.message); }
 * ```
 */
export class AnimalStoreError extends Error {
  /** Stable identity used by `instanceof` across builds; never renamed by bundlers. */
  static readonly brand: string = 'AnimalStoreError';
  override readonly name: string = 'AnimalStoreError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    Object.defineProperty(this, BRANDS, { value: brandsOf(new.target as ErrorClass) });
  }

  /**
   * What `JSON.stringify(error)` gives: `name`, `message`, every field of the
   * error (`headers` as a plain object) and its `cause` as a
   * string. It never throws.
   */
  toJSON(): Record<string, unknown> {
    const json: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      json[key] = value instanceof Headers ? Object.fromEntries(value) : value;
    }
    const { cause } = this;
    if (cause !== undefined) {
      // An object's own toString could say anything: only an Error's name and
      // message (checked for the key) or a primitive are shown.
      try {
        json.cause =
          cause instanceof Error
            ? `${cause.name}: ${cause.message}`
            : typeof cause === 'object' || typeof cause === 'function'
              ? Object.prototype.toString.call(cause)
              : String(cause);
      } catch {
        json.cause = Object.prototype.toString.call(cause);
      }
    }
    return json;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const brands = (value as Branded | null)?.[BRANDS];
    return Array.isArray(brands) && brands.includes(this.brand);
  }
}
