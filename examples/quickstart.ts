/**
 * The tour: `npm start`. Runs against the embedded loopback mock (no key
 * needed), or against the real service with ANIMAL_STORE_API_KEY set and
 * `--env production|staging` or `--base-url URL`.
 */
import { parseArgs } from 'node:util';
import { type Environment, environments, PetsClient, type RetryInfo } from '@animal-store/sdk';
import { type MockServer, SAMPLE_PETS, startMockServer } from '@animal-store/sdk/mock';

const { values } = parseArgs({
  options: { env: { type: 'string' }, 'base-url': { type: 'string' } },
});
const wantsReal = values.env !== undefined || values['base-url'] !== undefined;
const apiKey = process.env.ANIMAL_STORE_API_KEY;
if (wantsReal && !apiKey) {
  console.error('Set ANIMAL_STORE_API_KEY to run the demo against the real service.');
  process.exit(2);
}
if (values.env !== undefined && !Object.hasOwn(environments, values.env)) {
  console.error(`--env must be production or staging, not ${JSON.stringify(values.env)}.`);
  process.exit(2);
}

const onRetry = (info: RetryInfo) =>
  console.log(
    info.error
      ? `   ↻ ${info.operation}: attempt ${info.attempt} got ${info.error.name}; waiting ${info.delayMs} ms (${info.reason})`
      : `   ⏸ ${info.operation}: held before sending, up to ${info.delayMs} ms (${info.reason})`,
  );

let mock: MockServer | undefined;
let client: PetsClient;
if (wantsReal) {
  client = new PetsClient({
    apiKey,
    onRetry,
    ...(values['base-url']
      ? { baseUrl: values['base-url'] }
      : { environment: values.env as Environment }),
  });
  console.log(`Talking to the REAL service at ${client.baseUrl}`);
} else {
  // A small custom plan (8 requests a minute) and a clock set 57 s into its
  // minute, so the rate-limit part of the tour waits seconds, not a minute.
  const offset = 57_000 - (Date.now() % 60_000);
  mock = await startMockServer({
    plan: 'enterprise',
    limits: { perMinute: 8, perDay: 1000 },
    seed: SAMPLE_PETS,
    now: () => Date.now() + offset,
  });
  client = new PetsClient({ apiKey: 'demo-key', baseUrl: mock.url, onRetry });
  console.log(`Talking to the embedded mock service at ${mock.url} (no key needed)`);
}

try {
  console.log('\n1. listPets()');
  for (const pet of await client.listPets())
    console.log(`   #${pet.id} ${pet.name} (${pet.status ?? 'no status'})`);

  console.log("\n2. listPets({ status: 'available', limit: 5 })");
  console.log(`   ${(await client.listPets({ status: 'available', limit: 5 })).length} available`);

  console.log("\n3. createPet({ name: 'Biscuit', categoryId: 2, status: 'available' })");
  const created = await client.createPet({ name: 'Biscuit', categoryId: 2, status: 'available' });
  console.log(`   created #${created.id} ${created.name}`);

  console.log(
    `\n4. getPet(${created.id}) — deprecated, so Node prints a one-time DeprecationWarning`,
  );
  const same = await client.getPet(created.id);
  console.log(`   got #${same.id} ${same.name}`);

  const rl = client.rateLimit;
  console.log(
    `\n5. client.rateLimit: ${rl ? `${rl.remaining} of ${rl.limit} left, resets ${rl.resetAt.toISOString()}` : 'not reported'}`,
  );

  if (mock) {
    console.log(
      '\n6. Eight calls at once: more than the plan has left, so the service answers 429.',
    );
    console.log(
      '   The client waits out Retry-After (holding its other calls too), then succeeds:',
    );
    const started = Date.now();
    const lists = await Promise.all(Array.from({ length: 8 }, () => client.listPets({ limit: 1 })));
    console.log(
      `   all ${lists.length} calls succeeded after ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const after = client.rateLimit;
    if (after) console.log(`   client.rateLimit: ${after.remaining} of ${after.limit} left`);
  } else {
    console.log('\n6. Skipping the 429 demonstration: it would spend your real quota.');
  }
  console.log('\nDone.');
} finally {
  await mock?.close();
}
