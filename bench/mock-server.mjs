// The built mock service on loopback, in its own process, on a custom plan:
// `node bench/mock-server.mjs LIMIT WINDOW_MS`. Prints its base URL, then
// serves until killed. Any bearer token is accepted, so each run uses a key of
// its own and starts with a budget nobody has spent.
import { startMockServer } from '../dist/mock.js';

const [limit, windowMs] = process.argv.slice(2).map(Number);
const server = await startMockServer({
  plan: 'enterprise',
  limits: { perMinute: limit, perDay: 10_000_000, windowMs },
  seed: [{ name: 'Rex', categoryId: 1, status: 'available' }],
});
console.log(server.url);
