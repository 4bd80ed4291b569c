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

const holds = new Map<string, number>();
const onRetry = (info: RetryInfo) => {
  if (info.error) {
    console.log(
      `   ↻ ${info.operation}: attempt ${info.attempt} got ${info.error.name}; waiting ${info.delayMs} ms (${info.reason})`,
    );
  } else {
    holds.set(info.reason, (holds.get(info.reason) ?? 0) + 1);
  }
};
// Counts what the service answered, to show that held calls meet no 429.
const statuses: number[] = [];
// The window each answered request was counted in, named by its reset.
const windows: string[] = [];
const counting = async (url: string, init: RequestInit) => {
  const response = await fetch(url, init);
  statuses.push(response.status);
  windows.push(response.headers.get('x-ratelimit-reset') ?? '?');
  return response;
};

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
  // A small custom plan, 5 requests per 3-second window, so that the
  // rate-limit part of the tour waits seconds, not a minute.
  mock = await startMockServer({
    plan: 'enterprise',
    limits: { perMinute: 5, perDay: 1000, windowMs: 3000 },
    seed: SAMPLE_PETS,
  });
  client = new PetsClient({ apiKey: 'demo-key', baseUrl: mock.url, onRetry, fetch: counting });
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
    console.log('\n6. Ten calls at once, on a plan of 5 requests per 3-second window:');
    console.log(
      '   the client sends only what the budget allows and holds the rest until the reset.',
    );
    statuses.length = 0;
    windows.length = 0;
    holds.clear();
    const started = Date.now();
    const lists = await Promise.all(
      Array.from({ length: 10 }, () => client.listPets({ limit: 1 })),
    );
    const limited = statuses.filter((s) => s === 429).length;
    const perWindow = [...new Set(windows)].map((w) => windows.filter((x) => x === w).length);
    console.log(
      `   all ${lists.length} succeeded in ${((Date.now() - started) / 1000).toFixed(1)} s, with ${limited} × 429, sent window by window: ${perWindow.join(' + ')} (never more than 5 in one window).`,
    );
    // onRetry hears of a held call each time the reason it waits for changes:
    // these are notices of waits, not failures.
    const held = [...holds].map(([reason, n]) => `${reason} ${n}`).join(', ');
    console.log(`   (onRetry was told of the waits as their reasons changed: ${held}.)`);

    console.log('\n7. Another program spends the key behind the client’s back:');
    const other = { headers: { authorization: 'Bearer demo-key' } };
    let remaining = 1;
    while (remaining > 0) {
      const response = await fetch(`${mock.url}/pets?limit=1`, other);
      remaining = Number(response.headers.get('x-ratelimit-remaining'));
    }
    console.log(
      '   the window is spent, so the service answers 429 and the client waits out Retry-After:',
    );
    statuses.length = 0;
    await client.listPets({ limit: 1 });
    console.log(`   then it succeeds (the service answered ${statuses.join(', ')})`);
  } else {
    console.log('\n6. Skipping the rate-limit demonstration: it would spend your real quota.');
  }
  console.log('\nDone.');
} finally {
  await mock?.close();
}
