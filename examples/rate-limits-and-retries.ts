/** Watching back-off decisions. Run: npx tsx examples/rate-limits-and-retries.ts */
import { PetsClient, RateLimitError } from '@animal-store/sdk';
import { startMockServer } from '@animal-store/sdk/mock';

// A plan of 3 requests a day: the fourth call would wait hours, so it fails fast.
const mock = await startMockServer({ plan: 'enterprise', limits: { perMinute: 100, perDay: 3 } });
try {
  const client = new PetsClient({
    apiKey: 'demo',
    baseUrl: mock.url,
    maxRetries: 3,
    maxRetryDelayMs: 10_000,
    logLevel: 'info',
    onRetry: ({ operation, attempt, delayMs, reason }) =>
      console.log(
        `${operation} attempt ${attempt} failed; waiting ${delayMs} ms because of ${reason}`,
      ),
  });
  for (let i = 1; i <= 4; i++) {
    try {
      await client.listPets({ limit: 1 });
      console.log(
        `call ${i}: ok, ${client.rateLimit?.remaining} left until ${client.rateLimit?.resetAt.toISOString()}`,
      );
    } catch (error) {
      if (!(error instanceof RateLimitError)) throw error;
      console.log(`call ${i}: ${error.message}`);
    }
  }
} finally {
  await mock.close();
}
