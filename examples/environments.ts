/** Choosing where the client sends requests. Run: npx tsx examples/environments.ts */
import { environments, PetsClient } from '@animal-store/sdk';

const apiKey = 'sk_example';

// Production is the default; staging has the same interface.
const production = new PetsClient({ apiKey });
const staging = new PetsClient({ apiKey, environment: 'staging' });
// Any other address (a proxy, the mock server) overrides the environment.
const local = new PetsClient({ apiKey, baseUrl: 'http://127.0.0.1:4010/v1' });

console.log(environments);
console.log([production, staging, local].map((client) => client.baseUrl));
