/** Requests allowed per minute and per day. */
export interface RateLimits {
  readonly perMinute: number;
  readonly perDay: number;
  /**
   * Length of the short window that `perMinute` counts in, for tests and
   * benchmarks that cannot wait a minute (windows start at multiples of it).
   * @default 60000
   */
  readonly windowMs?: number | undefined;
}

/** The service's plans and their limits, as the service publishes them. */
export type Plan = 'free' | 'pro' | 'business' | 'enterprise';

/** Limits of each plan; Enterprise is custom, so it takes `limits` (these are only its defaults). */
export const PLAN_LIMITS: Readonly<Record<Plan, RateLimits>> = Object.freeze({
  free: Object.freeze({ perMinute: 60, perDay: 1_000 }),
  pro: Object.freeze({ perMinute: 300, perDay: 10_000 }),
  business: Object.freeze({ perMinute: 1_000, perDay: 100_000 }),
  enterprise: Object.freeze({ perMinute: 10_000, perDay: 1_000_000 }),
});
