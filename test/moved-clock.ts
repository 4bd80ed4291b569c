// The whole vitest suite again under clocks moved by libfaketime (Debian's
// `faketime`): a year ahead, and past getPet's removal date. A test, fixture
// or example that depends on the calendar date fails here at once, not on the
// day its date goes by (a date that breaks tomorrow breaks a year on too: a
// run a day ahead, dropped to keep CI within its time, caught nothing more). The servers the tests start run on
// the real clock (see test/helpers/server-env.ts). CI must run it; elsewhere
// it is skipped, with a word, when faketime is not installed.
import { spawnSync } from 'node:child_process';

const CLOCKS = ['+365d', '@2030-12-06 12:00:00'];

const found = spawnSync('faketime', ['-f', '+0d', 'true']);
if (found.error || found.status !== 0) {
  const message = 'faketime is not installed (apt-get install faketime): the moved-clock runs';
  if (process.env.CI) {
    console.error(`${message} are required in CI.`);
    process.exit(1);
  }
  console.warn(`${message} are skipped.`);
  process.exit(0);
}

let failed = 0;
let passedTests = 0;
let failedTests = 0;
for (const clock of CLOCKS) {
  const started = Date.now();
  // The Redis store's tests time their leases by Redis, whose clock stays: they
  // run once, in the plain run, and would add minutes to each moved one. Types
  // hold on any date: they are checked once, in the plain run.
  const args = ['-f', clock, 'npx', 'vitest', 'run', '--reporter=dot', '--typecheck.enabled=false'];
  const fleet = [
    'test/redis-fleet.test.ts',
    'test/redis-faults.test.ts',
    'test/redis-quota-store.test.ts',
  ];

  const run = spawnSync('faketime', [...args, ...fleet.flatMap((file) => ['--exclude', file])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  const output = `${run.stdout}${run.stderr}`;
  const summary = /Tests\s+(.*)/.exec(output)?.[1] ?? 'no summary';
  passedTests += Number(/(\d+) passed/.exec(summary)?.[1] ?? 0);
  const ok = run.status === 0;
  // A run that failed with no failing test (a crash, say) counts as one.
  failedTests += Math.max(Number(/(\d+) failed/.exec(summary)?.[1] ?? 0), ok ? 0 : 1);
  if (!ok) {
    failed++;
    console.error(output);
  }
  console.log(
    `moved clock ${clock}: ${ok ? 'PASS' : 'FAIL'} (${summary.trim()}) in ${Math.round((Date.now() - started) / 1000)} s`,
  );
}
console.log(`moved-clock: ${passedTests} passed, ${failedTests} failed`);
process.exit(failed ? 1 : 0);
