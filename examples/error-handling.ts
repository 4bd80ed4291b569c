/** Telling failures apart with instanceof. Run: npx tsx examples/error-handling.ts */
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  NotFoundError,
  PetsClient,
  RateLimitError,
  RequestValidationError,
  ResponseValidationError,
} from '@animal-store/sdk';
import { startMockServer } from '@animal-store/sdk/mock';

const mock = await startMockServer({ apiKeys: ['good-key'] });
// A server that was there and is gone: its port now refuses connections.
const gone = await startMockServer();
await gone.close();

async function explain(label: string, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
    console.log(`${label}: ok`);
  } catch (error) {
    if (error instanceof RequestValidationError) {
      console.log(
        `${label}: fix your input (nothing was sent):`,
        error.issues.map((i) => i.message),
      );
    } else if (error instanceof AuthenticationError) {
      console.log(`${label}: check the API key (${error.code})`);
    } else if (error instanceof NotFoundError) {
      console.log(`${label}: no such animal (${error.status})`);
    } else if (error instanceof RateLimitError) {
      console.log(`${label}: slow down, retry in ${error.retryAfterMs ?? '?'} ms`);
    } else if (error instanceof ApiError) {
      console.log(`${label}: the service failed: ${error.status} ${error.code}`);
    } else if (error instanceof ResponseValidationError) {
      console.log(`${label}: the service sent something unexpected`, error.issues);
    } else if (error instanceof ConnectionError) {
      console.log(`${label}: network trouble: ${error.message}`);
    } else {
      throw error;
    }
  }
}

try {
  const client = new PetsClient({
    apiKey: 'good-key',
    baseUrl: mock.url,
    deprecationWarnings: false,
  });
  await explain('limit 500', () => client.listPets({ limit: 500 }));
  await explain('missing animal', () => client.getPet(404_404));
  await explain('wrong key', () =>
    new PetsClient({ apiKey: 'bad-key', baseUrl: mock.url }).listPets(),
  );
  await explain('nobody listening', () =>
    new PetsClient({
      apiKey: 'good-key',
      baseUrl: gone.url,
      maxRetries: 0,
    }).listPets(),
  );
} finally {
  await mock.close();
}
