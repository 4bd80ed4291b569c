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

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const brands = (value as Branded | null)?.[BRANDS];
    return Array.isArray(brands) && brands.includes(this.brand);
  }
}
