#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { PLAN_LIMITS, type Plan } from './plans.js';
import { startMockServer } from './server.js';
import { SAMPLE_PETS } from './service.js';

const usage = `Usage: animal-store-mock [--port 4010] [--host 127.0.0.1] [--plan free|pro|business|enterprise] [--api-key KEY ...]

Serves the Animal Store interface from memory on loopback, with CORS, for
tests and demos, seeded with three sample animals. Without --api-key any
bearer token is accepted.`;

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4010' },
    host: { type: 'string', default: '127.0.0.1' },
    plan: { type: 'string', default: 'free' },
    'api-key': { type: 'string', multiple: true },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log(usage);
  process.exit(0);
}
if (!Object.hasOwn(PLAN_LIMITS, values.plan)) {
  console.error(`Unknown plan ${JSON.stringify(values.plan)}.\n\n${usage}`);
  process.exit(2);
}

const server = await startMockServer({
  port: Number(values.port),
  host: values.host,
  plan: values.plan as Plan,
  apiKeys: values['api-key'],
  seed: SAMPLE_PETS,
});
console.log(
  `Animal Store mock listening: baseUrl ${server.url} (plan ${values.plan}). Ctrl+C stops it.`,
);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
