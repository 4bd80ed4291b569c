#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { PLAN_LIMITS, type Plan } from './plans.js';
import { MockServerOptionError, startMockServer } from './server.js';
import { SAMPLE_PETS } from './service.js';

const usage = `Usage: animal-store-mock [--port 4010] [--host 127.0.0.1] [--plan free|pro|business|enterprise] [--api-key KEY ...]

Serves the Animal Store interface from memory on loopback, with CORS, for
tests and demos, seeded with three sample animals. Without --api-key any
bearer token is accepted.`;

function fail(message: string): never {
  console.error(`animal-store-mock: ${message}\n\n${usage}`);
  process.exit(2);
}

const options = {
  port: { type: 'string', default: '4010' },
  host: { type: 'string', default: '127.0.0.1' },
  plan: { type: 'string', default: 'free' },
  'api-key': { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;
let parsed: ReturnType<typeof parseArgs<{ options: typeof options }>>;
const PORT_RANGE = '--port must be an integer from 0 to 65535 (0 picks a free one)';
try {
  parsed = parseArgs({ options });
} catch (error) {
  const { message } = error as Error;
  // `--port -1` reads as an option of its own to parseArgs.
  fail(
    message.includes("'--port") && message.includes('ambiguous')
      ? `${PORT_RANGE}; got a value starting with "-".`
      : message,
  );
}
const { values } = parsed;

if (values.help) {
  console.log(usage);
  process.exit(0);
}
if (!Object.hasOwn(PLAN_LIMITS, values.plan)) fail(`unknown plan ${JSON.stringify(values.plan)}.`);
if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) {
  fail(`${PORT_RANGE}; got ${JSON.stringify(values.port)}.`);
}

const server = await startMockServer({
  port: Number(values.port),
  host: values.host,
  plan: values.plan as Plan,
  apiKeys: values['api-key'],
  seed: SAMPLE_PETS,
}).catch((error: unknown) => {
  if (error instanceof MockServerOptionError) {
    fail(
      error.message.replace(/^(host|port|apiKeys)/, (name) =>
        name === 'apiKeys' ? '--api-key' : `--${name}`,
      ),
    );
  }
  throw error;
});
console.log(
  `Animal Store mock listening: baseUrl ${server.url} (plan ${values.plan}). Ctrl+C stops it.`,
);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
