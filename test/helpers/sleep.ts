/** Resolves after `ms` on the clock `setTimeout` runs on (the fake one, where a test fakes it). */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
